"""Firmware backends: the generated firmware built for a target and run as a child process.

- ``host``: the host build on a pty (the child gets the pty master as stdin/stdout, pyserial
  opens the slave; the port is opened *before* the child starts, so nothing it sends is lost).
- ``qemu-m4f`` / ``qemu-m3``: ``qemu-system-arm -M mps2-an386 / mps2-an385 -icount shift=0``, the
  UART on a loopback TCP server (``nodelay=on``), pyserial ``socket://``.
- ``simavr``: the firmware's libsimavr harness (``sbfw_simavr``) bridging USART0 to a pty.

The firmware is generated and compiled with :mod:`firmware_gen` (what ``sensorbudget firmware
BUNDLE --target T --numeric N -o DIR --build`` does); its manifest ``firmware.json`` gives the
channels, full scales and payload limits, which are checked against the replay's
:class:`~device_sim.reference.ReferenceModel`.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

from .backends import ProtocolBackend
from .errors import DeviceError

SPECS = {  # backend -> (firmware target, cost method, default answer timeout in s)
    "host": ("host", "host CLOCK_MONOTONIC nanoseconds (host time, not a target cost)", 2.0),
    "qemu-m4f": ("cortex-m4f", "QEMU -icount shift=0 instruction count (SysTick ticks x 40)",
                 5.0),
    "qemu-m3": ("cortex-m3", "QEMU -icount shift=0 instruction count (SysTick ticks x 40)", 5.0),
    "simavr": ("avr", "simavr cycle count (Timer1 at clk/1), ATmega328P at 16 MHz", 10.0),
}
PROFILE_OF = {"host": "host", "cortex-m4f": "cortex-m4f", "cortex-m3": "cortex-m3", "avr": "avr"}


def build_firmware(bundle_dir, target: str, numeric: str, out_dir, full_scale=None) -> dict:
    """Generate and compile the firmware (and the simavr harness for AVR) into ``out_dir``;
    returns its manifest (firmware.json). Build failures raise FirmwareGenError."""
    from firmware_gen.build import build, build_simavr_harness, write_firmware
    from firmware_gen.firmware import generate_firmware
    from trainer.bundle.model import load_bundle

    fw = generate_firmware(load_bundle(bundle_dir), target=target, numeric=numeric,
                           full_scale=full_scale)
    write_firmware(fw, out_dir)
    build(out_dir)
    if target == "avr":
        build_simavr_harness(out_dir)
    return fw.manifest


def check_plan(fw: dict, model) -> None:
    """The built firmware reads the channels (and full scales) the replay sends."""
    channels = fw.get("channels")
    if channels is not None and list(channels) != list(model.channels):
        raise DeviceError(f"the firmware reads channels {channels}; the replay sends "
                          f"{model.channels}")
    scales = fw.get("full_scale")
    if model.plan.fixed and scales is not None:
        if isinstance(scales, dict):
            scales = [scales[c] for c in model.channels]
        if [float(s) for s in scales] != [float(s) for s in model.plan.full_scale]:
            raise DeviceError(f"the firmware's full scales {scales} differ from the replay's "
                              f"{list(model.plan.full_scale)}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FirmwareBackend(ProtocolBackend):
    """Build the firmware for ``spec``'s target, start it, and speak the protocol to it."""

    def __init__(self, spec: str, *, bundle_dir, model, workdir, full_scale=None, timeout=None,
                 retries=4, clock=time.monotonic, firmware_dir=None, wrap=None):
        target, method, default_timeout = SPECS[spec]
        super().__init__(timeout=timeout or default_timeout, retries=retries, clock=clock,
                         wrap=wrap)
        self.name, self.target, self.cost_method = spec, target, method
        self.profile = PROFILE_OF[target]
        self.model, self.bundle_dir = model, bundle_dir
        self.full_scale = full_scale
        self.out_dir = (Path(firmware_dir) if firmware_dir
                        else Path(workdir) / f"fw-{spec}-{model.numeric}")
        self.proc = None
        self._pty = None
        self.fw = None

    def build(self) -> dict:
        if self.fw is None:
            self.fw = build_firmware(self.bundle_dir, self.target, self.model.numeric,
                                     self.out_dir, self.full_scale)
            check_plan(self.fw, self.model)
            self.max_request = int(self.fw.get("max_request_payload", self.max_request))
        return self.fw

    def _argv(self, port=None) -> list:
        from firmware_gen.targets import get_target, run_command

        return run_command(get_target(self.target), self.out_dir, port)

    def _spawn(self, argv, **kw) -> None:
        log = open(self.out_dir / f"{self.name}.stderr.log", "wb")
        try:
            self.proc = subprocess.Popen(argv, stderr=log, **kw)
        except OSError as exc:
            raise DeviceError(f"cannot start {argv[0]!r}: {exc}") from None
        finally:
            log.close()

    def connect(self):
        import serial

        self.build()
        if self.target in ("host", "avr"):
            master, slave = os.openpty()
            self._pty = (master, slave)
            port = serial.serial_for_url(os.ttyname(slave), timeout=0.01)   # before the child
            self._spawn(self._argv(), stdin=master, stdout=master, close_fds=True)
            return port
        tcp = free_port()
        self._spawn(self._argv(tcp), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 10.0
        while True:
            try:
                return serial.serial_for_url(f"socket://127.0.0.1:{tcp}", timeout=0.01)
            except serial.SerialException as exc:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    log = self.out_dir / f"{self.name}.stderr.log"
                    raise DeviceError(f"QEMU did not open its UART on port {tcp}: {exc} "
                                      f"(see {log})") from None
                time.sleep(0.05)

    def close(self) -> None:
        super().close()
        if self.proc is not None:
            try:
                self.proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=2.0)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc = None
        for fd in self._pty or ():
            try:
                os.close(fd)
            except OSError:
                pass
        self._pty = None

    @property
    def exit_code(self):
        return None if self.proc is None else self.proc.poll()


def make_emulated(spec: str, **kw) -> FirmwareBackend:
    return FirmwareBackend(spec, **kw)
