"""Every firmware backend against the Python reference on real recordings, and determinism of
the cost counts (QEMU icount, unicorn, simavr). Backends whose tools are missing are skipped."""

import struct

import numpy as np
import pytest

from device_sim.backends import available_backends, best_backend, make_backend
from device_sim.replay import replay
from device_sim.simulate import run_bench
from device_sim.transports import FaultyTransport
from device_sim.unicorn_sim import UnicornBackend

from .conftest import model_of, recordings_of

AVAILABLE = available_backends()
FS = {"*": 64.0}


def need(spec):
    reason = AVAILABLE.get(spec)
    if reason is not None:
        pytest.skip(f"backend {spec}: {reason}")


def run(spec, bundle, recs, numeric, tmp_path, max_recordings=None, bench=False, **kw):
    full_scale = FS if numeric != "float32" else None
    model = model_of(bundle, numeric, full_scale=full_scale)
    rset = recordings_of(recs, model)
    if max_recordings:
        rset.recordings = rset.recordings[:max_recordings]
    be = make_backend(spec, bundle_dir=bundle, model=model, workdir=tmp_path,
                      full_scale=full_scale, **kw)
    try:
        res = replay(be, model, rset)
        if bench:
            res.bench = run_bench(be)
        be.quit()
    finally:
        be.close()
    return res, be


def costs(res):
    return [(r.extractors, r.model) for r in res.records]


def assert_parity(res, n):
    assert len(res.records) == n
    assert res.count("delivered") == n and res.mismatches == 0 and res.unexpected == 0


@pytest.mark.parametrize("numeric", ["float32", "q15", "q31"])
def test_host_firmware_parity(motions, numeric, tmp_path):
    need("host")
    res, _ = run("host", *motions, numeric, tmp_path)
    assert_parity(res, 360)
    assert res.cost_unit == "nanoseconds"


def test_host_firmware_parity_on_air_quality(air, tmp_path):
    need("host")
    res, _ = run("host", *air, "q15", tmp_path)
    assert res.mismatches == 0 and res.count("lost") == 0 and len(res.records) > 8000


def test_host_firmware_survives_a_faulty_link(motions, tmp_path):
    """The C decoder, resync and retry cache under corrupted and dropped bytes."""
    need("host")

    def wrap(port):
        return FaultyTransport(port, seed=11, corrupt=0.0005, drop=0.0005)

    res, _ = run("host", *motions, "float32", tmp_path, max_recordings=20, wrap=wrap,
                 timeout=0.2)
    assert res.mismatches == 0 and res.count("lost") == 0
    assert res.link["retransmissions"] > 0
    assert len(res.records) == res.count("delivered") + res.count("retried")


@pytest.mark.parametrize("spec,numeric", [("qemu-m4f", "float32"), ("qemu-m4f", "q15"),
                                          ("qemu-m3", "float32"), ("qemu-m3", "q15")])
def test_qemu_parity_and_reproducible_instruction_counts(motions, spec, numeric, tmp_path):
    """QEMU -icount counts instructions exactly and the firmware restarts SysTick (one tick = 40
    instructions) at the start of every timed region, so how long it idled waiting for the UART
    does not matter: single calls, BENCH repetition counts and BENCH totals are identical."""
    need(spec)
    first, _ = run(spec, *motions, numeric, tmp_path / "a", max_recordings=10, bench=True)
    second, _ = run(spec, *motions, numeric, tmp_path / "b", max_recordings=10, bench=True)
    assert_parity(first, 90)
    assert_parity(second, 90)
    assert first.cost_unit == "instructions"
    assert costs(first) == costs(second)
    assert all(e > 0 and e % 40 == 0 and m % 40 == 0 for e, m in costs(first))
    assert first.bench == second.bench
    for part in ("model", "extractors"):
        assert first.bench[part]["unit"] == "instructions" and first.bench[part]["reps"] >= 100


