"""The model bundle: ``model.json`` + ``weights.npz``, the contract every other package reads.

``weights.npz`` holds ``W`` (k x t) and ``b`` (t,) in original feature units, so a prediction is
``X[:, selected_index] @ W + b`` (multi-label: label on when > its threshold, the optional
``decision`` key of :mod:`~sensorbudget.trainer.bundle.decision`, else 0; multi-class: argmax), plus the
training statistics of the selected features ``x_mean``, ``x_scale``, ``x_min``, ``x_max`` (k,)
and ``loo_path`` (k,). Both files are written deterministically (fixed zip timestamps, sorted
JSON) into a temporary directory that is renamed into place, so a bundle is whole or absent.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import BundleError
from ..tasks import STORED_TASKS
from ..text import brief
from .contents import bundle_contents, plan_extractors, unit_extractors
from .decision import check_decision, decide, probabilities
from .files import (check_folder_output, json_text, npz_bytes, write_atomically,
                    write_folder_atomically)
from .manifest import MANIFEST_FILE, entries, manifest_text
from .schema import STRICT_JSON, check_meta_types

FORMAT = "sensorbudget-bundle"
FORMAT_VERSION = 2
#: Versions :func:`upgrade_bundle` knows: 1 (model.json not covered by a hash) and 2
#: (content_sha256); :func:`load_bundle` reads only bundles with a content_sha256.
READABLE_VERSIONS = (1, 2)
MODEL_FILE = "model.json"
WEIGHTS_FILE = "weights.npz"
BUNDLE_KIND = "bundle"          # the kind named in a bundle folder's manifest
TASKS = STORED_TASKS
REQUIRED_KEYS = (
    "format", "format_version", "created_by", "task", "features", "targets", "selected",
    "selected_index", "lam", "fit_intercept", "standardize", "path", "extractors", "sensors",
    "required_extractors", "required_sensors", "weights_sha256",
)
CONTENT_KEY = "content_sha256"
__all__ = ["Bundle", "FORMAT", "FORMAT_VERSION", "MODEL_FILE", "WEIGHTS_FILE", "TASKS",
           "bundle_contents", "check_bundle", "content_sha256", "load_bundle", "plan_extractors",
           "save_bundle", "unit_extractors", "upgrade_bundle"]
REQUIRED_ARRAYS = ("W", "b", "x_mean", "x_scale", "x_min", "x_max", "loo_path")


def finish_meta(meta: dict, arrays: dict) -> tuple:
    """(final ``model.json`` dict, weights.npz bytes): ``meta`` with the format, its version
    and both hashes, checked against ``arrays`` (what :func:`save_bundle` writes)."""
    blob = npz_bytes(arrays)
    meta = dict(meta, format=FORMAT, format_version=FORMAT_VERSION,
                weights_sha256=hashlib.sha256(blob).hexdigest())
    meta.pop(CONTENT_KEY, None)
    meta[CONTENT_KEY] = content_sha256(meta)
    check_bundle(meta, arrays)
    return meta, blob


def save_bundle(path, meta: dict, arrays: dict) -> dict:
    """Validate and write a bundle; returns the final ``model.json`` dict (with the hash)."""
    meta, blob = finish_meta(meta, arrays)
    write_folder_atomically(Path(path), {MODEL_FILE: json_text(meta).encode(), WEIGHTS_FILE: blob},
                            kind=BUNDLE_KIND, error=BundleError)
    return meta


def check_bundle_output(path) -> None:
    """BundleError now when :func:`save_bundle` would refuse ``path`` (a link, a file, a folder
    that is not exactly an earlier bundle): run it before training."""
    check_folder_output(path, kind=BUNDLE_KIND, error=BundleError)


def content_sha256(meta: dict) -> str:
    """sha256 of the canonical ``model.json`` text without its ``content_sha256`` entry. As
    ``model.json`` holds ``weights_sha256``, this one hash covers both files of the bundle."""
    return hashlib.sha256(json_text({k: v for k, v in meta.items() if k != CONTENT_KEY})
                          .encode()).hexdigest()


@dataclass
class Bundle:
    """A verified bundle: ``meta`` (model.json) and ``arrays`` (weights.npz).

    :meth:`load` reads one (as :func:`load_bundle`, which returns this class), :meth:`save`
    writes it, :meth:`from_contents` makes one from :func:`bundle_contents`' output (the hashes
    filled in, nothing written), :meth:`decide` is the one decision rule."""

    meta: dict
    arrays: dict
    #: the folder it was read from or last saved to (None: only in memory); what simulate's
    #: report.json names, as the command names its BUNDLE_DIR
    path: Path | None = field(default=None, compare=False, repr=False)

    def __repr__(self) -> str:
        return brief("Bundle", task=self.meta.get("task"), targets=len(self.meta["targets"]),
                     selected=list(self.meta["selected"]), lam=self.meta.get("lam"),
                     path=None if self.path is None else str(self.path))

    @classmethod
    def load(cls, path) -> "Bundle":
        """Read and verify a bundle folder (:func:`load_bundle`)."""
        return load_bundle(path)

    @classmethod
    def from_contents(cls, meta: dict, arrays: dict) -> "Bundle":
        """A checked bundle of ``meta`` and ``arrays`` with its format and hashes, as
        :meth:`save` will write it."""
        meta, _ = finish_meta(meta, arrays)
        return cls(meta=meta, arrays=dict(arrays))

    def save(self, path) -> Path:
        """Write the bundle folder ``path`` (model.json, weights.npz, manifest), all or
        nothing; a folder the tool did not write is refused. Returns the path."""
        self.meta = save_bundle(path, self.meta, self.arrays)
        self.path = Path(path)
        return Path(path)

    @staticmethod
    def check_output(path) -> None:
        """BundleError now when :meth:`save` would refuse ``path``."""
        check_bundle_output(path)

    features = property(lambda self: list(self.meta["features"]), doc="candidate names")
    targets = property(lambda self: list(self.meta["targets"]), doc="target (label) names")
    selected = property(lambda self: list(self.meta["selected"]), doc="selected, in order")
    lam = property(lambda self: float(self.meta["lam"]), doc="the ridge parameter")
    window = property(lambda self: self.meta.get("window"), doc="samples (recordings) or None")
    hop = property(lambda self: self.meta.get("hop"), doc="samples (recordings) or None")
    sample_rate_hz = property(lambda self: self.meta.get("sample_rate_hz"), doc="Hz or None")
    required_sensors = property(lambda self: list(self.meta["required_sensors"]),
                                doc="the sensors the selected features read")

    @property
    def thresholds(self) -> np.ndarray:
        """The multi-label decision thresholds (t,), zeros without calibrated ones."""
        from .decision import thresholds

        return thresholds(self.meta)

    @property
    def classes(self) -> list:
        """The class names of a multi-class bundle (else the targets)."""
        return list(self.meta.get("classes") or self.meta["targets"])

    @property
    def kind(self):
        """The :class:`~sensorbudget.trainer.tasks.Task` (binary: two classes)."""
        from ..tasks import Task

        return Task.of(self.task, len(self.classes) if self.task == "multiclass" else None)

    def recording_format(self, given=None):
        """How to read recordings for this bundle: the
        :class:`~sensorbudget.trainer.sensing.streams.StreamFormat` its features were made
        with (model.json ``recording_options``), with the fields ``given`` sets over them."""
        from ..sensing.streams import StreamFormat

        return StreamFormat.from_options(self.meta.get("recording_options"), given)

    def decide(self, scores) -> np.ndarray:
        """The decisions of ``scores`` (n x t): the one rule,
        :func:`~sensorbudget.trainer.bundle.decision.decide` with this bundle's task and
        thresholds."""
        scores = np.asarray(scores)
        width = self.W.shape[1]
        if scores.ndim != 2 or scores.shape[1] != width:
            raise BundleError(f"scores of shape {scores.shape}: this bundle decides on n x "
                              f"{width} scores (one column per "
                              f"{'class' if self.task == 'multiclass' else 'target'})")
        return decide(scores, self.meta)

    @property
    def W(self) -> np.ndarray:
        return self.arrays["W"]

    @property
    def b(self) -> np.ndarray:
        return self.arrays["b"]

    @property
    def selected_index(self) -> np.ndarray:
        return np.asarray(self.meta["selected_index"], dtype=np.intp)

    @property
    def task(self) -> str:
        return self.meta["task"]

    def bundle_sha256(self) -> str:
        """Hash of the whole bundle: sha256 over canonical model.json (it holds the weights
        hash)."""
        return hashlib.sha256(json_text(self.meta).encode()).hexdigest()

    def decision_scores(self, X) -> np.ndarray:
        """Scores ``X[:, selected_index] @ W + b`` from the full candidate matrix, in the
        reference order every exporter reproduces: ``acc = b``, then for each selected feature
        i in selection order ``acc = acc + X[:, s_i] * W[i]`` (separately rounded products
        and sums, no fused multiply-add)."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != len(self.meta["features"]):
            raise BundleError(f"X has shape {X.shape}; the bundle expects "
                              f"{len(self.meta['features'])} feature columns")
        return self.selected_scores(X[:, self.selected_index])

    def selected_scores(self, X_selected) -> np.ndarray:
        """:meth:`decision_scores` from the k selected features only (selection order)."""
        Xs = np.asarray(X_selected, dtype=np.float64)
        if Xs.ndim != 2 or Xs.shape[1] != self.W.shape[0]:
            raise BundleError(f"the selected features have shape {Xs.shape}; the bundle "
                              f"expects {self.W.shape[0]} columns")
        acc = np.broadcast_to(self.b, (Xs.shape[0], self.b.size)).copy()
        for i in range(Xs.shape[1]):
            acc += Xs[:, i, None] * self.W[i]
        return acc

    def predict(self, X, *, selected=False) -> np.ndarray:
        """Predictions of the candidate matrix ``X`` (or, with ``selected``, of the k selected
        features): scores (regression), 0/1 labels (multi-label: score > the bundle's
        ``decision`` threshold of the label, 0 without one) or class index (multi-class)."""
        scores = self.selected_scores(X) if selected else self.decision_scores(X)
        return self.decide(scores)            # the one decision rule (bundle.decision)

    def predict_proba(self, X, *, selected=False):
        """Platt probabilities (n x t) of a multi-label bundle with ``decision.platt``, else
        None."""
        scores = self.selected_scores(X) if selected else self.decision_scores(X)
        return probabilities(scores, self.meta)


