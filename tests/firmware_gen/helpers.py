"""Protocol helpers for the firmware tests: push recordings, decode answers, reference scores."""

from __future__ import annotations

import struct

import numpy as np

from device_sim.protocol import Cmd, Err

SCORE = {"float32": "<f4", "q15": "<i4", "q31": "<i8"}
INPUT = {"float32": "<f4", "q15": "<i2", "q31": "<i4"}


def device_samples(plan, columns) -> np.ndarray:
    """What the host sends: float32 samples, or Q15 samples for fixed-point firmware."""
    from firmware_gen import reference

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
