"""What a saved artefact is (:func:`kind_of`), for ``load`` (:mod:`sensorbudget.device_sim.api`):
the kind from the folder's manifest (:mod:`sensorbudget.trainer.bundle.manifest`) or, for a
folder without a valid one (an older output), from the one file that marks each kind; a file
by its suffix, a predictions CSV by predict's id columns."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import DeviceError

#: the file that marks a folder of each kind (a folder without a manifest)
MARKERS = {"model.json": "bundle", "results.json": "evaluation report",
           "report.json": "simulation report", "firmware.json": "firmware",
           "c_library.json": "C library"}


def kind_of(path) -> str:
    """The kind of the saved artefact at ``path`` (see the module notes), or DeviceError."""
    from sensorbudget.trainer.bundle.manifest import read_manifest

    if not isinstance(path, (str, os.PathLike)):
        raise DeviceError(f"load takes the path of a saved artefact, not a "
                          f"{type(path).__name__}")
    path = Path(path)
    if path.is_file():
        suffix = path.suffix.lower()
        if suffix == ".csv" and _predictions_header(path):
            return "predictions"
        if suffix == ".npz":
            return "features file"
        if suffix in (".html", ".htm"):
            return "HTML report"
        if suffix == ".onnx":
            return "ONNX model"
        if path.name in MARKERS:
            return MARKERS[path.name]
        raise DeviceError(f"{str(path)!r} is not a file sensorbudget reads back (a feature "
                          f".npz, an HTML report, an .onnx model, or a folder's "
                          f"{', '.join(MARKERS)})")
    if not path.is_dir():
        raise DeviceError(f"{str(path)!r} does not exist")
    manifest = read_manifest(path)
    if manifest is not None:
        return manifest["kind"]
    found = [kind for name, kind in MARKERS.items() if (path / name).is_file()]
    if len(found) != 1:
        raise DeviceError(f"{str(path)!r} holds {'none' if not found else 'more than one'} of "
                          f"{', '.join(MARKERS)}: not a folder sensorbudget wrote")
    return found[0]


def _predictions_header(path: Path) -> bool:
    """Whether the CSV file's first line starts with the id columns predict writes."""
    with open(path, "rb") as fh:
        head = fh.readline(4096)
    return head.startswith((b"row,", b"recording,window_start,"))