def _read_pair(path: Path) -> tuple:
    """(model.json bytes, weights.npz bytes) of one and the same bundle folder.

    Both are read through one open handle of the folder, so a bundle replaced meanwhile (a
    folder exchanged by :func:`~sensorbudget.trainer.bundle.files.write_folder_atomically`) gives the old
    pair or the new one, never a mix; when the folder is replaced during the read, it is read
    again (up to three times)."""
    for _ in range(3):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        except (FileNotFoundError, NotADirectoryError):
            raise BundleError(f"{str(path)!r} is not a bundle directory") from None
        try:
            before = os.fstat(fd).st_ino
            return tuple(_read_at(fd, name) for name in (MODEL_FILE, WEIGHTS_FILE))
        except FileNotFoundError as exc:
            missing = path / exc.filename
            try:
                swapped = os.stat(path).st_ino != before
            except FileNotFoundError:
                swapped = True
            if not swapped:
                raise BundleError(f"{str(missing)!r} is missing; {str(path)!r} is not a bundle "
                                  f"directory") from None
        finally:
            os.close(fd)
    raise BundleError(f"{str(path)!r} kept changing while being read; try again")


def _read_at(dir_fd: int, name: str) -> bytes:
    try:
        fd = os.open(name, os.O_RDONLY, dir_fd=dir_fd)
    except FileNotFoundError as exc:
        exc.filename = name
        raise
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise BundleError(f"{name!r} in the bundle is not a regular file")
        return fh.read()


