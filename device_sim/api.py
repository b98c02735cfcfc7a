"""The typed Python API of the device side: simulate, the HTML report, and ``load`` of any saved
artefact.

>>> import sensorbudget as sb                                              # doctest: +SKIP
>>> sim = sb.simulate("bundle", "recordings.csv", backend="unicorn-m4f", board="nucleo-f4")
>>> sim.mismatches, sim.accuracy["device"], sim.save("sim")     # 'simulate --report sim'
>>> sb.report(["bundle", "sim"], title="Gait").save("report.html")      # 'sensorbudget report'
>>> sb.load("sim").report["energy"]["battery_life_days"]

:func:`simulate` returns a :class:`Simulation` whose ``save(folder)`` writes the simulation
report the command writes (report.json, summary.md, the plots); :func:`report` returns a
:class:`Report` whose ``save(file)`` writes the page; :func:`compare` a :class:`Comparison`;
:func:`load` reads any folder or file the project writes back into its typed object.

The kind comes from the folder's manifest (:mod:`sensorbudget.trainer.bundle.manifest`: bundle,
evaluation report, simulation report, firmware, C library) or, for a folder without a valid
one (an older output), from the one file that marks each kind (model.json, results.json,
report.json, firmware.json, c_library.json); a file is a feature NPZ (``.npz``), an HTML
report (``.html``), an ONNX model (``.onnx``), predictions (a ``.csv`` whose header starts
with predict's id columns, ``row`` or ``recording,window_start``) or one of those marker files
(its folder is read).

=================  ==========================================================
kind               typed object
=================  ==========================================================
bundle             :class:`sensorbudget.trainer.api.Bundle`
features file      :class:`sensorbudget.trainer.api.Dataset`
evaluation report  :class:`sensorbudget.trainer.api.Evaluation`
simulation report  :class:`sensorbudget.device_sim.api.Simulation`
firmware           :class:`sensorbudget.firmware_gen.api.Firmware`
C library          :class:`sensorbudget.firmware_gen.api.CLibrary`
HTML report        :class:`sensorbudget.device_sim.api.Report`
ONNX model         :class:`sensorbudget.firmware_gen.api.OnnxModel`
predictions        :class:`sensorbudget.trainer.api.Predictions`
=================  ==========================================================
"""

from __future__ import annotations

import html
import inspect
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from sensorbudget.trainer.text import brief

from .errors import DeviceError
from .kinds import MARKERS, kind_of

DEFAULT_TITLE = "sensorbudget report"
_TITLE = re.compile(r"<title>(.*?)</title>", re.S)


@dataclass
class Simulation:
    """One replay of recordings through a model on a backend.

    Attributes
    ----------
    report : dict
        What ``report.json`` holds (format ``sensorbudget-sim-report``; the fields:
        :mod:`sensorbudget.device_sim.report`).
    result : ReplayResult or None
        Every prediction of the replay (None for a simulation read back from a folder).
    model : ReferenceModel or None
        The reference the device was checked against (None when read back).
    stored : dict
        {file name: bytes} of a simulation read back (what :meth:`save` writes again).
    """

    report: dict
    result: object = None
    model: object = None
    stored: dict = field(default_factory=dict)
    path: Path | None = None

    backend = property(lambda self: self.report["backend"])
    numeric = property(lambda self: self.report["numeric"])
    predictions = property(lambda self: self.report["predictions"])
    mismatches = property(lambda self: self.report["mismatches"])
    accuracy = property(lambda self: self.report.get("accuracy") or {})
    cost = property(lambda self: self.report["cost"])
    energy = property(lambda self: self.report["energy"])
    #: the board whose clock and power cost the compute (``simulate --board``)
    board = property(lambda self: self.report["profile"]["name"])

    def __repr__(self) -> str:
        return brief("Simulation", backend=self.backend, numeric=self.numeric,
                     predictions=self.predictions, mismatches=self.mismatches,
                     lost=self.report.get("lost"), path=None if self.path is None else str(self.path))

    def summary(self) -> str:
        """summary.md: the Markdown summary."""
        from .report_text import summary_markdown

        return summary_markdown(self.report)

    def stack_line(self) -> str:
        """The firmware's stack high-water mark against its board's reserve, as one line."""
        from .report_text import stack_line

        return stack_line(self.report)

    def accuracy_lines(self) -> list:
        """The device's measures against the recordings' targets, as terminal lines."""
        from .report_text import accuracy_text

        return accuracy_text(self.report)

    def save(self, path) -> Path:
        """Write the simulation report folder ``path`` (report.json, summary.md and, with
        matplotlib, the plots), all or nothing; a folder the tool did not write is refused."""
        from sensorbudget.trainer.bundle.files import write_folder_atomically

        from .report import KIND, write_report

        if self.stored:
            write_folder_atomically(path, dict(self.stored), kind=KIND)
        else:
            write_report(path, self.report, self.result, self.model)
        self.path = Path(path)
        return self.path


