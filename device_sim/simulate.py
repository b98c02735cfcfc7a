"""One call from a bundle and recordings to a replay result and its report."""

from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path

from sensorbudget.firmware_gen.api import as_bundle
from sensorbudget.trainer.sensing.recordings import load_recordings
from sensorbudget.trainer.sensing.streams import StreamFormat

from .backends import best_backend, make_backend
from .errors import DeviceError
from .multirate import MultiRateReplayer, make_model
from .reference import ReferenceModel
from .replay import Replayer
from .report import build_report, write_report

DEFAULT_BATTERY_WH = 3.7    # a 1000 mAh, 3.7 V lithium-polymer cell
#: BENCH work per part, in the device's unit: enough repetitions that QEMU's 40-instruction SysTick
#: resolution is 1e-5 of the total, few enough to finish in seconds on simavr.
BENCH_BUDGET = {"instructions": 4e6, "cycles": 4e6, "nanoseconds": 5e7}
MAX_REPS = 100_000


def _nice(n: float) -> int:
    """Largest 1, 2 or 5 times a power of ten <= n (so that reruns pick the same count)."""
    scale = 10 ** int(math.floor(math.log10(n)))
    return int(max(m for m in (1, 2, 5) if m * scale <= n) * scale)


def run_bench(backend, budget=None) -> dict:
    """Per-run averages of the device's BENCH command ({} when the backend has none).

    One repetition sizes the run, then ``reps`` repetitions fill the unit's budget. Where that
    probe is exact (QEMU icount, simavr cycles) reruns pick the same ``reps`` and get the same
    totals; :func:`_nice` rounds it so that a noisy timer (host nanoseconds, a board) usually
    picks the same ``reps`` too.
    """
    out = {}
    for part in ("model", "extractors"):
        probe = backend.bench(1, part)
        if probe is None:
            return out
        unit, once = probe
        target = (budget or BENCH_BUDGET).get(unit, 1e6)
        reps = _nice(min(MAX_REPS, max(1, target // max(once, 1))))
        unit, total = backend.bench(reps, part)
        out[part] = {"unit": unit, "reps": reps, "total": total, "per_run": total / reps}
    return out


def _check_costed(backend: str, board) -> None:
    """DeviceError when a backend that measures wall-clock time (the host's nanoseconds) is to
    be priced on another board: no clock turns a PC's time into a microcontroller's (counted
    instructions and cycles are what ``--board`` prices)."""
    from sensorbudget.firmware_gen.boards import BOARDS, measurers

    from .backends import costed_board

    found = measurers().get(backend)
    if board is None or found is None:
        return
    image, costed = found[0], BOARDS[costed_board(board)]
    if image.cost_unit == "nanoseconds" and costed.name != image.name:
        own = [m for m, (b, _) in measurers().items() if b.name == costed.name] or ["python"]
        raise DeviceError(f"board={board!r}: backend {backend!r} measures {image.cost_unit} on "
                          f"{image.cpu}, which no other board's clock prices; measure "
                          f"the compute with a backend that counts instructions or cycles "
                          f"({', '.join(own)})")


def reference_model(bundle, numeric: str = "float32", *, full_scale=None,
                    fft: str = "float32"):
    """The reference of ``bundle`` (:func:`.multirate.make_model`); ``fft="q15"``: the
    single-rate :class:`ReferenceModel` of the plan whose spectra read the Q15 FFT."""
    if fft == "float32":
        return make_model(bundle, numeric, full_scale=full_scale)
    if bundle.meta.get("multi_rate"):
        raise DeviceError(f"fft={fft!r} is for single-rate bundles; a multi-rate bundle's "
                          f"spectra use the float32 FFT (leave fft at float32)")
    return ReferenceModel(bundle, numeric, full_scale=full_scale, fft=fft)


def firmware_fft(bundle_or_firmware, fft) -> str:
    """The spectra's transform: ``fft`` (default float32), or an API Firmware's own (a given
    value must agree)."""
    from sensorbudget.firmware_gen.api import Firmware

    if not isinstance(bundle_or_firmware, Firmware):
        return fft or "float32"
    own = bundle_or_firmware.manifest.get("fft", "float32")
    if fft is not None and fft != own:
        raise DeviceError(f"fft={fft!r} differs from the firmware's {own!r}")
    return own


def simulate(bundle_dir, recordings_path, *, backend: str = "python", numeric: str = "float32",
             rate=None, report_dir=None, battery_wh: float = DEFAULT_BATTERY_WH, workdir=None,
             bench=True, timeout=None, retries: int = 4, full_scale=None, profile=None,
             board=None, clock=time.monotonic, sleep=time.sleep, progress=None,
             fft: str = "float32"):
    """Replay ``recordings_path`` through ``backend`` running ``bundle_dir``'s model.

    Returns ``(report dict, ReplayResult)``; with ``report_dir`` the report files are written
    there. ``timeout`` (s per answer) defaults to the backend's (0.5 python/serial, 2 host,
    5 QEMU, 10 simavr). ``full_scale`` ({channel or "*": value}) scales the Q15 samples of
    fixed-point firmware (``firmware_gen``). ``backend="best"`` picks
    :func:`~sensorbudget.device_sim.backends.best_backend`. ``board`` is the board the measured
    costs are priced with (a registry name: clock, supply, currents), separate from the
    backend that measures: default the board the backend's image is built for (python and
    serial: the registry's default board); ``profile`` is its older name. ``rate`` paces the
    replay: None (as fast as possible), a number of samples per second, or ``"recorded"``.

    ``progress(done, total)`` is called after every answered push (samples sent so far).
    ``fft="q15"`` (q15/q31, single-rate): the firmware's and the reference's spectra come from
    the Q15 FFT (``sensorbudget firmware --fft q15``).

    The bundle is loaded once and its plan made once (:class:`ReferenceModel`); the firmware
    backends generate their firmware from that model. ``bundle_dir`` may also be a loaded
    bundle (the report then names its folder only when the object knows it).
    """
    bundle, bundle_path = as_bundle(bundle_dir)
    multi = bool(bundle.meta.get("multi_rate"))
    model = reference_model(bundle, numeric, full_scale=full_scale, fft=fft)
    recordings = load_recordings(recordings_path, model.sample_rate,      # as features read them
                                 StreamFormat.from_options(bundle.meta.get("recording_options")))
    if backend == "best":
        backend = best_backend()
    _check_costed(backend, board if board is not None else profile)
    if rate == "recorded" and not multi:    # multi-rate: each event at its own time stamp
        rate = model.sample_rate
    with tempfile.TemporaryDirectory(prefix="sensorbudget-sim-") as tmp:
        work = Path(workdir) if workdir is not None else Path(tmp)
        dev = make_backend(backend, model=model, workdir=work, profile=profile, board=board,
                           timeout=timeout, retries=retries, clock=clock)
        try:
            result = (MultiRateReplayer if multi else Replayer)(
                dev, model, rate=rate, clock=clock, sleep=sleep, progress=progress
            ).run(recordings)
            if bench:
                result.bench = run_bench(dev)
            dev.quit()
        finally:
            dev.close()
        # the painted stack's high-water mark, printed into the log at exit (firmware backends)
        stack = dev.stack_usage() if hasattr(dev, "stack_usage") else None
    report = build_report(result, dev, model, recordings, bundle_path=bundle_path,
                          recordings_path=recordings_path, battery_wh=battery_wh, stack=stack)
    if report_dir is not None:
        write_report(report_dir, report, result, model)
    return report, result
