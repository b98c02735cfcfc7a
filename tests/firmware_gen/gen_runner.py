"""Running one generated case (:mod:`tests.firmware_gen.generative`): build its firmware with
``-Werror`` (gcc, and clang for the host), replay its recordings through the built image and
compare with :mod:`sensorbudget.firmware_gen.reference`; or accept a refusal by the fit checks.

An :class:`Outcome` is ``built`` (and checked), ``refused`` (one of the fit checks' messages:
the model does not fit the part's RAM, flash or protocol buffers) or raises AssertionError /
FirmwareGenError with the case's seed in the message (a generator bug)."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sensorbudget.firmware_gen import FirmwareGenError, generate_firmware, reference
from sensorbudget.firmware_gen.build import build, stack_high_water, write_firmware
from sensorbudget.firmware_gen.memory import RAM_MARGIN
from sensorbudget.firmware_gen.memory_flash import flash_margin
from sensorbudget.firmware_gen.plan import make_plan, power_of_two_above
from sensorbudget.firmware_gen.targets import get_target
from tests.firmware_gen import generative as G
from tests.firmware_gen.helpers import Session, predict, push_samples, same_bits

#: FirmwareGenError messages that are refusals by a fit check, not generator failures
REFUSALS = (re.compile(r"needs \d+ bytes .*?has \d+"),
            re.compile(r"takes \d+ bytes .*holds at most \d+"),
            re.compile(r"q31 needs a 64-bit double .* has a 32-bit double"))


@dataclass
class Outcome:
    case: G.Case
    status: str = "built"                 # built | refused
    message: str = ""
    features: tuple = ()
    windows: int = 0
    bound: float | None = None            # the header's fixed-point error bound
    max_error: float | None = None        # max |fixed score - float64 model| observed
    footprint: dict = field(default_factory=dict)
    emulator: str = ""                    # where the target image was replayed, if it was
    emulated: int = 0                     # windows replayed there
    ram_error: int | None = None          # linked static RAM - the plan's estimate
    flash_error: int | None = None        # linked flash - the plan's estimate
    stack: int | None = None              # measured stack high-water mark (QEMU, simavr)

    def refused(self, exc: FirmwareGenError) -> Outcome:
        """This outcome as a refusal by a fit check (re-raises any other error)."""
        if not is_refusal(str(exc)):
            raise exc
        self.status, self.message = "refused", str(exc)
        return self


def recordings_arrays(folder: Path) -> list:
    """The channels (n x 9, float64) of every recording of a :func:`G.write_recordings` folder."""
    out = []
    for path in sorted(folder.glob("r*.npz"), key=lambda p: int(p.stem[1:])):
        with np.load(path, allow_pickle=False) as z:
            out.append(np.column_stack([z[c] for c in G.CHANNELS]))
    return out


def full_scale(case: G.Case, channels, recordings: list) -> dict:
    """Per channel: the power of two above its largest |sample|; every fifth case halves them
    (samples then clamp at the Q15 limits)."""
    peak = np.max([np.abs(r).max(axis=0) for r in recordings], axis=0)
    scales = {c: power_of_two_above(float(peak[G.CHANNELS.index(c)])) for c in channels}
    if case.seed % 5 == 4:
        scales = {c: v / 2 for c, v in scales.items()}
    return scales


def is_refusal(message: str) -> bool:
    return any(p.search(message) for p in REFUSALS)


def _columns(plan, data: np.ndarray) -> dict:
    return {c: data[:, G.CHANNELS.index(c)] for c in plan.channels}


def device_samples(plan, data: np.ndarray) -> np.ndarray:
    X = np.column_stack([data[:, G.CHANNELS.index(c)] for c in plan.channels])
    return reference.quantize_samples(plan, X) if plan.fixed else X.astype(np.float32)


def per_request(plan, target) -> int:
    """Samples per PUSH_SAMPLES request within the target's receive and transmit buffers."""
    sample = 2 if plan.fixed else 4
    score = {"float32": 4, "q15": 4, "q31": 8}[plan.numeric]
    by_rx = (target.rx_payload - 2) // (len(plan.channels) * sample)
    windows = (target.tx_payload - 2) // (4 + plan.t * score)
    return max(1, min(by_rx, (windows - 1) * plan.hop))


