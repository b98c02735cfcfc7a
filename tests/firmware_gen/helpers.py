"""Protocol helpers for the firmware tests: a raw-frame session, push recordings, decode answers,
reference scores."""

from __future__ import annotations

import struct
import time

import numpy as np
import serial

from sensorbudget.device_sim.backends.firmware import launch
from sensorbudget.device_sim.errors import DeviceError, DeviceTimeout
from sensorbudget.device_sim.protocol import SEQ_MOD, Cmd, Err, FrameDecoder, encode_frame

SCORE = {"float32": "<f4", "q15": "<i4", "q31": "<i8"}
INPUT = {"float32": "<f4", "q15": "<i2", "q31": "<i4"}


class Session:
    """Raw frames to and from a firmware started by :func:`sensorbudget.device_sim.backends.firmware.launch`
    (no retries, explicit ``seq``, malformed bytes allowed: what the firmware tests need;
    :mod:`sensorbudget.device_sim.link` is the full client)."""

    def __init__(self, out_dir, *, harness=None):
        self.process = launch(out_dir, harness=harness, poll=0.005)
        self.port, self.name = self.process.port, self.process.name
        self.decoder = FrameDecoder()
        self.pending = []
        self.seq = 0

    def write(self, data: bytes) -> None:
        self.port.write(data)
        self.port.flush()

    def frames(self, timeout: float = 5.0, count: int = 1) -> list:
        """Wait until ``count`` frames have arrived (or the timeout); returns those received."""
        deadline = time.monotonic() + timeout
        while len(self.pending) < count and time.monotonic() < deadline:
            try:
                # a socket port reports 1 when readable; reading more could lose data at EOF
                data = self.port.read(max(1, self.port.in_waiting))
            except (serial.SerialException, OSError):
                break                       # the device has exited (EIO on a pty)
            if data:
                self.pending += self.decoder.feed(data)
            elif self.process.proc.poll() is not None:
                break
        out, self.pending = self.pending[:count], self.pending[count:]
        return out

    def request(self, cmd: int, payload: bytes = b"", *, seq: int | None = None,
                timeout: float = 10.0) -> tuple:
        """Send one request; returns the answer ``(cmd, payload)`` (raises on a timeout)."""
        if seq is None:
            seq, self.seq = self.seq, (self.seq + 1) % SEQ_MOD
        self.write(encode_frame(seq, cmd, payload))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for rseq, rcmd, rpayload in self.frames(deadline - time.monotonic()):
                if rseq == seq:
                    return rcmd, rpayload
        raise DeviceTimeout(f"{self.name}: no answer to command 0x{cmd:02x} (seq {seq}) "
                            f"within {timeout} s")

    def call(self, cmd: int, payload: bytes = b"", **kw) -> bytes:
        """Like :meth:`request`, but returns the payload and raises on an ERROR answer."""
        rcmd, data = self.request(cmd, payload, **kw)
        if rcmd != (cmd | 0x80):
            raise DeviceError(f"{self.name}: command 0x{cmd:02x} answered 0x{rcmd:02x} "
                              f"{data.hex()}")
        return data

    def bench(self, reps: int, part: int, timeout: float = 120.0) -> tuple:
        """(unit code, total) of ``reps`` repetitions of part 0 (model) or 1 (extractors)."""
        return struct.unpack("<BQ", self.call(Cmd.BENCH, struct.pack("<IB", reps, part),
                                              timeout=timeout))

    def quit(self, code: int = 0, timeout: float = 10.0) -> int | None:
        """Send QUIT; returns the process exit status."""
        self.call(Cmd.QUIT, bytes([code]))
        return self.process.wait(timeout)

    def close(self) -> None:
        self.process.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def device_samples(plan, columns) -> np.ndarray:
    """What the host sends: float32 samples, or Q15 samples for fixed-point firmware."""
    from sensorbudget.firmware_gen import reference

    X = np.column_stack([np.asarray(columns[c], dtype=np.float64) for c in plan.channels])
    return reference.quantize_samples(plan, X) if plan.fixed else X.astype(np.float32)


def decode_push(plan, data: bytes) -> list:
    dtype = np.dtype(SCORE[plan.numeric])
    (count,) = struct.unpack_from("<H", data)
    size = 4 + plan.t * dtype.itemsize
    assert len(data) == 2 + count * size, (len(data), count)
    out = []
    for i in range(count):
        (window,) = struct.unpack_from("<I", data, 2 + i * size)
        out.append((window, np.frombuffer(data, dtype, plan.t, 2 + i * size + 4)))
    return out


def push_samples(session, plan, samples, per_request: int) -> tuple:
    """Push ``samples`` in requests of ``per_request``; (window indices, scores array)."""
    windows, scores = [], []
    dtype = "<i2" if plan.fixed else "<f4"
    for i in range(0, len(samples), per_request):
        chunk = np.ascontiguousarray(samples[i:i + per_request], dtype=dtype)
        data = session.call(Cmd.PUSH_SAMPLES, struct.pack("<H", len(chunk)) + chunk.tobytes())
        for w, s in decode_push(plan, data):
            windows.append(w)
            scores.append(s)
    return windows, np.array(scores).reshape(len(scores), plan.t)


def predict(session, plan, inputs) -> np.ndarray:
    x = np.ascontiguousarray(inputs, dtype=INPUT[plan.numeric])
    data = session.call(Cmd.PREDICT, x.tobytes())
    return np.frombuffer(data, SCORE[plan.numeric]).copy()


def expect_error(session, cmd, payload, code: Err, **kw):
    rcmd, data = session.request(cmd, payload, **kw)
    assert rcmd == Cmd.ERROR and data == bytes([cmd & 0xFF, code]), (hex(rcmd), data.hex())


def same_bits(a, b) -> bool:
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype.itemsize == b.dtype.itemsize and \
        np.array_equal(a.view(np.uint8), b.view(np.uint8))


def check_replay(session, plan, bundle, columns) -> None:
    """Push a recording's samples (33 per request) through a running firmware: every window's
    scores and one PREDICT equal firmware_gen.reference bit for bit, and STATS counts
    instructions with the extractors costing more than the model."""
    from sensorbudget.device_sim.protocol import Unit
    from sensorbudget.firmware_gen import reference

    samples = device_samples(plan, columns)
    _, inputs, expected = reference.stream(plan, bundle, samples)
    windows, scores = push_samples(session, plan, samples, 33)
    assert windows == list(range(len(expected)))
    assert same_bits(scores, np.asarray(expected).astype(scores.dtype))
    assert same_bits(predict(session, plan, inputs[3]), scores[3])
    unit, extract, model, pushes = struct.unpack("<BIII", session.call(Cmd.STATS))
    assert unit == Unit.INSTRUCTIONS and extract > model > 0 and pushes > 0
