"""The interface every backend implements (:class:`Backend`), and :class:`ProtocolBackend`, a
device spoken to with the framed protocol (:mod:`device_sim.link`, :mod:`device_sim.client`)."""

from __future__ import annotations

import time

from ..client import DeviceClient
from ..errors import DeviceError, DeviceTimeout
from ..link import Link


class Backend:
    """What the replay needs from a device.

    Attributes
    ----------
    name : str
    profile : str
        Cost profile (:data:`device_sim.costs.PROFILES`) the figures refer to.
    measured : bool
        Costs are measured on the backend (False: estimated).
    cost_method, per_extractor_method : str
        How the per-prediction and the per-extractor figures are obtained (for the report).
    last_retried : bool
        The last ``push`` needed link retransmissions.
    """

    name = "backend"
    profile = "cortex-m4f"
    measured = False
    cost_method = "estimated"
    per_extractor_method = ""
    last_retried = False
    max_request = 1024

    def open(self):
        """Start the device; returns its :class:`~device_sim.client.DeviceInfo`."""
        raise NotImplementedError

    def reset(self) -> None:
        raise NotImplementedError

    def push(self, samples) -> list:
        raise NotImplementedError

    def stats(self):
        """(unit, extractors, model) of the last window, or None."""
        return None

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
    """A device spoken to with the framed protocol over a pyserial-like port."""

    measured = True

    def __init__(self, *, timeout=None, retries=4, clock=time.monotonic, wrap=None):
        self.timeout = 0.5 if timeout is None else timeout
        self.retries, self.clock = retries, clock
        self.wrap = wrap            # e.g. a FaultyTransport factory (tests)
        self.client = None
        self.port = None

    def connect(self):
        """Start whatever runs the device and return an open pyserial-like port."""
        raise NotImplementedError

    def open(self):
        self.port = self.connect()
        if self.wrap is not None:
            self.port = self.wrap(self.port)
        link = Link(self.port, timeout=self.timeout, retries=self.retries, clock=self.clock)
        self.client = DeviceClient(link, max_request=self.max_request)
        return self.client.hello()

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
