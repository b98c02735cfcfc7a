"""Link faults end with every prediction correct or reported lost; a dead device times out."""

import pytest

from sensorbudget.device_sim.backends import PythonBackend, SerialBackend
from sensorbudget.device_sim.errors import DeviceTimeout
from sensorbudget.device_sim.fake import FakeDevice
from sensorbudget.device_sim.replay import replay
from sensorbudget.device_sim.transports import FakeClock, FaultyTransport, PtyDevice

from .conftest import model_of, recordings_of


def faulty_backend(model, clock, seed, corrupt, drop, directions="both", **kw):
    def wrap(port):
        return FaultyTransport(port, seed=seed, corrupt=corrupt, drop=drop,
                               directions=directions)

    return PythonBackend(model, wrap=wrap, clock=clock, sleep=clock.advance, **kw)


def check_accounting(res):
    statuses = {r.status for r in res.records}
    assert statuses <= {"delivered", "retried", "lost"}
    for r in res.records:
        # nothing silently wrong: a received prediction equals the reference, bit for bit
        assert (r.scores is None) == (r.status == "lost")
        assert r.match is not False
    assert res.mismatches == 0 and res.unexpected == 0


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("numeric", ["float32", "q15"])
def test_corrupted_and_dropped_bytes_never_give_a_wrong_prediction(motions, seed, numeric):
    bundle, recs = motions
    model = model_of(bundle, numeric, full_scale={"*": 64.0} if numeric != "float32" else None)
    clock = FakeClock()
    be = faulty_backend(model, clock, seed, corrupt=0.001, drop=0.001, retries=3, timeout=0.2)
    res = replay(be, model, recordings_of(recs, model), clock=clock, sleep=clock.advance)
    check_accounting(res)
    assert res.count("lost") == 0                           # resend recovers every window
    assert res.count("retried") > 0 and res.link["retransmissions"] > 0
    assert res.link["dropped_frames"] > 0


@pytest.mark.parametrize("directions", ["tx", "rx"])
def test_without_resend_lost_windows_are_reported(motions, directions):
    bundle, recs = motions
    model = model_of(bundle)
    clock = FakeClock()
    be = faulty_backend(model, clock, 7, corrupt=0.003, drop=0.003, directions=directions,
                        retries=1, timeout=0.2)
    res = replay(be, model, recordings_of(recs, model), resend=False, max_losses=6,
                 clock=clock, sleep=clock.advance)
    check_accounting(res)
    assert res.count("lost") > 0 and res.recoveries > 0
    assert len(res.records) == res.count("delivered") + res.count("retried") + res.count("lost")


def test_device_that_stops_answering_gives_a_clear_timeout(tiny):
    bundle, rec, _ = tiny
    model = model_of(bundle)
    clock = FakeClock()
    dev = FakeDevice(model, stop_after=12)
    be = PythonBackend(model, device=dev, clock=clock, sleep=clock.advance, timeout=0.5,
                       retries=2)
    with pytest.raises(DeviceTimeout, match="stopped answering"):
        replay(be, model, recordings_of(rec, model), max_losses=3, clock=clock,
               sleep=clock.advance)
    # 1 push + 3 resets unanswered, 3 attempts of 0.5 s each: bounded, in fake time
    assert clock() <= 4 * 3 * 0.5 + 0.1


def test_serial_backend_over_a_pty(motions):
    """The real pyserial path: a fake device served on a pseudo-terminal."""
    bundle, recs = motions
    model = model_of(bundle, "q31", full_scale={"*": 64.0})
    with PtyDevice(FakeDevice(model)) as pty:
        be = SerialBackend(pty.path, timeout=2.0)
        try:
            res = replay(be, model, recordings_of(recs, model))
        finally:
            be.close()
    assert res.backend == f"serial:{pty.path}"
    assert len(res.records) == 360 and res.count("delivered") == 360 and res.mismatches == 0


def test_a_second_host_on_the_same_serial_device_is_refused(tiny):
    """The port is locked while one host uses it; after it closes, another host may connect."""
    from sensorbudget.device_sim.errors import DeviceError

    model = model_of(tiny[0])
    with PtyDevice(FakeDevice(model)) as pty:
        first = SerialBackend(pty.path, timeout=2.0)
        first.open()
        second = SerialBackend(pty.path, timeout=2.0)
        with pytest.raises(DeviceError, match=r"in use by another host \(the port is locked\)"):
            second.open()
        first.close()
        assert second.open().version == 2
        second.close()