def check_simulation_output(path) -> None:
    """The error :meth:`Simulation.save` would raise for ``path`` (a link, a file, a folder
    that is not an earlier simulation report), now: a command runs it before the replay."""
    from sensorbudget.trainer.bundle.files import check_folder_output

    from .report import KIND

    check_folder_output(path, kind=KIND)


def _source(bundle_or_firmware, numeric, full_scale, board):
    """(bundle, numeric, full_scale, board) of a bundle, or of the API's Firmware: its
    bundle, arithmetic, full scales and target board (given values must agree)."""
    from sensorbudget.firmware_gen.api import Firmware

    if not isinstance(bundle_or_firmware, Firmware):
        return bundle_or_firmware, numeric or "float32", full_scale, board
    fw = bundle_or_firmware
    if fw.bundle is None:
        raise DeviceError(f"the firmware {str(fw.path)!r} was read back from a folder and "
                          f"does not hold its bundle: simulate the bundle (its sha256 "
                          f"{fw.manifest['bundle_sha256'][:12]}...) instead")
    if numeric is not None and numeric != fw.numeric:
        raise DeviceError(f"numeric={numeric!r} differs from the firmware's {fw.numeric!r}")
    if full_scale is None and fw.plan is not None and fw.plan.full_scale is not None:
        full_scale = dict(zip(fw.plan.channels, fw.plan.full_scale))
    return fw.bundle, fw.numeric, full_scale, board or fw.target


def _check_image(bundle_or_firmware, backend) -> None:
    """DeviceError when ``backend`` measures an image whose core is not the API Firmware's
    target's (``simavr`` replays an AVR image, not a nucleo-f4 firmware); the python and serial
    backends and ``best`` replay no image of their own choosing."""
    from sensorbudget.firmware_gen.api import Firmware
    from sensorbudget.firmware_gen.boards import get_board, measurers

    found = measurers().get(backend)
    if not isinstance(bundle_or_firmware, Firmware) or found is None:
        return
    image, own = found[0], get_board(bundle_or_firmware.target)
    if image.ops != own.ops:
        same = [name for name, (b, _) in measurers().items() if b.ops == own.ops]
        raise DeviceError(f"backend={backend!r} runs the {image.name} image ({image.cpu}), not "
                          f"this {own.name} firmware's core ({own.cpu}); measure it with "
                          f"{', '.join(same) or 'python'}, or simulate the bundle")


