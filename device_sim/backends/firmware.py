"""Firmware backends: the generated firmware built for a target and run as a child process.

- ``host``: the host build on a pty (the child gets the pty master as stdin/stdout, pyserial
  opens the slave; the port is opened *before* the child starts, so nothing it sends is lost).
- ``qemu-m4f`` / ``qemu-m3``: the emulation-only ``mps2-an386`` / ``mps2-an385`` images on
  ``qemu-system-arm -icount shift=8``; ``qemu-nucleo-f4``: the ``nucleo-f4`` board image on QEMU
  ``netduinoplus2`` (``-icount shift=5``). Exact instruction counts. Built with
  :data:`SEMIHOST_LINK`: the protocol runs on QEMU's semihosting console (its stdin/stdout on
  pipes), 2 KiB per call, not on the modelled UART, which QEMU feeds one byte per main-loop round
  (PROTOCOL.md, *Emulation links*). :func:`launch` without ``semihost`` runs an image built
  without it on its UART: a loopback TCP socket it listens on (``nodelay=on``), pyserial ``socket://``.
  ``qemu-hifive1``: the ``hifive1`` board image (FE310-G002) on ``qemu-system-riscv32 -M
  sifive_e,revb=true -icount shift=0`` (minstret: exact instruction counts); the UART on a
  loopback TCP socket, pyserial ``socket://``. Exact instruction counts.
- ``simavr``: the ``arduino-uno`` image in the libsimavr harness (``sbfw_simavr``) bridging
  USART0 to a pty; cycle counts; built with the UART at 2 Mbaud (:data:`SIMAVR_FAST_UART`).
  (:func:`launch` with ``emulator="qemu"`` runs the same image on qemu-system-avr: a functional
  check, no costs.)

Board images announce themselves with a READY banner after a reset; :func:`launch` waits for it.

The firmware is generated from the replay's :class:`~sensorbudget.device_sim.reference.ReferenceModel` (its
bundle and its :class:`~sensorbudget.firmware_gen.plan.FirmwarePlan`, so the device and the reference share
one plan) and compiled with :mod:`firmware_gen` (what ``sensorbudget firmware BUNDLE --target T
--numeric N -o DIR --build`` does). :func:`launch` starts any built firmware directory; it is the
one launcher of the project (the firmware tests and benchmarks use it too).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import serial

from sensorbudget.firmware_gen.build import (FOOTPRINT, build, build_simavr_harness, read_manifest,
                                             record_stack, write_firmware)
from sensorbudget.firmware_gen.boards import measurers
from sensorbudget.firmware_gen.firmware import generate_firmware
from sensorbudget.firmware_gen.targets import get_target, run_command

from ..errors import DeviceError, DeviceTimeout
from ..transports import PipePort
from .base import ProtocolBackend, wait_ready

#: backend -> (firmware target, emulator, cost method, default answer timeout in s): the
#: registry's measuring backends that run a whole image (firmware_gen.boards)
SPECS = {name: (board.name, how.emulator, how.method, how.timeout_s)
         for name, (board, how) in measurers().items() if how.kind == "firmware"}
READY_S = 20.0            # an emulated board must send its READY banner within this time
STOP_S = 5.0              # a terminated firmware process must exit within this time


#: the make variable of a Cortex-M image whose link runs over QEMU's semihosting console
SEMIHOST_LINK = {"EXTRA_CFLAGS": "-DSBFW_SEMIHOST_LINK"}
#: the Uno image in simavr with its UART at 2 Mbaud (UBRR0 = 0 with U2X0; the board's is 115200):
#: simavr times the UART in simulated cycles, 1389 per byte at 115200 (a 6-byte sample costs
#: more cycles than its share of a window's extractors), 80 at 2 Mbaud. Timed regions never
#: include the UART, so the cycle counts are those of the board image.
SIMAVR_FAST_UART = {"EXTRA_CFLAGS": "-DSBFW_BAUD=2000000UL"}


def build_firmware(model, target: str, out_dir, *, make_vars=None) -> dict:
    """Generate the firmware of ``model`` (a :class:`~sensorbudget.device_sim.reference.ReferenceModel`: its
    bundle and plan) for ``target`` into ``out_dir`` and compile it (and the simavr harness for
    AVR) with ``make_vars`` (e.g. :data:`SEMIHOST_LINK`); returns its manifest (firmware.json).
    Build failures raise FirmwareGenError."""
    fw = generate_firmware(model.bundle, target=target, numeric=model.numeric,
                           name=model.plan.name, plan=model.plan)
    write_firmware(fw, out_dir)
    fp = build(out_dir, make_vars=make_vars)
    (Path(out_dir) / FOOTPRINT).write_text(json.dumps(fp, indent=2, sort_keys=True) + "\n",
                                           encoding="ascii")    # record_stack adds the stack
    if get_target(target).arch == "avr":
        build_simavr_harness(out_dir)
    return fw.manifest


class FirmwareProcess:
    """A running firmware: the child process ``proc`` and a pyserial ``port`` on its UART.

    ``keep_fd`` (pty targets) is the pty master, kept open until :meth:`close` so that the last
    answer (e.g. to QUIT) can still be read after the child has exited.
    """

    def __init__(self, proc, port, name: str, keep_fd=None):
        self.proc, self.port, self.name, self.keep_fd = proc, port, name, keep_fd

    def wait(self, timeout: float = 10.0) -> int | None:
        """The exit status, or None if the process is still running after ``timeout`` s."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def close(self, grace: float = 0.0) -> None:
        """Close the port, give the process ``grace`` s to exit, then terminate (kill) it."""
        try:
            self.port.close()
        except OSError:
            pass
        if self.proc.poll() is None and (grace <= 0 or self.wait(grace) is None):
            self.proc.terminate()
            if self.wait(STOP_S) is None:
                self.proc.kill()
                self.proc.wait()
        if self.keep_fd is not None:
            try:
                os.close(self.keep_fd)
            except OSError:
                pass
            self.keep_fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _spawn(argv, log: Path, **kw) -> subprocess.Popen:
    with open(log, "wb") as stderr:
        try:
            return subprocess.Popen(argv, stderr=stderr, **kw)
        except OSError as exc:
            raise DeviceError(f"cannot start {argv[0]!r}: {exc}") from None


