"""Backends without firmware: the reference pipeline in-process (``python``) and a board on a
pyserial URL or port (``serial:URL``)."""

from __future__ import annotations

import time

import serial

from sensorbudget.firmware_gen.boards import DEFAULT_BOARD

from ..costs import estimate_costs, get_cost_profile
from ..errors import DeviceError
from ..fake import FakeDevice
from ..fake_multirate import FakeMultiRateDevice
from ..protocol import Unit
from ..transports import MemoryTransport
from .base import ProtocolBackend


class PythonBackend(ProtocolBackend):
    """The reference pipeline in-process, behind the real protocol and link (in memory).

    ``device`` (a :class:`~sensorbudget.device_sim.fake.FakeDevice`) and ``wrap`` are for tests.
    """

    name = "python"
    measured = False
    in_flight = 8

    def __init__(self, model, *, profile=DEFAULT_BOARD, device=None, sleep=time.sleep,
                 **link_options):
        super().__init__(**link_options)
        prof = get_cost_profile(profile)
        self.profile = prof.name
        est = estimate_costs(model, prof)
        costs = (round(sum(est["extractors"].values()) + sum(est["transforms"].values())),
                 round(est["model"]), round(sum(est["pushes"].values())),
                 round(sum(est["first_pushes"].values())))
        unit = Unit[prof.unit.upper()]
        fake = FakeMultiRateDevice if getattr(model, "multi_rate", False) else FakeDevice
        self.device = device if device is not None else fake(model, costs=costs, unit=unit)
        self.sleep = sleep

    def connect(self):
        return MemoryTransport(self.device, sleep=self.sleep)


class SerialBackend(ProtocolBackend):
    """A board (or anything) on a pyserial URL or port name: ``serial:/dev/ttyACM0``,
    ``serial:socket://127.0.0.1:4000``, ``serial:loop://`` ..."""

    def __init__(self, url: str, *, baudrate=115200, profile=DEFAULT_BOARD, **link_options):
        super().__init__(**link_options)
        self.url, self.baudrate = url, baudrate
        self.profile = get_cost_profile(profile).name
        self.name = f"serial:{url}"
        self.cost_method = f"reported by the device (STATS), {self.profile} profile"

    def connect(self):
        """Open the port locked (``flock(LOCK_EX | LOCK_NB)`` on POSIX serial devices), so a
        second host on the same device is refused instead of interleaving frames with ours."""
        try:
            return serial.serial_for_url(self.url, baudrate=self.baudrate, timeout=0.01,
                                         exclusive=True)
        except (serial.SerialException, ValueError) as exc:
            if "exclusively lock" in str(exc):
                raise DeviceError(f"{self.url} is in use by another host (the port is locked): "
                                  f"close the other session first") from None
            raise DeviceError(f"cannot open {self.url!r}: {exc}") from None