def simulate(bundle_or_firmware, recordings, *, backend: str = "python", board=None,
             numeric=None, rate=None, battery_wh=None, workdir=None, timeout=None,
             retries: int = 4, full_scale=None, profile=None, bench: bool = True,
             progress=None, fft=None) -> Simulation:
    """Replay ``recordings`` (a file or folder of recordings) through a model on ``backend``
    (``sensorbudget simulate``; :func:`sensorbudget.device_sim.simulate.simulate`).

    Parameters
    ----------
    bundle_or_firmware : path, Bundle or Firmware
        A bundle, or a :class:`sensorbudget.firmware_gen.api.Firmware` made by
        ``firmware(...)``: its bundle, numeric, full scales and (as ``board``) its target.
    backend : str
        python, host, qemu-m4f, ..., ``serial:URL`` or best.
    board : str, optional
        The board whose clock and power cost the measured compute (default: the image's).
    numeric : {"float32", "q15", "q31"}, optional
        Default float32 (a firmware's own).
    battery_wh : float, optional
        Battery energy for the battery-life estimate (default 3.7 Wh: 1000 mAh at 3.7 V).
    fft : {"float32", "q15"}, optional
        The spectra's transform (q15/q31): default float32, or a firmware's own.
    """
    from sensorbudget.firmware_gen.api import as_bundle

    from .simulate import DEFAULT_BATTERY_WH, firmware_fft, reference_model
    from .simulate import simulate as run

    if not isinstance(recordings, (str, os.PathLike)):
        raise DeviceError(f"recordings must be the path of a recordings file or folder, not a "
                          f"{type(recordings).__name__}")
    _check_image(bundle_or_firmware, backend)
    bundle, numeric, full_scale, board = _source(bundle_or_firmware, numeric, full_scale, board)
    fft = firmware_fft(bundle_or_firmware, fft)
    loaded, where = as_bundle(bundle)
    if where is not None and getattr(loaded, "path", None) is None:
        loaded.path = Path(where)          # read once; the report names its folder
    options = {}
    if board is not None:
        if "board" not in inspect.signature(run).parameters:
            raise DeviceError(f"board={board!r}: costing on a board other than the "
                              f"backend's is not available in this version")
        options["board"] = board
    report, result = run(loaded, recordings, backend=backend,
                         numeric=numeric, rate=rate,
                         battery_wh=DEFAULT_BATTERY_WH if battery_wh is None else battery_wh,
                         workdir=workdir, bench=bench, timeout=timeout, retries=retries,
                         full_scale=full_scale, profile=profile, progress=progress,
                         fft=fft, **options)
    model = reference_model(loaded, numeric, full_scale=full_scale, fft=fft)   # the timeline
    return Simulation(report=report, result=result, model=model)


@dataclass
class Report:
    """The interactive HTML page of runs (``sensorbudget report``): ``html`` (the page),
    ``title`` and ``runs`` (the folders it shows)."""

    html: str
    title: str = DEFAULT_TITLE
    runs: tuple = ()
    path: Path | None = None

    def __repr__(self) -> str:
        return brief("Report", title=self.title, runs=[str(r) for r in self.runs],
                     bytes=len(self.html.encode("utf-8")),
                     path=None if self.path is None else str(self.path))

    def save(self, path) -> Path:
        """Write the page to the file ``path`` atomically (a directory, device node, FIFO or
        link is refused)."""
        from sensorbudget.trainer.bundle.files import write_atomically

        check_report_output(path)
        write_atomically(path, self.html.encode("utf-8"))
        self.path = Path(path)
        return self.path


def check_report_output(path) -> None:
    """DeviceError unless the page can be written to ``path``: plotly installed, the target
    not a directory, device node, FIFO or link. Cheap: a command runs it before long work."""
    from sensorbudget.trainer.bundle.files import check_file_target

    if path is not None:
        check_file_target(path)
    try:
        import plotly  # noqa: F401
    except ImportError:
        raise DeviceError("the HTML report needs plotly: pip install 'sensorbudget[report]'") \
            from None


def _run_path(run) -> Path:
    if isinstance(run, (str, os.PathLike)):
        return Path(run)
    where = getattr(run, "path", None)
    if where is None:
        raise DeviceError(f"a {type(run).__name__} that was not saved has no folder to "
                          f"report: save it first, or pass its folder")
    return Path(where)


