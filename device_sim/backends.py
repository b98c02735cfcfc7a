"""Backends: one interface over every way of running the model (see :class:`Backend`).

========================  ==================================================================
``python``                :class:`~device_sim.fake.FakeDevice` in-process (reference pipeline;
                          costs are op-count estimates)
``host``                  host-compiled firmware, child process on a pty (pyserial)
``qemu-m4f``/``qemu-m3``  firmware in qemu-system-arm (mps2-an386/an385, ``-icount shift=0``),
                          UART on loopback TCP (pyserial ``socket://``); instruction counts
``unicorn-m4f``           compiled functions called in unicorn; exact per-call instruction counts
``simavr``                ATmega328P at 16 MHz in a libsimavr harness; cycle counts
``serial:URL``            a real board on any pyserial URL or port
========================  ==================================================================

The firmware-based backends live in :mod:`device_sim.emulators` and :mod:`device_sim.unicorn_sim`
and are created through :func:`make_backend`.
"""

from __future__ import annotations

import time

from .client import DeviceClient
from .errors import DeviceError, DeviceTimeout
from .link import Link

BACKENDS = ("python", "host", "qemu-m4f", "qemu-m3", "unicorn-m4f", "simavr", "serial:URL")
#: backend -> (firmware target, cost profile)
TARGETS = {"host": ("host", "host"), "qemu-m4f": ("cortex-m4f", "cortex-m4f"),
           "qemu-m3": ("cortex-m3", "cortex-m3"), "unicorn-m4f": ("cortex-m4f", "cortex-m4f"),
           "simavr": ("avr", "avr"), "python": (None, "cortex-m4f")}


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


class PythonBackend(ProtocolBackend):
    """The reference pipeline in-process, behind the real protocol and link (in memory).

    ``device`` (a :class:`~device_sim.fake.FakeDevice`) and ``wrap`` are for tests.
    """

    name = "python"
    measured = False

    def __init__(self, model, *, profile="cortex-m4f", device=None, sleep=time.sleep,
                 **link_options):
        super().__init__(**link_options)
        from .costs import PROFILES, estimate_costs
        from .fake import FakeDevice

        self.profile = profile
        from .protocol import Unit

        est = estimate_costs(model, PROFILES[profile])
        costs = (round(sum(est["extractors"].values())), round(est["model"]))
        unit = Unit[PROFILES[profile].unit.upper()]
        self.device = (device if device is not None
                       else FakeDevice(model, costs=costs, unit=unit))
        self.sleep = sleep

    def connect(self):
        from .transports import MemoryTransport

        return MemoryTransport(self.device, sleep=self.sleep)



class SerialBackend(ProtocolBackend):
    """A board (or anything) on a pyserial URL or port name: ``serial:/dev/ttyACM0``,
    ``serial:socket://127.0.0.1:4000``, ``serial:loop://`` ..."""

    def __init__(self, url: str, *, baudrate=115200, profile="cortex-m4f", **link_options):
        super().__init__(**link_options)
        self.url, self.baudrate, self.profile = url, baudrate, profile
        self.name = f"serial:{url}"
        self.cost_method = f"reported by the device (STATS), {profile} profile"

    def connect(self):
        import serial

        try:
            return serial.serial_for_url(self.url, baudrate=self.baudrate, timeout=0.01)
        except (serial.SerialException, ValueError) as exc:
            raise DeviceError(f"cannot open {self.url!r}: {exc}") from None


def make_backend(spec: str, *, bundle_dir=None, model=None, workdir=None, profile=None,
                 full_scale=None, **options) -> Backend:
    """The backend called ``spec`` (see the module docstring) for a bundle and numeric format.

    ``workdir`` holds generated and compiled firmware for the firmware-based backends.
    """
    if spec == "python":
        return PythonBackend(model, profile=profile or "cortex-m4f", **options)
    if spec.startswith("serial:"):
        return SerialBackend(spec[len("serial:"):], profile=profile or "cortex-m4f", **options)
    if spec in ("host", "qemu-m4f", "qemu-m3", "simavr"):
        from .emulators import make_emulated

        return make_emulated(spec, bundle_dir=bundle_dir, model=model, workdir=workdir,
                             full_scale=full_scale, **options)
    if spec == "unicorn-m4f":
        from .unicorn_sim import UnicornBackend

        return UnicornBackend(bundle_dir=bundle_dir, model=model, workdir=workdir,
                              full_scale=full_scale, **options)
    raise DeviceError(f"unknown backend {spec!r}; choose one of {', '.join(BACKENDS)}")


def available_backends() -> dict:
    """{backend: None if usable here, else the reason it is not} (tools on PATH, modules)."""
    import importlib.util
    import shutil

    need = {"host": ["gcc"], "qemu-m4f": ["arm-none-eabi-gcc", "qemu-system-arm"],
            "qemu-m3": ["arm-none-eabi-gcc", "qemu-system-arm"],
            "unicorn-m4f": ["arm-none-eabi-gcc"], "simavr": ["avr-gcc", "gcc"]}
    out = {"python": None}
    fw = importlib.util.find_spec("firmware_gen.build") is not None
    for name, tools in need.items():
        missing = [t for t in tools if shutil.which(t) is None]
        if not fw:
            out[name] = "firmware_gen is not available"
        elif missing:
            out[name] = f"{missing[0]} is not installed"
        else:
            out[name] = None
    if out.get("unicorn-m4f") is None:
        for mod in ("unicorn", "elftools"):
            if importlib.util.find_spec(mod) is None:
                out["unicorn-m4f"] = (f"python module {mod} is not installed "
                                      f"(pip install 'sensorbudget[sim]')")
    if out.get("simavr") is None and not _has_simavr_headers():
        out["simavr"] = "libsimavr-dev (simavr headers) is not installed"
    return out


def _has_simavr_headers() -> bool:
    from pathlib import Path

    return any(Path(p, "simavr", "sim_avr.h").is_file() for p in ("/usr/include",
                                                                  "/usr/local/include"))


def best_backend() -> str:
    """The most informative backend usable here (measured costs preferred)."""
    usable = available_backends()
    for name in ("qemu-m4f", "unicorn-m4f", "simavr", "qemu-m3", "host", "python"):
        if usable.get(name) is None:
            return name
    return "python"
