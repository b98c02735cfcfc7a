"""The golden bundles (issue 28 item 6): a fixed, small set of bundles made from seeded synthetic
recordings (:mod:`tests.firmware_gen.generative`'s 9-channel accelerometer stream) and every C
file the emitters write for them: the C header, the C library, and the firmware for host,
nucleo-f4, arduino-uno and hifive1 (generated, not built).

:func:`emit` returns ``{relative path: text}`` of everything; ``files/`` holds the committed
copy (``make golden`` rewrites it: ``python -m tests.golden.cases``) and
``tests/golden/test_golden.py`` diffs the two, so an emitter change shows up as a C diff
(files close to the host firmware's are stored as their diff from it: :func:`_reduce`).
"""

from __future__ import annotations

import difflib
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tests.firmware_gen import generative as G

FILES = Path(__file__).parent / "files"
#: the golden bundles themselves (``make golden`` retrains them): the emitters are checked on
#: stored bundles, since a retrained weight may differ in its last bit on another machine's BLAS
BUNDLES = Path(__file__).parent / "bundles"
TARGETS = ("host", "nucleo-f4", "arduino-uno", "hifive1")
#: the fixed-point full scale of every channel (mg; a power of two above the stream's range)
FULL_SCALE = {"*": 8192.0}


@dataclass(frozen=True)
class GoldenCase:
    """One golden bundle: its sensors.toml blocks, window, hop, labels, features, numeric."""

    name: str
    window: int
    hop: int
    blocks: tuple
    features: tuple
    numeric: str
    task: str = "regression"      # regression (targets speed, load), multiclass, multilabel
    channels: tuple = G.CHANNELS
    toml: str = ""                # a whole sensors.toml instead of one made of the blocks


#: the multi-rate case's sensors.toml: two of the stream's sensors with candidate rates
MULTIRATE_TOML = """task = "regression"
targets = ["speed", "load"]

[window]
length_s = 0.5
hop_s = 0.25
on_missing = "skip"

[[sensors]]
name = "ankle"
channels = ["ankle_vert", "ankle_horiz_fwd", "ankle_horiz_lateral"]
unit_price = 1.0
sample_rate_hz = 64
rates_hz = [16, 32, 64]
energy_per_reading_j_by_rate = [1e-6, 1e-6, 1e-6]

[[sensors]]
name = "trunk"
channels = ["trunk_vert"]
unit_price = 1.0
sample_rate_hz = 64
rates_hz = [16, 64]
energy_per_reading_j_by_rate = [1e-6, 1e-6]

[[features]]
channels = ["ankle_vert", "ankle_horiz_fwd", "trunk_vert"]
extractors = ["mean", "std", "ptp", "bandpower:1-4"]

[[features]]
group = "ankle_acc"
channels = ["ankle_vert", "ankle_horiz_fwd", "ankle_horiz_lateral"]
extractors = ["mag_max"]
"""

CASES = (
    # the issue's 6-feature bundle: window statistics and a magnitude group (float32 is the
    # multilabel case's: four bundles keep the golden copy near 650 KB)
    GoldenCase("regression_stats_q15", 64, 32, G.ISSUE_TOML_BLOCKS, G.ISSUE_FEATURES, "q15"),
    # spectral + shape (three channels, window 32 / hop 16), Q31
    GoldenCase("regression_spectral_q31", 32, 16,
               ({"channels": ["leg_vert", "leg_horiz_fwd", "trunk_vert"],
                 "extractors": ["bandpower:1-4", "domfreq", "skew", "percentile:90", "std",
                                "entropy", "bandratio:1-3/3-8", "cadence:2-9", "kurtosis",
                                "peaks:0.5", "autocorr:3"]},),
               ("leg_vert.bandpower_1to4", "leg_horiz_fwd.domfreq", "trunk_vert.skew",
                "leg_vert.percentile_90", "trunk_vert.std", "leg_horiz_fwd.entropy",
                "trunk_vert.bandratio_1to3_over_3to8", "leg_vert.cadence_2to9",
                "leg_horiz_fwd.kurtosis", "trunk_vert.peaks_0_5", "leg_vert.autocorr_3"), "q31"),
    # multiclass: shape + spectral + magnitude group + correlation, Q15
    GoldenCase("multiclass_mixed_q15", 16, 8,
               ({"channels": ["ankle_vert", "ankle_horiz_fwd"],
                 "extractors": ["mean", "rms", "centroid", "slope", "percentile:50", "mad",
                                "zcr"]},
                {"group": "pair", "channels": ["ankle_vert", "trunk_vert"], "extractors": ["corr"]},
                {"group": "ankle_acc", "channels": ["ankle_vert", "ankle_horiz_fwd",
                                                    "ankle_horiz_lateral"],
                 "extractors": ["mag_std", "mag_max"]}),
               ("ankle_vert.mean", "ankle_horiz_fwd.rms", "ankle_vert.centroid",
                "ankle_horiz_fwd.slope", "ankle_acc.mag_std", "ankle_acc.mag_max",
                "ankle_horiz_fwd.percentile_50", "ankle_vert.mad", "ankle_horiz_fwd.zcr",
                "pair.corr"),
               "q15", task="multiclass"),
    # multi-rate (issue 30): ankle pushed at 64 Hz (features at 64 and 16 Hz), trunk at 16 Hz
    # (the host keeps 1 sample in 4), windows of 0.5 s every 0.25 s; three single-rate groups
    # and the unit, Q15 (the library's group streams are stored as diffs from the firmware's)
    GoldenCase("multirate_q15", 32, 16, (),
               ("ankle_vert@64.mean", "ankle_horiz_fwd@16.ptp", "ankle_acc@16.mag_max",
                "trunk_vert@16.std"), "q15",
               toml=MULTIRATE_TOML),
    # multilabel: preprocessing (jerk) and window statistics, float32
    GoldenCase("multilabel_jerk_f32", 12, 12,
               ({"channels": ["trunk_vert", "trunk_horiz_lateral"],
                 "extractors": ["max", "ptp", "zcr", "mad"]},
                {"channels": ["trunk_vert"], "preprocess": "jerk",
                 "extractors": ["energy", "mad"]},
                {"channels": ["trunk_horiz_lateral"], "preprocess": "highpass:0.9",
                 "extractors": ["min", "last"]}),
               None, "float32", task="multilabel"),
)