class ExactUnicorn(UnicornBackend):
    """unicorn-m4f counting every executed instruction: its code hook never reports an IT-block
    instruction whose condition fails, though the core (and QEMU) executes it, so those are
    counted here from the IT instructions seen (``stats`` adds them to each window's counts)."""

    def open(self):
        from unicorn import UC_HOOK_CODE

        info = super().open()
        self.missed = {"compute": 0, "model": 0}
        self._part, self._block = None, set()
        self.uc.hook_add(UC_HOOK_CODE, self._on_it)
        return info

    def _halfword(self, address):
        return struct.unpack("<H", self.uc.mem_read(address, 2))[0]

    def _on_it(self, uc, address, size, data):
        for part in ("add", "compute", "model"):
            if address == self.fn[part] & ~1:             # (thumb bit)
                self._part, self._block = part, set()
                if part == "compute":
                    self.missed = {"compute": 0, "model": 0}
        if self._part not in self.missed:
            return
        if address in self._block:                   # an IT-block instruction that ran
            self._block.discard(address)
            self.missed[self._part] -= 1
            return
        hw = self._halfword(address)
        if size == 2 and hw & 0xFF00 == 0xBF00 and hw & 0xF:     # IT, block of 1 to 4
            n = 5 - ((hw & 0xF) & -(hw & 0xF)).bit_length()
            at, self._block = address + 2, set()
            for _ in range(n):
                self._block.add(at)
                at += 4 if self._halfword(at) >> 11 in (0b11101, 0b11110, 0b11111) else 2
            self.missed[self._part] += n

    def stats(self):
        unit, ext, model = super().stats()
        return unit, ext + self.missed["compute"], model + self.missed["model"]


def test_qemu_counts_are_the_instruction_counts_to_one_tick(motions, tmp_path):
    """The timer overhead is calibrated. A QEMU single-call count is the region's instructions
    (the call plus the counter's own few: the end of cost_start, the call through the pointer,
    the start of cost_stop; about a dozen, under 20) rounded down to a multiple of 40, minus the
    overhead measured at boot (0 ticks: fewer than 40 instructions): so it lies in
    (exact - 40, exact + 20] of the exact count (:class:`ExactUnicorn`, same firmware), and a
    BENCH average exceeds the exact count by only the loop's few instructions per repetition."""
    need("qemu-m4f")
    need("unicorn-m4f")
    bundle, recs = motions
    qemu, _ = run("qemu-m4f", bundle, recs, "float32", tmp_path / "q", max_recordings=10,
                  bench=True)
    model = model_of(bundle)
    rset = recordings_of(recs, model)
    rset.recordings = rset.recordings[:10]
    exact = replay(ExactUnicorn(bundle_dir=bundle, model=model, workdir=tmp_path / "u"), model,
                   rset)
    assert_parity(exact, 90)
    plain, _ = run("unicorn-m4f", bundle, recs, "float32", tmp_path / "p", max_recordings=10)
    assert costs(plain) != costs(exact)           # the extractors do skip IT-block instructions
    for (qe, qm), (ee, em) in zip(costs(qemu), costs(exact), strict=True):
        assert -40 < qe - ee <= 20 and -40 < qm - em <= 20, (qe, ee, qm, em)
    ext, mod = np.array(costs(exact)).T
    loop = qemu.bench["model"]["per_run"] - mod[-1]        # model: the same code every time
    assert mod.min() == mod.max() and 0 < loop <= 12
    assert ext.min() < qemu.bench["extractors"]["per_run"] <= ext.max() + 12


@pytest.mark.parametrize("numeric", ["float32", "q31"])
def test_unicorn_parity_and_exact_counts(motions, numeric, tmp_path):
    need("unicorn-m4f")
    first, be = run("unicorn-m4f", *motions, numeric, tmp_path / "a")
    second, _ = run("unicorn-m4f", *motions, numeric, tmp_path / "b")
    assert_parity(first, 360)
    assert costs(first) == costs(second)
    per = be.per_extractor()
    assert set(per) == set(model_of(motions[0]).meta["required_extractors"])
    assert sum(per.values()) == pytest.approx(np.median([e for e, _ in costs(first)]), rel=0.05)


@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_simavr_parity_and_deterministic_cycles(motions, numeric, tmp_path):
    need("simavr")
    first, _ = run("simavr", *motions, numeric, tmp_path / "a", max_recordings=3)
    second, _ = run("simavr", *motions, numeric, tmp_path / "b", max_recordings=3)
    assert_parity(first, 27)
    assert first.cost_unit == "cycles"
    assert costs(first) == costs(second)


def test_simavr_parity_on_a_stream_with_missing_samples(tiny, tmp_path):
    need("simavr")
    res, _ = run("simavr", tiny[0], tiny[1], "q15", tmp_path)
    assert res.segments == 2 and res.mismatches == 0 and res.count("lost") == 0


def test_best_backend_is_available():
    assert AVAILABLE[best_backend()] is None