def report(runs, *, title: str = DEFAULT_TITLE, evaluations=None) -> Report:
    """The HTML report of ``runs``: folders (bundles, evaluation and simulation reports, built
    firmware), saved typed objects, or evaluations not written to disk (the trainer API's
    ``Evaluation``, named by its title: "evaluation of feats.npz" for "Evaluation of
    feats.npz"), plus ``evaluations`` ({name: results.json dictionary}); needs plotly
    (sensorbudget[report])."""
    from .html import report_html

    check_report_output(None)
    in_memory = dict(evaluations or {})
    paths = []
    for run in runs:
        if getattr(run, "path", None) is None and callable(getattr(run, "to_dict", None)):
            name = str(getattr(run, "title", None) or "Evaluation")
            in_memory[name[:1].lower() + name[1:]] = run.to_dict()    # as evaluate --html
        else:
            paths.append(_run_path(run))
    return Report(html=report_html(paths, title, evaluations=in_memory or None), title=title,
                  runs=tuple(paths))


@dataclass(frozen=True)
class Comparison:
    """Two simulations (or bundles' estimates) side by side (``sensorbudget compare``):
    ``rows`` ([(metric, value A, value B)]) and ``names``."""

    rows: list
    names: tuple

    def __repr__(self) -> str:
        return brief("Comparison", names=list(self.names), rows=len(self.rows))

    def table(self, markdown: bool = False) -> str:
        from .compare import format_table

        return format_table(self.rows, names=self.names, markdown=markdown)

    def save(self, path, *, markdown: bool = False) -> None:
        """Write the table (plain or Markdown) to ``path``, as ``compare -o`` does."""
        from sensorbudget.trainer.bundle.files import write_atomically

        write_atomically(path, (self.table(markdown) + "\n").encode())


def compare(side_a, side_b) -> Comparison:
    """Compare two simulation report folders (or bundle folders: their cost estimates)."""
    from .compare import compare_rows, load_side

    return Comparison(rows=compare_rows(load_side(side_a), load_side(side_b)),
                      names=(str(side_a), str(side_b)))


def calibrate(sensors_toml, reports, *, allow_estimated: bool = False):
    """``sensors_toml`` with the per-extractor compute costs measured in ``reports``
    (simulation report folders, or saved Simulations) merged in (``sensorbudget calibrate``):
    a :class:`~sensorbudget.device_sim.calibrate.Calibration`, whose ``save(path=None)``
    writes it (by default in place of the sensors file)."""
    from .calibrate import calibration

    return calibration(sensors_toml, [_run_path(r) for r in reports], allow_estimated)


def load(path):
    """The typed object of the saved artefact at ``path`` (see the module notes)."""
    from sensorbudget.firmware_gen.api import read_firmware, read_library, read_onnx
    from sensorbudget.trainer import api as trainer_api

    kind = kind_of(path)
    path = Path(path)
    folder = path.parent if path.is_file() and path.name in MARKERS else path
    readers = {"bundle": trainer_api.Bundle.load, "evaluation report": trainer_api.Evaluation.load,
               "simulation report": read_simulation, "firmware": read_firmware,
               "C library": read_library, "features file": trainer_api.Dataset.load,
               "HTML report": read_report, "ONNX model": read_onnx,
               "predictions": trainer_api.Predictions.load}
    if kind not in readers:
        raise DeviceError(f"{str(path)!r} is a sensorbudget {kind}, which load does not read")
    return readers[kind](folder)


def read_simulation(path):
    """A simulation report folder (report.json checked: :func:`~.report.load_report`)."""
    from sensorbudget.firmware_gen.api import folder_files

    from .report import load_report

    folder = Path(path)
    report = load_report(folder)
    stored = {rel: data for rel, (data, _) in folder_files(folder).items()}
    return Simulation(report=report, stored=stored, path=folder)


def read_report(path):
    """An HTML report file written by ``sensorbudget report`` (or ``Report.save``)."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DeviceError(f"{str(path)!r} is not a readable HTML report: {exc}") from None
    title = _TITLE.search(text)
    if title is None or "plotly" not in text.lower():
        raise DeviceError(f"{str(path)!r} is not an HTML report written by sensorbudget")
    return Report(html=text, title=html.unescape(title.group(1)), path=path)


__all__ = ["Simulation", "simulate", "Report", "report", "Comparison", "compare", "calibrate",
           "load", "check_report_output", "check_simulation_output", "DEFAULT_TITLE"]