def _labels(folder: Path, task: str) -> None:
    """Rewrite the recordings' index.csv with categorical labels for a classification task."""
    index = folder / "index.csv"
    rows = index.read_text().splitlines()
    out = ["file,activity" if task == "multiclass" else "file,gait,terrain"]
    for i, row in enumerate(rows[1:]):
        name = row.split(",")[0]
        gait = ("sit", "walk", "run")[i % 3]
        out.append(f"{name},{gait}" if task == "multiclass"
                   else f"{name},{gait},{('flat', 'hill')[(i // 2) % 2]}")
    index.write_text("\n".join(out) + "\n")


def _toml(case: GoldenCase) -> str:
    if case.toml:
        return case.toml
    text = G.sensors_toml(case.channels, case.window, case.hop, case.blocks,
                          targets=("speed", "load"))
    if case.task == "regression":
        return text
    head = ('task = "multiclass"\ntargets = ["activity"]' if case.task == "multiclass"
            else 'task = "multilabel"\ntargets = ["gait", "terrain"]')
    return text.replace('task = "regression"\ntargets = ["speed", "load"]', head)


def bundle(case: GoldenCase, work: Path):
    """The bundle of ``case`` (deterministic: seeded recordings, greedy RLS with lam 1 on its
    features, or up to 12 of all the candidates)."""
    from sensorbudget.trainer.sensing.feature_set import load_feature_set
    from tests.firmware_gen.conftest import train

    recordings = G.write_recordings(work / "recordings", 2026, n_recordings=6, n=300)
    if case.task != "regression":
        _labels(recordings, case.task)
    toml = work / "sensors.toml"
    toml.write_text(_toml(case))
    fs = load_feature_set(recordings, toml)
    names = list(fs.feature_names)
    columns = list(case.features) if case.features else names
    return train(fs, work / "bundle", min(len(columns), 12), columns)


def _verbatim() -> dict:
    """{text: repository path} of the files the firmware copies unchanged (the templates
    folder, PROTOCOL.md): not emitted, so not golden."""
    import sensorbudget.firmware_gen as fg

    root = Path(fg.__file__).parent
    paths = [*sorted((root / "templates").iterdir()), root / "PROTOCOL.md"]
    return {p.read_text(): f"firmware_gen/{p.relative_to(root).as_posix()}"
            for p in paths if p.is_file()}


def _base_of(rel: str) -> tuple:
    """(path, renamed) of the file another output's ``rel`` is closest to: a board's file of
    the same name in the host firmware; a later case's host file, the first case's; for the
    library's ``src/sbmodel_model_X`` / ``src/sbmodel_model.h`` the host firmware's
    ``sbmodel_X`` / the C header with the symbol prefix renamed to the library's
    (``renamed``); for a multi-rate library's ``src/sbmodel_g<i>_X`` the firmware's group
    file of the same name; ("", False) for none."""
    case, folder, name = rel.split("/", 2)
    if folder.startswith("firmware-") and folder != "firmware-host":
        return f"{case}/firmware-host/{name}", False
    if folder == "firmware-host" and case != CASES[0].name:     # main.c is mostly the same
        return f"{CASES[0].name}/firmware-host/{name}", False
    if folder == "c-library" and name.startswith("src/sbmodel_g"):     # multi-rate groups
        return f"{case}/firmware-host/{name[len('src/'):]}", False
    if folder == "c-library" and name == "src/sbmodel_model.h":
        return f"{case}/c-header/sbmodel.h", True
    if folder == "c-library" and name.startswith("src/sbmodel_model_"):
        return f"{case}/firmware-host/sbmodel_{name[len('src/sbmodel_model_'):]}", True
    return "", False


