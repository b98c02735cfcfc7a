"""The interface every backend implements (:class:`Backend`), and :class:`ProtocolBackend`, a
device spoken to with the framed protocol (:mod:`sensorbudget.device_sim.link`, :mod:`sensorbudget.device_sim.client`).

Board images send a READY banner (``sbfw_hal.h``'s ``SBFW_READY_BANNER``) once after a reset,
before any frame. :func:`wait_ready` reads up to it. A board that resets when its port is opened
(an Arduino Uno: DTR pulses its reset line, then its bootloader waits about a second) must not be
sent anything before it: :meth:`ProtocolBackend.open` waits for the banner on such ports
(:func:`resets_on_open`: USB serial chips of Arduino boards) before the HELLO handshake.
"""

from __future__ import annotations

import time

import serial

from sensorbudget.firmware_gen.boards import DEFAULT_BOARD

from ..client import DeviceClient
from ..errors import DeviceError, DeviceTimeout
from ..link import Link

READY = b"sbfw READY\r\n"  # SBFW_READY_BANNER (sbfw_hal.h) without its leading line break
READY_WAIT_S = 4.0        # a board that resets on open must send its banner within this time
#: USB vendor ids of serial bridges whose DTR resets the board when the port opens: Arduino
#: (ATmega16U2 firmware), Arduino SRL, WCH CH340 (clones), FTDI, Silicon Labs CP210x.
RESET_ON_OPEN_VIDS = frozenset({0x2341, 0x2A03, 0x1A86, 0x0403, 0x10C4})


def resets_on_open(url: str) -> bool:
    """Whether opening serial port ``url`` resets the board behind it (by its USB vendor id;
    False for ST-LINK and other debuggers, ptys, sockets and unknown ports)."""
    try:
        from serial.tools import list_ports

        ports = list_ports.comports()
    except (ImportError, OSError):
        return False
    return any(p.device == url and p.vid in RESET_ON_OPEN_VIDS for p in ports)


def wait_ready(port, timeout: float, what: str) -> bytes:
    """Read ``port`` until the firmware's READY banner; returns what came before it.
    DeviceTimeout when it does not come within ``timeout`` s."""
    seen = b""
    deadline = time.monotonic() + timeout
    while READY not in seen:
        if time.monotonic() > deadline:
            raise DeviceTimeout(f"{what} sent no READY banner within {timeout:g} s (received "
                                f"{seen[-60:]!r}): is the sensorbudget firmware on it, at "
                                f"115200 baud?")
        try:
            seen += port.read(max(1, min(64, port.in_waiting)))
        except (serial.SerialException, OSError) as exc:
            raise DeviceError(f"{what} closed its port before the READY banner: {exc}") from None
    return seen[:seen.index(READY)]