def _on_pty(argv, log: Path, name: str, poll: float) -> FirmwareProcess:
    """Run ``argv`` with a pty as stdin/stdout; the port (opened first) is the other side."""
    master, slave = os.openpty()
    port = None
    try:
        port = serial.serial_for_url(os.ttyname(slave), timeout=poll)   # before the child
        proc = _spawn(argv, log, stdin=master, stdout=master, close_fds=True)
    except BaseException:
        if port is not None:
            port.close()
        os.close(master)
        raise
    finally:
        os.close(slave)
    return FirmwareProcess(proc, port, name, keep_fd=master)


def _on_pipes(argv, log: Path, name: str, poll: float) -> FirmwareProcess:
    """Run ``argv`` with pipes as stdin/stdout (:class:`~sensorbudget.device_sim.transports.
    PipePort` is the other side)."""
    to_child, from_child = os.pipe(), os.pipe()
    try:
        proc = _spawn(argv, log, stdin=to_child[0], stdout=from_child[1], close_fds=True)
    except BaseException:
        for fd in (*to_child, *from_child):
            os.close(fd)
        raise
    os.close(to_child[0])
    os.close(from_child[1])
    return FirmwareProcess(proc, PipePort(from_child[0], to_child[1], timeout=poll), name)


def _on_qemu(argv, log: Path, name: str, poll: float) -> FirmwareProcess:
    """Run QEMU with its UART on a loopback TCP socket that this process binds and listens on
    before QEMU starts (QEMU inherits it: ``-chardev socket,fd=N,server=on``), then connect.
    Nothing is left to chance: no port picked free and bound later (another QEMU started in
    between could take it, and this one then waited for its client forever: a rare 'no READY
    banner within 20 s' when images ran two at a time), no connect before anyone listens (which
    can end in a connection to itself)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        fd, tcp = listener.fileno(), listener.getsockname()[1]
        uart = f"socket,id=sbfw_uart,fd={fd},server=on,wait=on,nodelay=on"
        proc = _spawn(argv[:-2] + ["-chardev", uart, "-serial", "chardev:sbfw_uart"], log,
                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, pass_fds=(fd,))
        try:
            port = serial.serial_for_url(f"socket://127.0.0.1:{tcp}", timeout=poll)
        except serial.SerialException as exc:
            proc.kill()
            proc.wait()
            raise DeviceError(f"cannot connect to QEMU's UART on port {tcp}: {exc}") from None
    return FirmwareProcess(proc, port, name)


def _semihost_argv(argv: list) -> list:
    """QEMU's argv with the UART server replaced by a null serial port: a SEMIHOST_LINK image
    speaks the protocol on QEMU's stdin/stdout (semihosting ``:tt``)."""
    return argv[:-1] + ["null"]


