"""pyserial-like transports for tests and the python backend, and a link fault injector.

- :class:`FakeClock`: a manual monotonic clock (``advance``) to inject into a Link.
- :class:`MemoryTransport`: a device object (``feed(bytes) -> bytes``) behind ``write``/``read``;
  an empty ``read`` lets ``timeout`` seconds pass on the injected ``sleep`` (with a FakeClock,
  its ``advance``), so timeouts are deterministic and instant in tests.
- :class:`FaultyTransport`: wraps any transport and corrupts (bit flips) or drops bytes in either
  direction with a seeded RNG.
- :class:`PtyDevice`: serves a device object on a pseudo-terminal from a thread, so the real
  pyserial code path (``serial_for_url(path)``) can be exercised without hardware.
"""

from __future__ import annotations

import os
import random
import select
import threading
import time


class FakeClock:
    """Monotonic seconds that move only when :meth:`advance` (or ``sleep``) is called."""

    def __init__(self, start: float = 0.0):
        self.now = float(start)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += max(0.0, float(seconds))

    sleep = advance


class MemoryTransport:
    """In-memory serial port whose far end is ``device.feed`` (synchronous answers)."""

    def __init__(self, device, *, sleep=time.sleep):
        self.device = device
        self.sleep = sleep
        self.timeout = 0.01
        self.rx = bytearray()
        self.is_open = True

    @property
    def in_waiting(self) -> int:
        return len(self.rx)

    def write(self, data) -> int:
        self.rx += self.device.feed(bytes(data))
        return len(data)

    def read(self, size: int = 1) -> bytes:
        if not self.rx:
            self.sleep(self.timeout or 0.0)
            return b""
        out = bytes(self.rx[:size])
        del self.rx[:size]
        return out

    def close(self) -> None:
        self.is_open = False


class FaultyTransport:
    """Corrupt and drop bytes on the way to and from ``inner`` (seeded, reproducible).

    Parameters
    ----------
    inner : pyserial-like
    seed : int
    corrupt, drop : float
        Per-byte probabilities of flipping one random bit and of losing the byte.
    directions : {"both", "tx", "rx"}
        Faults on what the host writes (tx), on what it reads (rx), or both.
    """

    def __init__(self, inner, *, seed: int, corrupt: float = 0.0, drop: float = 0.0,
                 directions: str = "both"):
        self.inner = inner
        self.rng = random.Random(seed)
        self.corrupt, self.drop = corrupt, drop
        self.directions = directions
        self.corrupted = 0
        self.dropped = 0

    def _mangle(self, data: bytes) -> bytes:
        out = bytearray()
        for byte in data:
            r = self.rng.random()
            if r < self.drop:
                self.dropped += 1
                continue
            if r < self.drop + self.corrupt:
                byte ^= 1 << self.rng.randrange(8)
                self.corrupted += 1
            out.append(byte)
        return bytes(out)

    @property
    def timeout(self):
        return self.inner.timeout

    @timeout.setter
    def timeout(self, value):
        self.inner.timeout = value

    @property
    def in_waiting(self) -> int:
        return self.inner.in_waiting

    def write(self, data) -> int:
        if self.directions in ("both", "tx"):
            self.inner.write(self._mangle(bytes(data)))
        else:
            self.inner.write(data)
        return len(data)

    def read(self, size: int = 1) -> bytes:
        data = self.inner.read(size)
        return self._mangle(data) if self.directions in ("both", "rx") else data

    def close(self) -> None:
        self.inner.close()


class PtyDevice:
    """Serve ``device`` (``feed(bytes) -> bytes``, optional ``exit_code``) on a pty.

    Open ``path`` with pyserial; :meth:`close` stops the thread and closes the pty.
    """

    def __init__(self, device):
        import tty

        self.device = device
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)
        self.path = os.ttyname(self._slave)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="pty-device", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            answer = self.device.feed(data)
            if answer:
                os.write(self.master, answer)
            if getattr(self.device, "exit_code", None) is not None:
                return

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        for fd in (self.master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