def _parse(path: Path, text: bytes) -> dict:
    """The model.json dict of a bundle, checked for format and version, without the hash
    checks (:func:`load_bundle` adds them)."""
    mfile = path / MODEL_FILE
    try:
        meta = json.loads(text.decode("utf-8"), **STRICT_JSON)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise BundleError(f"{str(mfile)!r} is not valid JSON: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise BundleError(f"{str(mfile)!r} is not a {FORMAT} (format="
                          f"{meta.get('format') if isinstance(meta, dict) else None!r})")
    version = meta.get("format_version")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise BundleError(f"bundle format_version={version!r} is not supported (this "
                          f"sensorbudget reads versions {', '.join(map(str, READABLE_VERSIONS))})")
    return meta


def _arrays(path: Path, blob: bytes) -> dict:
    try:
        with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, MemoryError) as exc:
        raise BundleError(f"{str(path / WEIGHTS_FILE)!r} is not a readable npz: {exc}") from None


def load_bundle(path) -> Bundle:
    """Read and verify a bundle directory (format, version, both hashes, types, shapes).

    A bundle without ``content_sha256`` (format 1, or the hash removed) is refused: its
    model.json could have been edited unnoticed; :func:`upgrade_bundle` re-hashes one the user
    vouches for."""
    if not isinstance(path, (str, os.PathLike)):
        raise BundleError(f"a bundle is read from its folder's path, not a {type(path).__name__}")
    path = Path(path)
    mfile, wfile = path / MODEL_FILE, path / WEIGHTS_FILE
    text, blob = _read_pair(path)
    meta = _parse(path, text)
    if meta.get("format_version") == 1 or CONTENT_KEY not in meta:
        raise BundleError(f"{str(path)!r} has no content_sha256 (format_version="
                          f"{meta.get('format_version')}), so edits to its model.json would go "
                          f"unnoticed: refused; if you trust it, run 'sensorbudget upgrade "
                          f"{path}' to hash it as it is")
    if meta.get(CONTENT_KEY) != content_sha256(meta):
        raise BundleError(f"{str(mfile)!r} does not match its content_sha256: the bundle was "
                          f"changed after it was written (tampered?)")
    digest = hashlib.sha256(blob).hexdigest()
    if digest != meta.get("weights_sha256"):
        raise BundleError(f"{str(wfile)!r} sha256 {digest[:12]}... does not match model.json "
                          f"weights_sha256 {str(meta.get('weights_sha256'))[:12]}... (tampered?)")
    arrays = _arrays(path, blob)
    check_bundle(meta, arrays)
    return Bundle(meta=meta, arrays=arrays, path=path)