def _renamed(text: str) -> str:
    """``text`` with the firmware's symbol prefix sbmodel_ as the library's sbmodel_model_
    (a multi-rate library's groups keep theirs: sbmodel_g<i>)."""
    text = text.replace("sbmodel", "sbmodel_model").replace("SBMODEL", "SBMODEL_MODEL")
    return text.replace("sbmodel_model_g", "sbmodel_g").replace("SBMODEL_MODEL_G", "SBMODEL_G")


def _reduce(emitted: dict) -> dict:
    """``emitted`` without repeats: a verbatim template copy, or a file equal to one stored
    before it in the same case (the firmware's header is the C header, most targets share
    the host's stream code), is named in its folder's ``_copies.txt`` instead; a file close to
    its host-firmware counterpart (:func:`_base_of`: a board's main.c, the library's stream
    code with its prefix renamed) is stored as ``<file>.diff``, the unified diff from that
    counterpart. Either way a
    change of any emitted byte changes the stored set."""
    verbatim, out, copies, seen = _verbatim(), {}, {}, {}
    for rel, text in emitted.items():
        case, folder = rel.split("/")[0], rel.rsplit("/", 1)[0]
        source = verbatim.get(text) or seen.get((case, text))
        if source is not None:
            copies.setdefault(folder, []).append(f"{rel[len(folder) + 1:]} = {source}")
            continue
        seen[(case, text)] = rel
        path, renamed = _base_of(rel)
        base = emitted.get(path)
        if base is not None:
            base, path = (_renamed(base), f"{path} (prefix renamed)") if renamed else (base, path)
            diff = "".join(difflib.unified_diff(base.splitlines(True), text.splitlines(True),
                                                path, rel, n=1))
            if len(diff) < len(text) // 2:
                out[rel + ".diff"] = diff
                continue
        out[rel] = text
    for folder, lines in copies.items():
        out[f"{folder}/_copies.txt"] = "\n".join(lines) + "\n"
    return out


def retrain(cases=CASES, folder: Path = BUNDLES) -> None:
    """Train every case's bundle again and store it in ``folder`` (created by this script)."""
    if folder.exists():
        shutil.rmtree(folder)
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            shutil.copytree(bundle(case, Path(tmp) / case.name).path, folder / case.name)


def emit(cases=CASES) -> dict:
    """{case/output/file: text} of every emitted file of every golden case's stored bundle
    (repeats named in ``_copies.txt``: :func:`_reduce`); a target that refuses the bundle gives
    ``case/firmware-<target>/REFUSED.txt`` with the message."""
    from sensorbudget.export.c_header import c_header
    from sensorbudget.firmware_gen import FirmwareGenError, generate_firmware
    from sensorbudget.firmware_gen.library import generate_library
    from sensorbudget.trainer.bundle.model import load_bundle

    out = {}
    for case in cases:
        loaded = load_bundle(BUNDLES / case.name)
        scale = None if case.numeric == "float32" else FULL_SCALE
        out[f"{case.name}/c-header/sbmodel.h"] = c_header(loaded, numeric=case.numeric).text
        lib = generate_library(loaded, numeric=case.numeric, full_scale=scale)
        out.update({f"{case.name}/c-library/{k}": v for k, v in lib.files.items()})
        for target in TARGETS:
            key = f"{case.name}/firmware-{target}"
            try:
                fw = generate_firmware(loaded, target=target, numeric=case.numeric,
                                       full_scale=scale)
            except FirmwareGenError as exc:
                out[f"{key}/REFUSED.txt"] = f"{exc}\n"
                continue
            out.update({f"{key}/{k}": v for k, v in fw.files.items()})
    return _reduce(out)


def write(files: dict, folder: Path = FILES) -> None:
    """Replace ``folder`` (the golden copy, created by this script only) by ``files``."""
    if folder.exists():
        shutil.rmtree(folder)
    for rel, text in sorted(files.items()):
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("ascii"))


def read(folder: Path = FILES) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes().decode("ascii")
            for p in sorted(folder.rglob("*")) if p.is_file()}


if __name__ == "__main__":
    retrain()
    files = emit()
    write(files)
    print(f"golden: {len(files)} files, {sum(len(t) for t in files.values())} bytes in {FILES}",
          file=sys.stderr)