def replay(out: Path, plan, bundle, samples, *, harness=None) -> int:
    """Push ``samples`` through the firmware built in ``out``: every window's scores equal the
    reference bit for bit, and one PREDICT of the last window's inputs; returns the number of
    windows."""
    target = get_target(plan_target(out))
    _, inputs, expected = reference.stream(plan, bundle, samples)
    with Session(out, harness=harness) as session:
        windows, scores = push_samples(session, plan, samples, per_request(plan, target))
        if len(inputs):
            assert same_bits(predict(session, plan, inputs[-1]), scores[-1])
        session.quit()
    assert windows == list(range(len(expected))), (windows[:5], len(expected))
    assert same_bits(scores, np.asarray(expected).astype(scores.dtype)), \
        np.flatnonzero((scores != np.asarray(expected)).any(axis=1))[:5]
    return len(windows)


def plan_target(out: Path) -> str:
    import json

    return json.loads((Path(out) / "firmware.json").read_text())["target"]


def stream_bound(plan, bundle, case: G.Case) -> float:
    """The stream error bound (:mod:`sensorbudget.firmware_gen.bounds`); range terms only for the cases
    whose full scales were halved (samples clamp)."""
    from sensorbudget.firmware_gen.bounds import stream_error_bounds

    fixed = reference.fixed_model(plan, bundle)
    return float(np.max(stream_error_bounds(plan, fixed, bundle.W,
                                            samples_in_full_scale=case.seed % 5 != 4)))


def fixed_error(plan, bundle, fw, data_list) -> float:
    """Max |real fixed-point score - float64 model on the float32 features| over the replayed
    recordings (the quantity the header's error bound promises)."""
    fixed = reference.fixed_model(plan, bundle)
    worst = 0.0
    float_plan = make_plan(bundle, name=plan.name, numeric="float32")
    for data in data_list:
        X = reference.window_features(float_plan, device_samples(float_plan, data))
        Xq = reference.window_features(plan, device_samples(plan, data))
        ints = reference.scores(plan, bundle, fixed, reference.model_inputs(plan, fixed, Xq))
        real = np.asarray(ints, dtype=np.float64) * 2.0 ** -fw.header.fixed.score_frac_bits
        want = bundle.selected_scores(X.astype(np.float64))
        if len(X):
            worst = max(worst, float(np.abs(real - want).max()))
    return worst


