"""Replay recorded sensor streams through generated firmware and measure the prediction cost.

- :mod:`~sensorbudget.device_sim.protocol`: the framed serial protocol (spec and codec);
  :mod:`~sensorbudget.device_sim.link`: retries, timeouts and accounting over any pyserial-like port;
  :mod:`~sensorbudget.device_sim.client`: the typed commands (HELLO, PUSH_SAMPLES, STATS, BENCH, ...).
- :mod:`~sensorbudget.device_sim.reference`: what the device must compute, bit for bit;
  :mod:`~sensorbudget.device_sim.fake`: a pure-Python device; :mod:`~sensorbudget.device_sim.transports`: in-memory, pty
  and fault-injecting transports.
- :mod:`~sensorbudget.device_sim.backends`: python, host, qemu-m4f, qemu-m3, unicorn-m4f, simavr,
  qemu-hifive1, unicorn-rv32, unicorn-rv32ec and serial:URL behind one interface (``base``,
  ``local``, ``firmware``: build and launch the firmware, ``unicorn``, ``unicorn_rv32``), and
  the factory ``make_backend``.
- :mod:`~sensorbudget.device_sim.replay`: recordings -> predictions, compared with the reference;
  :mod:`~sensorbudget.device_sim.multirate`: the same for sensors at their own rates (aligned
  streams, interleaved PUSH_EVENTS, its reference), :mod:`~sensorbudget.device_sim.fake_multirate`
  its pure-Python device;
  :mod:`~sensorbudget.device_sim.costs`: target profiles, energy, deadlines, battery life;
  :mod:`~sensorbudget.device_sim.report`, :mod:`~sensorbudget.device_sim.plots`, :mod:`~sensorbudget.device_sim.compare`,
  :mod:`~sensorbudget.device_sim.calibrate`: report directory (its schema: :mod:`~sensorbudget.device_sim.report_schema`),
  comparisons, measured costs into sensors.toml; :mod:`~sensorbudget.device_sim.soak`: long link soaks.
- :mod:`~sensorbudget.device_sim.errors`: the package's exceptions.
- :mod:`~sensorbudget.device_sim.html`: the interactive HTML report of bundles, evaluations and simulations
  (``sensorbudget report``).
- :func:`sensorbudget.device_sim.simulate.simulate` ties them together (``sensorbudget simulate``);
  :mod:`~sensorbudget.device_sim.report_text`: summary.md and the printed lines.
- :mod:`~sensorbudget.device_sim.api`: the typed Python API (``simulate`` -> ``Simulation``,
  ``report`` -> ``Report``, ``compare``, ``load`` of any saved artefact, whose kind
  :mod:`~sensorbudget.device_sim.kinds` tells), what the commands call.
"""
