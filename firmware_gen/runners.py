"""Run a built firmware and talk to it: host (pty), Cortex-M (QEMU, loopback TCP), AVR (simavr).

:func:`start` launches the firmware in ``out_dir`` for its target and returns a
:class:`Session` holding a pyserial port to it; :meth:`Session.request` sends one frame and waits
for the answer with the same ``seq``. This is the minimal client the tests and the benchmark
use; ``device_sim`` has the full link (retries, statistics, replay).
"""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import time
from pathlib import Path

from .build import read_manifest, require_tool
from .errors import FirmwareGenError
from .targets import get_target, run_command

CMD = {"HELLO": 0x01, "PUSH_SAMPLES": 0x02, "PREDICT": 0x03, "BENCH": 0x04, "STATS": 0x05,
       "RESET": 0x06, "QUIT": 0x7E, "ERROR": 0x7F}


class Session:
    """A running firmware process and a pyserial-like ``port`` connected to its UART."""

    def __init__(self, proc, port, name):
        from device_sim.protocol import FrameDecoder

        self.proc, self.port, self.name = proc, port, name
        self.decoder = FrameDecoder()
        self.pending = []
        self.seq = 0
        self.keep_fd = None

    def write(self, data: bytes) -> None:
        self.port.write(data)
        self.port.flush()

    def frames(self, timeout: float = 5.0, count: int = 1) -> list:
        """Wait until ``count`` frames have arrived (or the timeout); returns those received."""
        import serial

        deadline = time.monotonic() + timeout
        while len(self.pending) < count and time.monotonic() < deadline:
            try:
                # a socket port reports 1 when readable; reading more could lose data at EOF
                data = self.port.read(max(1, self.port.in_waiting))
            except (serial.SerialException, OSError):
                break                       # the device has exited (EIO on a pty)
            if data:
                self.pending += self.decoder.feed(data)
            elif self.proc.poll() is not None:
                break
        out, self.pending = self.pending[:count], self.pending[count:]
        return out

    def request(self, cmd: int, payload: bytes = b"", *, seq: int | None = None,
                timeout: float = 10.0) -> tuple:
        """Send one request; returns the answer ``(cmd, payload)`` (raises on a timeout)."""
        from device_sim.protocol import encode_frame

        if seq is None:
            seq, self.seq = self.seq, (self.seq + 1) & 0xFF
        self.write(encode_frame(seq, cmd, payload))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for rseq, rcmd, rpayload in self.frames(deadline - time.monotonic()):
                if rseq == seq:
                    return rcmd, rpayload
        raise FirmwareGenError(f"{self.name}: no answer to command 0x{cmd:02x} (seq {seq}) "
                               f"within {timeout} s")

    def call(self, cmd: int, payload: bytes = b"", **kw) -> bytes:
        """Like :meth:`request`, but returns the payload and raises on an ERROR answer."""
        rcmd, data = self.request(cmd, payload, **kw)
        if rcmd != (cmd | 0x80):
            raise FirmwareGenError(f"{self.name}: command 0x{cmd:02x} answered 0x{rcmd:02x} "
                                   f"{data.hex()}")
        return data

    def bench(self, reps: int, part: int, timeout: float = 120.0) -> tuple:
        """(unit code, total) of ``reps`` repetitions of part 0 (model) or 1 (extractors)."""
        return struct.unpack("<BQ", self.call(CMD["BENCH"], struct.pack("<IB", reps, part),
                                              timeout=timeout))

    def quit(self, code: int = 0, timeout: float = 10.0) -> int | None:
        """Send QUIT; returns the process exit status."""
        self.call(CMD["QUIT"], bytes([code]))
        return self.wait(timeout)

    def wait(self, timeout: float = 10.0) -> int | None:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> None:
        try:
            self.port.close()
        except OSError:
            pass
        if self.keep_fd is not None:
            os.close(self.keep_fd)
            self.keep_fd = None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _on_pty(argv, name) -> Session:
    """Run ``argv`` with a pty as stdin/stdout; the port (opened first) is the other side."""
    import serial

    master, slave = os.openpty()
    try:
        port = serial.Serial(os.ttyname(slave), timeout=0.005)   # raw mode before the child
        proc = subprocess.Popen(argv, stdin=master, stdout=master, stderr=subprocess.DEVNULL,
                                close_fds=True)
    except BaseException:
        os.close(master)
        raise
    finally:
        os.close(slave)
    session = Session(proc, port, name)
    session.keep_fd = master    # keeps the pty (and the last answer) alive after the child exits
    return session


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _on_qemu(argv, port_number, name) -> Session:
    import serial

    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while True:
        try:
            port = serial.serial_for_url(f"socket://127.0.0.1:{port_number}", timeout=0.005)
            return Session(proc, port, name)
        except serial.SerialException:
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode(errors="replace") if proc.poll() is not None \
                    else "timeout"
                proc.kill()
                raise FirmwareGenError(f"QEMU did not start: {err.strip()[-400:]}") from None
            time.sleep(0.05)


def start(out_dir, *, harness=None) -> Session:
    """Start the built firmware in ``out_dir`` (host process, QEMU or simavr) and connect.

    ``harness`` is the ``sbfw_simavr`` executable for AVR (default: ``out_dir/sbfw_simavr``).
    """
    out = Path(out_dir)
    manifest = read_manifest(out)
    target = get_target(manifest["target"])
    exe = out / target.exe
    if not exe.is_file():
        raise FirmwareGenError(f"{str(exe)!r} is missing: build the firmware first")
    if target.qemu_machine:
        require_tool("qemu-system-arm", "run Cortex-M firmware")
        port = free_port()
        return _on_qemu(run_command(target, out, port), port, f"qemu {target.qemu_machine}")
    if target.name == "avr":
        harness = Path(harness) if harness is not None else out / "sbfw_simavr"
        if not harness.is_file():
            raise FirmwareGenError(f"{str(harness)!r} is missing: build it with "
                                   f"firmware_gen.build.build_simavr_harness or 'make sim'")
        return _on_pty([str(harness), str(exe), "atmega328p", "16000000"], "simavr atmega328p")
    return _on_pty([str(exe)], "host")