def upgrade_bundle(path) -> dict:
    """Re-hash the bundle folder ``path`` as it is now, on the user's word that it is theirs.

    Both files must parse and agree (:func:`check_bundle`); the folder may hold nothing but
    model.json, weights.npz and a manifest. ``weights_sha256`` and ``content_sha256`` are
    recomputed, ``format_version`` becomes the current one, and the folder is written as
    sensorbudget's own output (with its manifest). Returns {"old_version", "weights_matched",
    "content_matched", "meta"}: what the bundle claimed before (for the message)."""
    path = Path(path)
    text, blob = _read_pair(path)
    extra = [rel for rel, _ in entries(path) if rel not in (MODEL_FILE, WEIGHTS_FILE,
                                                            MANIFEST_FILE)]
    if extra:
        raise BundleError(f"{str(path)!r} holds {extra[0]!r}: a bundle folder holds only "
                          f"{MODEL_FILE} and {WEIGHTS_FILE}; refusing to upgrade it")
    meta, arrays = _parse(path, text), _arrays(path, blob)
    before = {"old_version": meta.get("format_version"),
              "weights_matched": meta.get("weights_sha256") == hashlib.sha256(blob).hexdigest(),
              "content_matched": CONTENT_KEY in meta and meta[CONTENT_KEY] == content_sha256(
                  meta)}
    check_bundle(meta, arrays)
    write_atomically(path / MANIFEST_FILE, manifest_text(path, BUNDLE_KIND).encode())  # adopted
    meta = save_bundle(path, {k: v for k, v in meta.items() if k != "format_version"}, arrays)
    return {**before, "meta": meta}


def check_bundle(meta: dict, arrays: dict) -> None:
    """Consistency of model.json with weights.npz; raises :class:`BundleError`."""
    missing = [k for k in REQUIRED_KEYS if k not in meta]
    if missing:
        raise BundleError(f"model.json lacks the key {missing[0]!r}")
    check_meta_types(meta)
    if meta["task"] not in TASKS:
        raise BundleError(f"task={meta['task']!r} is not one of {TASKS}")
    lacking = [k for k in REQUIRED_ARRAYS if k not in arrays]
    if lacking:
        raise BundleError(f"weights.npz lacks the array {lacking[0]!r}")
    odd = [n for n in REQUIRED_ARRAYS
           if np.asarray(arrays[n]).dtype not in (np.float32, np.float64)]
    if odd:
        raise BundleError(f"weights.npz array {odd[0]!r} has dtype "
                          f"{np.asarray(arrays[odd[0]]).dtype}; expected float32 or float64")
    features, sel = meta["features"], meta["selected_index"]
    k, t = len(sel), len(meta["targets"])
    W, b = arrays["W"], arrays["b"]
    if W.shape != (k, t) or b.shape != (t,):
        raise BundleError(f"W has shape {W.shape} and b {b.shape}; model.json says k={k}, t={t}")
    if not all(isinstance(i, int) and 0 <= i < len(features) for i in sel):
        raise BundleError(f"selected_index {sel} is out of range 0..{len(features) - 1}")
    if [features[i] for i in sel] != meta["selected"]:
        raise BundleError("model.json 'selected' does not match features[selected_index]")
    for name in REQUIRED_ARRAYS[2:]:
        if arrays[name].shape != (k,):
            raise BundleError(f"{name} has shape {arrays[name].shape}; expected ({k},)")
    bad = [n for n in REQUIRED_ARRAYS if not np.isfinite(arrays[n]).all()]
    if bad:
        raise BundleError(f"weights.npz holds NaN or inf values in {bad[0]!r}")
    check_decision(meta)
