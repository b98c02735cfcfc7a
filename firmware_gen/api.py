"""The typed Python API of the deployable outputs: firmware, the C library, ONNX and the C header.

Each call takes a bundle (a folder path, a loaded :class:`sensorbudget.trainer.bundle.model.Bundle`
or the trainer API's ``Bundle``) and returns a typed object whose ``.save(path)`` writes exactly
the bytes the matching command writes (``sensorbudget firmware``, ``export c-library``,
``export onnx``, ``export c-header``: the CLI calls these and prints)::

    >>> fw = firmware("bundle", target="host", numeric="q15", build=True)   # doctest: +SKIP
    >>> fw.footprint["flash_bytes"], fw.save("fw")                           # doctest: +SKIP

A firmware or library folder read back (:func:`read_firmware`, :func:`read_library`, or
``sensorbudget.load``) is the same typed object; its ``save`` writes the same files again.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from sensorbudget.export.cgen import DEFAULT_NAME
from sensorbudget.trainer.bundle.files import write_atomically, write_folder_atomically
from sensorbudget.trainer.bundle.manifest import MANIFEST_FILE, entries, read_manifest
from sensorbudget.trainer.text import brief

from .errors import FirmwareGenError

FIRMWARE_KIND = "firmware"       # the kind named in a firmware folder's manifest
LIBRARY_KIND = "C library"       # ... and in a C library folder's


def as_bundle(bundle):
    """``(Bundle, folder or None)`` of a bundle folder path or a loaded bundle (the trainer
    API's ``Bundle``: its ``path``, the folder it was read from or saved to, when it has one)."""
    from sensorbudget.trainer.bundle.model import load_bundle

    if isinstance(bundle, (str, os.PathLike)):
        return load_bundle(bundle), Path(bundle)
    if hasattr(bundle, "meta") and hasattr(bundle, "arrays"):
        return bundle, getattr(bundle, "path", None)
    raise FirmwareGenError(f"a bundle must be a folder path or a loaded bundle, not a "
                           f"{type(bundle).__name__}")


def full_scale_roundings(full_scale, channels=None) -> list:
    """``[(channel or "*", given, used)]`` of the full scales in ``full_scale`` ({channel or
    "*": value}) that are not powers of two, each used as the next power of two above it (Q15
    samples are scaled by shifts: :func:`sensorbudget.firmware_gen.plan.full_scale_used`), in
    channel order. With ``channels`` (the firmware's), a "*" that no channel uses is left
    out."""
    from .plan import full_scale_used

    out = []
    for channel, value in sorted((full_scale or {}).items()):
        if channel == "*" and channels is not None and set(channels) <= set(full_scale):
            continue
        used = full_scale_used(value)
        if used != value:
            out.append((channel, value, used))
    return out


def folder_files(folder: Path) -> dict:
    """{relative path: (bytes, mode)} of every regular file the folder's manifest lists."""
    listed = read_manifest(folder)
    out = {}
    for rel, entry in entries(folder):
        if rel == MANIFEST_FILE or not entry.is_file(follow_symlinks=False):
            continue
        if listed is not None and rel not in listed["files"]:
            continue
        out[rel] = (Path(entry.path).read_bytes(), stat.S_IMODE(entry.stat().st_mode))
    return out


def _executable_copier(extra: dict):
    """``then(folder)`` for :func:`write_folder_atomically`: add ``extra`` ({rel: (bytes,
    mode)}); executables keep their execute bits (a built host firmware, the simavr bridge)."""
    def then(folder: Path) -> None:
        for rel, (data, mode) in extra.items():
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            if mode & 0o111:
                os.chmod(path, os.stat(path).st_mode | (mode & 0o111))
    return then


@dataclass
class Firmware:
    """A firmware tree: generated sources and, once built, the binaries and their footprint.

    Attributes
    ----------
    files : dict
        {file name: text} of the generated sources (fixed order).
    manifest : dict
        ``firmware.json`` (target, numeric, plan, artefacts, how to run it).
    plan : FirmwarePlan or None
        What it computes (None for a firmware read back from a folder).
    footprint : dict or None
        Flash and RAM per section (``footprint.json``) after :meth:`build`.
    harness_error : str or None
        Why the simavr bridge of an AVR image was not built (None when it was, or not AVR).
    built : dict
        {file name: (bytes, mode)} of the build's outputs (binaries, ``footprint.json``).
    path : Path or None
        The folder it was saved to or read from.
    bundle : path or Bundle or None
        What it was generated from (None when read back; ``simulate`` replays it).
    """

    files: dict
    manifest: dict
    plan: object = None
    footprint: dict | None = None
    harness_error: str | None = None
    built: dict = field(default_factory=dict)
    path: Path | None = None
    bundle: object = field(default=None, repr=False)

    def __repr__(self) -> str:
        return brief("Firmware", name=self.manifest.get("name"), target=self.target,
                     numeric=self.numeric, files=sorted(self.files), built=sorted(self.built),
                     path=None if self.path is None else str(self.path))

    @property
    def target(self) -> str:
        return self.manifest["target"]

    @property
    def numeric(self) -> str:
        return self.manifest["numeric"]

    @property
    def name(self) -> str:
        return self.manifest["name"]

    @property
    def is_avr(self) -> bool:
        from .targets import get_target

        return get_target(self.target).arch == "avr"

    def build(self) -> dict:
        """Compile in a temporary folder (the generated Makefile); keep the outputs and the
        footprint (also as ``footprint.json``), build the simavr bridge of an AVR image;
        returns the footprint. FirmwareGenError when a toolchain is missing or the image does
        not fit its part."""
        from .build import FOOTPRINT, build, build_simavr_harness

        with tempfile.TemporaryDirectory(prefix="sensorbudget-build-") as tmp:
            folder = Path(tmp) / "firmware"
            folder.mkdir()
            for fname, text in self.files.items():
                (folder / fname).write_bytes(text.encode("ascii"))
            fp = build(folder)
            (folder / FOOTPRINT).write_text(json.dumps(fp, indent=2, sort_keys=True) + "\n",
                                            encoding="ascii")
            harness_error = None
            if self.is_avr:
                try:
                    build_simavr_harness(folder)
                except FirmwareGenError as exc:
                    harness_error = str(exc)
            self.built = {rel: data for rel, data in folder_files(folder).items()
                          if rel not in self.files}
        self.footprint, self.harness_error = fp, harness_error
        return fp

    def save(self, path, *, force: bool = False):
        """Write the firmware folder ``path`` (sources, and the build's outputs when built),
        all or nothing; a folder that is not an earlier firmware is refused, or with ``force``
        moved aside (returned; else None)."""
        moved = write_folder_atomically(
            path, {fname: text.encode("ascii") for fname, text in self.files.items()},
            kind=FIRMWARE_KIND, force=force,
            then=_executable_copier(self.built) if self.built else None)
        self.path = Path(path)
        return moved


def firmware(bundle, *, target: str, numeric: str = "float32", name: str = DEFAULT_NAME,
             full_scale=None, kernel: str = "auto", build: bool = False,
             fft: str = "float32") -> Firmware:
    """The firmware of ``bundle`` for ``target`` (``sensorbudget firmware``).

    Parameters
    ----------
    bundle : path or Bundle
    target : str
        A target of :data:`sensorbudget.firmware_gen.targets.TARGET_NAMES`.
    numeric : {"float32", "q15", "q31"}
    name : str
        Prefix of every generated C symbol.
    full_scale : dict, optional
        {channel or "*": full scale} of the Q15 samples (q15/q31).
    kernel : {"auto", "loop", "unrolled"}
    build : bool
        Compile now (:meth:`Firmware.build`).
    fft : {"float32", "q15"}
        The spectra's transform: "q15" (q15/q31 with spectral features) runs the Q15 FFT,
        cheaper on cores without an FPU but losing the low bits of small signals
        (:func:`sensorbudget.firmware_gen.fft_c.check_fft`).
    """
    from .firmware import generate_firmware

    loaded, _ = as_bundle(bundle)
    fw = generate_firmware(loaded, target=target, numeric=numeric, name=name,
                           full_scale=full_scale, kernel=kernel, fft=fft)
    out = Firmware(files=dict(fw.files), manifest=fw.manifest, plan=fw.plan, bundle=bundle)
    if build:
        out.build()
    return out


def read_firmware(path) -> Firmware:
    """A firmware folder written by :meth:`Firmware.save` (or ``sensorbudget firmware``)."""
    from .build import FOOTPRINT, read_manifest as read_firmware_json
    from .firmware import MANIFEST

    folder = Path(path)
    manifest = read_firmware_json(folder)
    stored = folder_files(folder)
    built_names = {*manifest.get("artifacts", {}).values(), FOOTPRINT, "sbfw_simavr"}
    files = {rel: data.decode("ascii") for rel, (data, _) in stored.items()
             if rel not in built_names}
    built = {rel: item for rel, item in stored.items() if rel in built_names}
    footprint = json.loads(built[FOOTPRINT][0]) if FOOTPRINT in built else None
    if MANIFEST not in files:
        raise FirmwareGenError(f"{str(folder)!r} holds no {MANIFEST}")
    return Firmware(files=files, manifest=manifest, footprint=footprint, built=built,
                    path=folder)


@dataclass
class CLibrary:
    """The model as a C library (``export c-library``): ``files`` ({relative path: text}),
    ``manifest`` (``library.json``-like description: name, numeric, plan, sources), ``plan``
    (None when read back) and ``decision_rule`` (a multi-label bundle's calibrated thresholds'
    rule, None for threshold 0 or another task)."""

    files: dict
    manifest: dict
    plan: object = None
    decision_rule: str | None = None
    path: Path | None = None

    def __repr__(self) -> str:
        return brief("CLibrary", name=self.name, numeric=self.manifest.get("numeric"),
                     files=sorted(self.files), path=None if self.path is None else str(self.path))

    @property
    def name(self) -> str:
        return self.manifest["name"]

    @property
    def task(self) -> str:
        return self.manifest["task"]

    def save(self, path, *, force: bool = False):
        """Write the library folder ``path`` all or nothing (as :meth:`Firmware.save`)."""
        moved = write_folder_atomically(
            path, {rel: text.encode("ascii") for rel, text in self.files.items()},
            kind=LIBRARY_KIND, force=force)
        self.path = Path(path)
        return moved


def library(bundle, *, numeric: str = "float32", name: str = DEFAULT_NAME, full_scale=None,
            kernel: str = "auto", fft: str = "float32") -> CLibrary:
    """The C library of ``bundle`` (``sensorbudget export c-library``;
    :func:`sensorbudget.firmware_gen.library.generate_library`; ``fft`` as for
    :func:`firmware`)."""
    from .library import generate_library

    loaded, _ = as_bundle(bundle)
    lib = generate_library(loaded, numeric=numeric, name=name, full_scale=full_scale,
                           kernel=kernel, fft=fft)
    entry = loaded.meta.get("decision") if lib.plan.task == "multilabel" else None
    return CLibrary(files=dict(lib.files), manifest=lib.manifest, plan=lib.plan,
                    decision_rule=entry["rule"] if entry else None)


def read_library(path) -> CLibrary:
    """A C library folder written by :meth:`CLibrary.save` (or ``export c-library``)."""
    from .library import MANIFEST, MANIFEST_FORMAT

    folder = Path(path)
    files = {rel: data.decode("ascii") for rel, (data, _) in folder_files(folder).items()}
    try:
        manifest = json.loads(files[MANIFEST])
    except (KeyError, ValueError, RecursionError):
        manifest = None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise FirmwareGenError(f"{str(folder)!r} is not a C library written by sensorbudget "
                               f"(no valid {MANIFEST})")
    return CLibrary(files=files, manifest=manifest, path=folder)


@dataclass(frozen=True)
class OnnxModel:
    """An ONNX model of a bundle (``export onnx``): ``data`` (serialised bytes), ``opset``,
    ``dtype``, ``inputs`` ("all" or "selected"), ``width`` (input columns), ``outputs``
    (names, in order)."""

    data: bytes
    opset: int
    dtype: str
    inputs: str
    width: int
    outputs: tuple

    def __repr__(self) -> str:
        return brief("OnnxModel", bytes=len(self.data), opset=self.opset, dtype=self.dtype,
                     inputs=self.inputs, width=self.width, outputs=list(self.outputs))

    def save(self, path) -> None:
        write_atomically(path, self.data)


def _onnx_description(model, data: bytes, dtype: str, inputs: str) -> OnnxModel:
    return OnnxModel(data=data, opset=model.opset_import[0].version, dtype=dtype, inputs=inputs,
                     width=model.graph.input[0].type.tensor_type.shape.dim[1].dim_value,
                     outputs=tuple(out.name for out in model.graph.output))


def read_onnx(path) -> OnnxModel:
    """An ONNX file written by :meth:`OnnxModel.save` (or ``export onnx``): its bytes as they
    are, described from the model (element type, input width, outputs, and ``inputs`` from
    its metadata)."""
    import onnx
    from google.protobuf.message import DecodeError

    data = Path(path).read_bytes()
    try:
        model = onnx.load_model_from_string(data)
        elem = model.graph.input[0].type.tensor_type.elem_type
        inputs = json.loads({p.key: p.value for p in model.metadata_props}["inputs"])
    except (DecodeError, ValueError, IndexError, KeyError) as exc:
        raise FirmwareGenError(f"{str(path)!r} is not an ONNX model written by sensorbudget "
                               f"({type(exc).__name__}: {exc})") from None
    dtype = {onnx.TensorProto.FLOAT: "float32", onnx.TensorProto.DOUBLE: "float64"}.get(elem)
    return _onnx_description(model, data, dtype, inputs)


def onnx_model(bundle, *, inputs: str = "all", dtype: str = "float32",
               opset: int = 13) -> OnnxModel:
    """The bundle as an ONNX model (:func:`sensorbudget.export.onnx_bundle.bundle_to_onnx`)."""
    from sensorbudget.export.onnx_bundle import bundle_to_onnx

    loaded, _ = as_bundle(bundle)
    model = bundle_to_onnx(loaded, inputs=inputs, dtype=dtype, opset=opset)
    return _onnx_description(model, model.SerializeToString(), dtype, inputs)


@dataclass(frozen=True)
class CHeaderFile:
    """The bundle as one C99 header (``export c-header``): ``header`` (export's ``CHeader``:
    text, name, numeric, fixed-point model and error bound), ``n_features``, ``n_targets``."""

    header: object
    n_features: int
    n_targets: int

    def __repr__(self) -> str:
        return brief("CHeaderFile", name=self.header.name, numeric=str(self.header.numeric),
                     n_features=self.n_features, n_targets=self.n_targets)

    @property
    def text(self) -> str:
        return self.header.text

    def save(self, path) -> None:
        write_atomically(path, self.header.text.encode("ascii"))


def c_header(bundle, *, name: str = DEFAULT_NAME, numeric: str = "float32") -> CHeaderFile:
    """The bundle as a C99 header (:func:`sensorbudget.export.c_header.c_header`)."""
    from sensorbudget.export.c_header import c_header as make_header

    loaded, _ = as_bundle(bundle)
    return CHeaderFile(header=make_header(loaded, name=name, numeric=numeric),
                       n_features=len(loaded.meta["selected"]),
                       n_targets=len(loaded.meta["targets"]))