class Backend:
    """What the replay needs from a device.

    Attributes
    ----------
    name : str
    profile : str
        The costed board (:data:`sensorbudget.device_sim.costs.PROFILES`): the board the
        measured figures are priced with, which need not be the board whose image measures.
    measured : bool
        Costs are measured on the backend (False: estimated).
    cost_method, per_extractor_method : str
        How the per-prediction and the per-extractor figures are obtained (for the report).
    last_retried : bool
        The last ``push`` needed link retransmissions.
    """

    name = "backend"
    profile = DEFAULT_BOARD
    measured = False
    cost_method = "estimated"
    per_extractor_method = ""
    last_retried = False
    max_request = 1024

    def open(self):
        """Start the device; returns its :class:`~sensorbudget.device_sim.client.DeviceInfo`."""
        raise NotImplementedError

    def reset(self) -> None:
        raise NotImplementedError

    def push(self, samples) -> list:
        raise NotImplementedError

    def push_events(self, events) -> list:
        """[(window, scores)] of a multi-rate device's events ((count, encoded events))."""
        raise NotImplementedError

    def stats(self):
        """(unit, extractors, model, pushes) of the last window (pushes None: not measured),
        or None."""
        return None

    def exchange(self, requests):
        """Answers of ``requests`` (``("push", samples)``, ``("events", events)`` or
        ``("stats", None)``) in order: [(window, scores)] of a push, (unit, extractors, model,
        pushes) or None of a STATS. Here one at a time; :class:`ProtocolBackend` keeps
        ``in_flight`` requests on the link at once."""
        for kind, samples in requests:
            yield (self.push(samples) if kind == "push" else
                   self.push_events(samples) if kind == "events" else self.stats())

    def bench(self, reps: int, part: str):
        """(unit, total) of ``reps`` runs of ``part`` ("model"/"extractors"), or None."""
        return None

    def per_extractor(self):
        """{feature name: cost of its extractor per window} when measured per call, else None."""
        return None

    def link_stats(self) -> dict:
        return {}

    def quit(self) -> None:
        """Ask the device to exit (end of a session)."""

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class ProtocolBackend(Backend):
    """A device spoken to with the framed protocol over a pyserial-like port.

    ``in_flight``: requests on the link at once during a replay (:meth:`exchange`). 1 for a
    board on a serial port: its UART receiver holds one byte while the firmware computes a
    window, so bytes sent meanwhile would be lost. Backends whose device reads from a buffered
    channel (a pty, memory, QEMU's semihosting console) keep several frames in flight.
    """

    measured = True
    in_flight = 1

    def __init__(self, *, timeout=None, retries=4, clock=time.monotonic, wrap=None,
                 ready_timeout=None):
        self.timeout = 0.5 if timeout is None else timeout
        # seconds to wait for the READY banner after opening; None: READY_WAIT_S on a port that
        # resets its board (resets_on_open of the backend's ``url``), else none
        self.ready_timeout = ready_timeout
        self.retries, self.clock = retries, clock
        self.wrap = wrap            # e.g. a FaultyTransport factory (tests)
        self.client = None
        self.port = None

    def connect(self):
        """Start whatever runs the device and return an open pyserial-like port."""
        raise NotImplementedError

    def _ready_wait(self) -> float:
        if self.ready_timeout is not None:
            return self.ready_timeout
        url = getattr(self, "url", None)
        return READY_WAIT_S if url and resets_on_open(url) else 0.0

    def open(self):
        self.port = self.connect()
        wait, missing = self._ready_wait(), None
        if wait > 0:
            try:
                wait_ready(self.port, wait, self.name)
            except DeviceTimeout as exc:
                missing = str(exc)       # maybe it was running already: HELLO will tell
        if self.wrap is not None:
            self.port = self.wrap(self.port)
        link = Link(self.port, timeout=self.timeout, retries=self.retries, clock=self.clock)
        self.client = DeviceClient(link, max_request=self.max_request)
        try:
            return self.client.hello()
        except DeviceTimeout as exc:
            if missing is None:
                raise
            raise DeviceTimeout(f"{missing}; and no answer to HELLO: {exc}") from None

    def reset(self) -> None:
        self.client.reset()

    def push(self, samples) -> list:
        out = self.client.push(samples)
        self.last_retried = self.client.last_retried
        return out

    def stats(self):
        try:
            return self.client.stats()
        except DeviceTimeout:
            return None

    def exchange(self, requests):
        for answer in self.client.exchange(requests, self.in_flight):
            self.last_retried = self.client.last_retried
            yield answer

    def bench(self, reps: int, part: str):
        # a benchmark of many repetitions may take far longer than one request
        link = self.client.link
        saved, link.timeout = link.timeout, max(link.timeout, 30.0)
        try:
            return self.client.bench(reps, part)
        finally:
            link.timeout = saved

    def link_stats(self) -> dict:
        return {} if self.client is None else self.client.link.stats.as_dict()

    def quit(self) -> None:
        if self.client is not None:
            try:
                self.client.quit(0)
            except DeviceError:
                pass

    def close(self) -> None:
        if self.port is not None:
            try:
                self.port.close()
            except OSError:
                pass
            self.port = None
