"""The code generator tested by generated inputs (issue 28, issue 33 item 8): seeded random
``sensors.toml`` files (1-9 channels of a synthetic 9-channel 64 Hz accelerometer stream, 3-axis
magnitude groups, every extractor kind: window statistics, shape, spectral, preprocessing; odd
and non-power-of-two windows, hop below, equal to and above the window), random selections of
1-12 features with random weights, cycling through every target x float32/q15/q31
(:mod:`tests.firmware_gen.generative`).

Each case builds with ``-Werror`` on its target's toolchain and on the host with gcc and clang,
and its host image replays two recordings bit for bit with :mod:`sensorbudget.firmware_gen.reference`
(float32 and fixed point alike: the reference is exact), or is refused by a fit check with the
bytes needed and available (:mod:`tests.firmware_gen.gen_runner`). Fixed-point scores stay
within the stream error bound (:mod:`sensorbudget.firmware_gen.bounds`) on the training recordings; the
linked static RAM of every board image is the plan's estimate (:mod:`sensorbudget.firmware_gen.memory`)
within its margin. A sample of the cases also replays on the target's emulator (QEMU, simavr,
unicorn-m4f).

Budget: ``SB_GEN_CASES`` host cases (default 200; ``SB_GEN_LONG=1``: 3000) from seed
``SB_GEN_SEED`` (default 0; printed), ``SB_GEN_EMULATED`` emulated cases (default 30).
Every failure found became a regression case: :data:`~tests.firmware_gen.generative
.REGRESSIONS` (replayed on every run) and the issue's bundle.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.firmware_gen import gen_runner as R
from tests.firmware_gen import generative as G
from tests.firmware_gen.conftest import need_tools

LONG = bool(os.environ.get("SB_GEN_LONG"))
CASES = int(os.environ.get("SB_GEN_CASES", "3000" if LONG else "200"))
EMULATED = int(os.environ.get("SB_GEN_EMULATED", "300" if LONG else "30"))
SEED = int(os.environ.get("SB_GEN_SEED", "0"))
CHUNK = 25
TOOLS = ("make", "gcc", "clang", "arm-none-eabi-gcc", "avr-gcc", "riscv64-unknown-elf-gcc")


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    return G.write_recordings(tmp_path_factory.mktemp("gen") / "recordings", 2026)


def _run_all(cases, recordings, work, **kw) -> list:
    """Every case (two at a time: the compilers are child processes); failures re-raised."""
    data = R.recordings_arrays(recordings)
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(R.check, c, recordings, work / f"c{c.seed}", data=data, **kw)
                   for c in cases]
        return [f.result() for f in futures]


def _summary(outcomes) -> str:
    built = [o for o in outcomes if o.status == "built"]
    fixed = [o for o in built if o.bound is not None]
    worst = max((o.max_error / o.bound for o in fixed), default=0.0)
    ram, flash = {}, {}
    for o in outcomes:
        if o.ram_error is not None:
            ram[o.case.target] = max(ram.get(o.case.target, 0), abs(o.ram_error))
        if o.flash_error is not None:
            flash[o.case.target] = max(flash.get(o.case.target, 0), abs(o.flash_error))
    return (f"{len(built)} built, {len(outcomes) - len(built)} refused by a fit check, "
            f"{sum(o.windows for o in built)} windows matched; fixed point: max observed / "
            f"stated bound = {worst:.3g} over {len(fixed)} cases; max |linked - estimated "
            f"static RAM| per target: {ram}; max |linked - estimated flash| per target: {flash}")


@pytest.mark.parametrize("chunk", range(math.ceil(CASES / CHUNK)))
def test_generated_cases_build_with_werror_and_match_the_reference(recordings, tmp_path, chunk):
    need_tools(*TOOLS)
    seeds = range(SEED + chunk * CHUNK, SEED + min(CASES, (chunk + 1) * CHUNK))
    outcomes = _run_all([G.make_case(s) for s in seeds], recordings, tmp_path)
    print(f"generated cases seeds {seeds.start}..{seeds.stop - 1}: {_summary(outcomes)}")
    assert all(o.status == "built" or R.is_refusal(o.message) for o in outcomes)
    assert sum(o.status == "built" for o in outcomes) > len(outcomes) // 2


def _emulated_seeds() -> list:
    """EMULATED seeds from SEED, a third for each of QEMU, simavr and unicorn-m4f (board
    images the fit checks let through: no Q31 on the Uno), interleaved."""
    per = {"qemu": [], "simavr": [], "unicorn-m4f": []}
    s = SEED
    while sum(map(len, per.values())) < EMULATED:
        case = G.make_case(s)
        emulator = R.emulator_of(case)
        if emulator in per and (case.target, case.numeric) != ("arduino-uno", "q31"):
            found = per[emulator]
            if len(found) < -(-EMULATED // 3):
                found.append(s)
        s += 1
    ordered = [x for group in zip(*per.values()) for x in group]
    rest = [x for group in per.values() for x in group if x not in ordered]
    return (ordered + rest)[:EMULATED]


@pytest.mark.parametrize("chunk", range(math.ceil(EMULATED / 10)))
def test_generated_cases_match_on_the_emulators(recordings, tmp_path, chunk):
    need_tools(*TOOLS, "qemu-system-arm", "simavr")
    from sensorbudget.device_sim.backends import available_backends

    for spec in ("unicorn-m4f", "simavr"):
        reason = available_backends().get(spec)
        if reason is not None:
            pytest.skip(f"backend {spec}: {reason}")
    from sensorbudget.firmware_gen.build import build_simavr_harness

    harness = build_simavr_harness(tmp_path / "simavr")
    seeds = _emulated_seeds()[chunk * 10:(chunk + 1) * 10]
    outcomes = _run_all([G.make_case(s) for s in seeds], recordings, tmp_path, emulate=True,
                        harness=harness)
    ran, stack = {}, {}
    for o in outcomes:
        if o.emulator:
            ran[o.emulator] = ran.get(o.emulator, 0) + 1
        if o.stack is not None:
            stack[o.case.target] = max(stack.get(o.case.target, 0), o.stack)
    print(f"emulated seeds {seeds}: {_summary(outcomes)}; replayed on {ran}; max stack "
          f"high-water (bytes) per target: {stack}")
    assert all(o.emulated > 0 for o in outcomes if o.status == "built")


@pytest.mark.parametrize("seed,target,numeric", G.REGRESSIONS)
def test_regression_case(recordings, tmp_path, seed, target, numeric):
    need_tools(*TOOLS)
    outcome = R.check(G.make_case(seed, (target, numeric)), recordings, tmp_path)
    assert outcome.status == "built" or R.is_refusal(outcome.message)


@pytest.mark.parametrize("target,numeric", G.TARGET_NUMERICS)
def test_issue_bundle_builds_for_every_target_or_is_refused_with_byte_counts(
        recordings, tmp_path, target, numeric):
    """The issue's 6-feature bundle (five channels: an odd count, with min and ptp on the odd
    one out of the Cortex-M4's channel pairs) on every target and numeric format."""
    need_tools(*TOOLS)
    outcome = R.check(G.issue_case(target, numeric), recordings, tmp_path)
    assert set(outcome.features) == set(G.ISSUE_FEATURES)
    if (target, numeric) == ("arduino-uno", "q31"):     # avr-gcc's double is 32-bit
        assert outcome.status == "refused" and "64-bit double" in outcome.message
    elif outcome.status == "refused":       # the 2 KB parts
        assert R.is_refusal(outcome.message) and "2048" in outcome.message, outcome.message
        assert target in ("arduino-uno", "ch32v003") and numeric != "q15"
        # before the compiler: no firmware was built, and the message says what would fit
        assert not (tmp_path / target).exists()
        assert "before compiling" in outcome.message and "--numeric q15" in outcome.message
    else:
        assert outcome.windows > 10