def launch(out_dir, *, harness=None, log=None, poll: float = 0.01,
           emulator: str | None = None, semihost: bool = False) -> FirmwareProcess:
    """Start the built firmware in ``out_dir`` for its target (host process on a pty, QEMU on
    loopback TCP, simavr on a pty), connect to its UART and, for a board image, wait for its
    READY banner (so nothing is sent before its receiver is on).

    ``semihost``: the image was built with :data:`SEMIHOST_LINK` (Cortex-M on QEMU): QEMU runs
    with its stdin/stdout on pipes, where the firmware's link is, and no UART server. QEMU moves
    a modelled UART's bytes one per round trip of its main loop (about 30-60 us each, whatever
    the host sends at once); a semihosting read moves up to 2 KiB per call.

    ``emulator`` is one of the target's (:func:`sensorbudget.firmware_gen.targets.run_command`; default its
    first: ``simavr`` for the Uno, ``qemu`` for qemu-system-avr); ``harness`` is the
    ``sbfw_simavr`` executable (default: ``out_dir/sbfw_simavr``); the child's stderr goes to
    ``log`` (default: ``out_dir/<target>.stderr.log``); ``poll`` is the port's read timeout in s.
    """
    out = Path(out_dir)
    target = get_target(read_manifest(out)["target"])
    exe = out / target.exe
    if not exe.is_file():
        raise DeviceError(f"{str(exe)!r} is missing: build the firmware first")
    emulator = emulator or target.emulators[0]
    log = Path(log) if log is not None else out / f"{target.name}.stderr.log"
    if emulator == "qemu" and semihost:
        process = _on_pipes(_semihost_argv(run_command(target, out, 1, emulator)), log,
                            f"qemu {target.qemu_machine} (semihosting link)", poll)
    elif emulator == "qemu":
        process = _on_qemu(run_command(target, out, None, emulator), log,
                           f"qemu {target.qemu_machine}", poll)
    elif emulator == "simavr":
        argv = run_command(target, out, emulator=emulator)
        if harness is not None:
            argv[0] = str(harness)
        if not Path(argv[0]).is_file():
            raise DeviceError(f"{argv[0]!r} is missing: build it with "
                              f"sensorbudget.firmware_gen.build.build_simavr_harness or 'make sim'")
        process = _on_pty(argv, log, "simavr atmega328p", poll)
    else:
        return _on_pty(run_command(target, out, emulator=emulator), log, "host", poll)
    try:
        wait_ready(process.port, READY_S, process.name)
    except DeviceTimeout:
        code = process.proc.poll()
        process.close()
        if code is not None:
            err = log.read_text(errors="replace").strip()[-400:] if log.is_file() else ""
            raise DeviceError(f"{process.name} exited with status {code} before its READY "
                              f"banner (stderr in {log}: {err or 'empty'})") from None
        raise
    except BaseException:
        process.close()
        raise
    return process


class FirmwareBackend(ProtocolBackend):
    """Build the firmware for ``spec``'s target, start it, and speak the protocol to it."""

    def __init__(self, spec: str, *, model, workdir, timeout=None, retries=4,
                 clock=time.monotonic, firmware_dir=None, wrap=None):
        target, emulator, method, default_timeout = SPECS[spec]
        super().__init__(timeout=timeout or default_timeout, retries=retries, clock=clock,
                         wrap=wrap)
        self.name, self.target, self.cost_method = spec, target, method
        self.emulator = emulator
        self.profile = target          # the costed board (make_backend's board= overrides)
        self.model = model
        self.out_dir = (Path(firmware_dir) if firmware_dir
                        else Path(workdir) / f"fw-{spec}-{model.numeric}")
        self.process = None
        self.fw = None
        # pty / semihosting: buffered (ProtocolBackend.in_flight). simavr: 2; its harness stalls
        # with 4 or more Uno-sized frames (~260 bytes) in flight (not diagnosed yet). The
        # semihosting console: 32, topped up 16 at a time, as the firmware sends its answers
        # (SBFW_SH_ANSWERS; host CPU per replayed hour 0.57-0.70 s at 8, 0.47-0.52 s at 32)
        self.in_flight = 2 if emulator == "simavr" else 32 if self.semihost else 8

    @property
    def semihost(self) -> bool:
        """QEMU runs Cortex-M images with the semihosting link (launch)."""
        return self.emulator == "qemu" and get_target(self.target).arch != "avr"

    def build(self) -> dict:
        if self.fw is None:
            make_vars = (SEMIHOST_LINK if self.semihost else
                         SIMAVR_FAST_UART if self.emulator == "simavr" else None)
            self.fw = build_firmware(self.model, self.target, self.out_dir, make_vars=make_vars)
            self.max_request = int(self.fw.get("max_request_payload", self.max_request))
        return self.fw

    def connect(self):
        self.build()
        self.process = launch(self.out_dir, log=self.out_dir / f"{self.name}.stderr.log",
                              emulator=self.emulator, semihost=self.semihost)
        return self.process.port

    def close(self) -> None:
        super().close()
        if self.process is not None:
            self.process.close(grace=2.0)     # after QUIT the firmware exits by itself
            self.process = None

    def stack_usage(self) -> dict | None:
        """After the run (:meth:`close`): the stack entries of the firmware's footprint
        (:func:`sensorbudget.firmware_gen.build.record_stack`: the high-water mark the exit
        printed into this backend's log, or why there is none); None before a build."""
        if self.fw is None:
            return None
        return record_stack(self.out_dir, self.out_dir / f"{self.name}.stderr.log",
                            f"{self.name} ({self.emulator})")

    @property
    def exit_code(self):
        return None if self.process is None else self.process.proc.poll()
