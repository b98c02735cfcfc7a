"""pyserial-like transports for tests and the python backend, and a link fault injector.

- :class:`FakeClock`: a manual monotonic clock (``advance``) to inject into a Link.
- :class:`MemoryTransport`: a device object (``feed(bytes) -> bytes``) behind ``write``/``read``;
  an empty ``read`` lets ``timeout`` seconds pass on the injected ``sleep`` (with a FakeClock,
  its ``advance``), so timeouts are deterministic and instant in tests.
- :class:`FaultyTransport`: wraps any transport and corrupts (bit flips) or drops bytes in either
  direction with a seeded RNG; optionally also duplicates writes/reads and delivers them late,
  reorders them, and inserts garbage bursts (the faults protocol v2 must survive).
- :class:`PtyDevice`: serves a device object on a pseudo-terminal from a thread, so the real
  pyserial code path (``serial_for_url(path)``) can be exercised without hardware; optionally
  like a board that has just been reset (an Arduino Uno when its port opens): deaf for a while,
  then it sends its READY banner.
- :class:`PipePort`: a child process's stdin and stdout pipes as a pyserial-like port (QEMU's
  semihosting console: no tty line discipline, 64 KiB pipe buffers instead of a pty's 4 KiB).
"""

from __future__ import annotations

import fcntl
import math
import os
import random
import select
import termios
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
    duplicate, reorder, garbage : float
        Per-chunk (one ``write``, or one non-empty ``read``) probabilities of: delivering a copy
        of the chunk again 1-4 chunks later (a late duplicate); holding the chunk back and
        delivering it after the next 1-3 chunks (reordering); and inserting a burst of 1-40
        random bytes before it.
    """

    def __init__(self, inner, *, seed: int, corrupt: float = 0.0, drop: float = 0.0,
                 directions: str = "both", duplicate: float = 0.0, reorder: float = 0.0,
                 garbage: float = 0.0):
        self.inner = inner
        self.rng = random.Random(seed)
        self.corrupt, self.drop = corrupt, drop
        self.directions = directions
        self.duplicate, self.reorder, self.garbage = duplicate, reorder, garbage
        self.corrupted = 0
        self.dropped = 0
        self.counts = {"duplicated": 0, "reordered": 0, "garbage": 0}
        self._late = {"tx": [], "rx": []}          # [chunks still to pass, data]

    def _mangle(self, data: bytes) -> bytes:
        """Per-byte faults; event positions drawn as geometric gaps (fast for small rates)."""
        p = self.drop + self.corrupt
        if p <= 0 or not data:
            return data
        out = bytearray(data)
        rng, log1p = self.rng, math.log1p(-p) if p < 1 else None
        pos, removed = -1, []
        while True:
            pos += 1 if log1p is None else 1 + int(math.log(1.0 - rng.random()) / log1p)
            if pos >= len(out):
                break
            if rng.random() * p < self.drop:
                removed.append(pos)
                self.dropped += 1
            else:
                out[pos] ^= 1 << rng.randrange(8)
                self.corrupted += 1
        for i in reversed(removed):
            del out[i]
        return bytes(out)

    def _chunk(self, way: str, data: bytes) -> bytes:
        """Chunk faults of one direction: what passes now (maybe with late chunks)."""
        late, rng, out = self._late[way], self.rng, []
        if data and self.garbage and rng.random() < self.garbage:
            out.append(bytes(rng.randrange(256) for _ in range(rng.randint(1, 40))))
            self.counts["garbage"] += 1
        if data and self.reorder and rng.random() < self.reorder:
            late.append([rng.randint(1, 3), data])
            self.counts["reordered"] += 1
        else:
            out.append(data)
        if data and self.duplicate and rng.random() < self.duplicate:
            late.append([rng.randint(1, 4), data])
            self.counts["duplicated"] += 1
        if data:
            for item in late:
                item[0] -= 1
            out += [d for n, d in late if n < 0]
            late[:] = [item for item in late if item[0] >= 0]
        return b"".join(out)

    def _faults(self, way: str, data: bytes) -> bytes:
        if self.directions not in ("both", way):
            return data
        return self._mangle(self._chunk(way, data))

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
        self.inner.write(self._faults("tx", bytes(data)))
        return len(data)

    def read(self, size: int = 1) -> bytes:
        return self._faults("rx", self.inner.read(size))

    def close(self) -> None:
        self.inner.close()


class PtyDevice:
    """Serve ``device`` (``feed(bytes) -> bytes``, optional ``exit_code``) on a pty.

    Open ``path`` with pyserial; :meth:`close` stops the thread and closes the pty. With
    ``boot_s``, the device boots like a board just reset: for ``boot_s`` seconds after
    :meth:`reset` (called on creation) it drops what it receives (counted in ``early``), then
    sends ``banner`` and serves.
    """

    def __init__(self, device, *, boot_s: float | None = None,
                 banner: bytes = b"\r\nsbfw READY\r\n"):
        import tty

        self.device = device
        self.boot_s, self.banner, self.early = boot_s, banner, 0
        self._ready_at = None
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)
        self.path = os.ttyname(self._slave)
        self._stop = threading.Event()
        self.reset()
        self._thread = threading.Thread(target=self._serve, name="pty-device", daemon=True)
        self._thread.start()

    def reset(self) -> None:
        """Start booting again (``boot_s``): deaf, then the banner."""
        if self.boot_s is not None:
            self._ready_at = time.monotonic() + self.boot_s

    def _booting(self) -> bool:
        if self._ready_at is None:
            return False
        if time.monotonic() < self._ready_at:
            return True
        self._ready_at = None
        os.write(self.master, self.banner)
        return False

    def _serve(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master], [], [], 0.02)
            booting = self._booting()
            if not ready:
                continue
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            if booting:
                self.early += len(data)
                continue
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


class PipePort:
    """The pyserial subset a :class:`~sensorbudget.device_sim.link.Link` uses (``write``,
    ``read`` returning after at most ``timeout`` s, ``in_waiting``, ``close``) over two pipe
    ends: ``rx`` (the child's stdout) and ``tx`` (its stdin). After the child has exited, what it
    wrote stays readable; then a read waits ``timeout`` and returns b"" like an idle port."""

    def __init__(self, rx: int, tx: int, *, timeout: float = 0.01):
        self.rx, self.tx, self.timeout = rx, tx, timeout
        self._eof = False

    @property
    def in_waiting(self) -> int:
        buf = bytearray(4)
        fcntl.ioctl(self.rx, termios.FIONREAD, buf)
        return int.from_bytes(buf, "little")

    def read(self, n: int = 1) -> bytes:
        if not self._eof:
            ready, _, _ = select.select([self.rx], [], [], self.timeout)
            if ready:
                data = os.read(self.rx, max(1, n))
                if data:
                    return data
                self._eof = True
                return b""
            return b""
        time.sleep(self.timeout or 0)
        return b""

    def write(self, data) -> int:
        view = memoryview(data)
        while view:
            view = view[os.write(self.tx, view):]
        return len(data)

    def flush(self) -> None:
        """Nothing to do: :meth:`write` returns once the kernel holds every byte."""

    def close(self) -> None:
        for fd in (self.rx, self.tx):
            try:
                os.close(fd)
            except OSError:
                pass
        self.rx = self.tx = -1