def compile_library(bundle, case: G.Case, scales, out: Path) -> None:
    """The case's C library (``export c-library``): its C files compile with the firmware's
    warnings and ``-Werror`` under gcc (-O2) and clang (-O0, front-end warnings)."""
    from sensorbudget.firmware_gen.library import generate_library
    from sensorbudget.firmware_gen.targets import FP_FLAGS, WARNINGS

    lib = generate_library(bundle, numeric=case.numeric, name=f"lib{case.seed}",
                           full_scale=scales)
    for rel, text in lib.files.items():
        if rel.startswith("src/"):
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_text(text, encoding="ascii")
    for cc, opt in (("gcc", "-O2"), ("clang", "-O0")):
        if shutil.which(cc) is None:
            continue
        for src in sorted((out / "src").glob("*.c")):
            proc = subprocess.run([cc, *WARNINGS, opt, *FP_FLAGS, "-c", str(src), "-o",
                                   str(src.with_suffix(f".{cc}.o"))],
                                  capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, f"{cc} {src.name}: {proc.stderr[-1500:]}"


def _build(fw, out: Path, cc: str | None = None) -> dict:
    """Write and build ``fw``; ``cc`` replaces the Makefile's compiler, at -O0 (clang's
    warnings come from its front end, so -Werror is as strict and the build is ~3x faster)."""
    write_firmware(fw, out)
    return build(out, make_vars={"CC": cc, "EXTRA_CFLAGS": "-O0"} if cc else None)


def run_case(case: G.Case, recordings: Path, work: Path, *, emulate: bool = False,
             harness=None, data=None) -> Outcome:
    """Build ``case`` for its target (and on the host with gcc and clang), replay its first two
    recordings on the host (and, with ``emulate``, its first recording on the target's
    emulator); see the module docstring."""
    data = data if data is not None else recordings_arrays(recordings)
    fs = G.feature_set(case, recordings, work)
    bundle, features = G.case_bundle(case, fs, work / "bundle")
    outcome = Outcome(case, features=tuple(features))
    try:
        scales = None
        if case.numeric != "float32":
            channels = make_plan(bundle, name=case.name, numeric="float32").channels
            scales = full_scale(case, channels, data)
        plan = make_plan(bundle, name=case.name, numeric=case.numeric, full_scale=scales)
        host = generate_firmware(bundle, target="host", numeric=case.numeric, name=case.name,
                                 plan=plan, kernel=case.kernel)
    except FirmwareGenError as exc:
        return outcome.refused(exc)
    _build(host, work / "host_gcc")
    if shutil.which("clang") is not None:
        _build(host, work / "host_clang", "clang")
    compile_library(bundle, case, scales, work / "library")
    samples = device_samples(plan, np.concatenate(data[:2]))
    outcome.windows = replay(work / "host_gcc", plan, bundle, samples)
    if plan.fixed:
        outcome.bound = stream_bound(plan, bundle, case)
        outcome.max_error = fixed_error(plan, bundle, host, data)
        assert outcome.max_error <= outcome.bound, (outcome.max_error, outcome.bound)
    if case.target != "host":
        try:
            fw = generate_firmware(bundle, target=case.target, numeric=case.numeric,
                                   name=case.name, plan=plan, kernel=case.kernel)
            outcome.footprint = _build(fw, work / case.target)
        except FirmwareGenError as exc:
            return outcome.refused(exc)
        if fw.manifest["ram_estimate"] is not None:
            outcome.ram_error = outcome.footprint["ram_bytes"] - fw.manifest["ram_estimate"]
            assert abs(outcome.ram_error) <= RAM_MARGIN, (outcome.footprint["ram_bytes"],
                                                          fw.manifest["ram_estimate"])
        if fw.manifest.get("flash_estimate") is not None:
            outcome.flash_error = outcome.footprint["flash_bytes"] - fw.manifest["flash_estimate"]
            assert abs(outcome.flash_error) <= flash_margin(get_target(case.target)), \
                (outcome.footprint["flash_bytes"], fw.manifest["flash_estimate"])
        if emulate:
            outcome.emulator = emulator_of(case)
            if outcome.emulator == "unicorn-m4f":
                outcome.emulated = unicorn_replay(plan, bundle, scales, recordings, work)
            else:
                outcome.emulated = replay(work / case.target, plan, bundle,
                                          device_samples(plan, data[0]), harness=harness)
                outcome.stack = stack_high_water(work / case.target)
                target = get_target(case.target)
                if target.arch in ("cortex-m", "avr"):      # their startup paints the stack
                    reserve = target.profile.stack_reserve
                    assert outcome.stack is not None and 0 < outcome.stack <= reserve, \
                        (outcome.stack, reserve)
    return outcome


def emulator_of(case: G.Case) -> str | None:
    """QEMU for the Cortex-M and RISC-V images (unicorn-m4f for every other mps2-an386 case),
    simavr for the Uno; None for a board no emulator here runs (ch32v003)."""
    target = get_target(case.target)
    if not target.mcu or not target.emulators:
        return None
    if case.target == "arduino-uno":
        return "simavr"
    return "unicorn-m4f" if case.target == "mps2-an386" and case.seed % 2 else "qemu"


def unicorn_replay(plan, bundle, scales, recordings: Path, work: Path) -> int:
    """The first recording through ``device_sim``'s unicorn-m4f backend (its own build of the
    Cortex-M4F image, each function called in unicorn): every window matches the reference."""
    from sensorbudget.device_sim.backends import make_backend
    from sensorbudget.device_sim.reference import ReferenceModel
    from sensorbudget.device_sim.replay import replay as device_replay
    from sensorbudget.trainer.sensing.recordings import load_recordings

    model = ReferenceModel(bundle, plan.numeric, full_scale=scales, name=plan.name)
    rset = load_recordings(recordings, model.sample_rate)
    rset.recordings = rset.recordings[:1]
    be = make_backend("unicorn-m4f", model=model, workdir=work / "unicorn")
    try:
        res = device_replay(be, model, rset)
        be.quit()
    finally:
        be.close()
    assert res.mismatches == 0 and res.unexpected == 0, (res.mismatches, res.unexpected)
    assert res.count("delivered") == len(res.records)
    return len(res.records)


def check(case: G.Case, recordings: Path, work: Path, **kw) -> Outcome:
    """:func:`run_case`, with the case's seed and sensors.toml in any failure's message."""
    try:
        return run_case(case, recordings, work, **kw)
    except (AssertionError, FirmwareGenError, subprocess.SubprocessError, OSError) as exc:
        raise AssertionError(f"generated case seed={case.seed} ({case.target}, {case.numeric}, "
                             f"window {case.window}, hop {case.hop}) failed: "
                             f"{type(exc).__name__}: {str(exc)[-1500:]}\n"
                             f"sensors.toml:\n{case.toml}") from exc
