"""The firmware of a multi-rate bundle (issue 30): the unit of :mod:`.multirate_c` behind the
protocol loop of ``main.c`` (PUSH_EVENTS and SENSORS, PROTOCOL.md); pure, returns file texts
like :func:`.firmware.generate_firmware`, which calls it for a multi-rate bundle.

The model header and kernel are the single-rate ones; each (sensor, rate) group is a whole
single-rate stream (``<name>_g<i>_stream.c``); ``main.c`` feeds each event to
``<name>_mr_push`` and predicts when it completes a window. RAM is checked against the part
and RAM and flash estimated by :mod:`.multirate_memory` (firmware.json ``ram_estimate``,
``flash_estimate``; the linker's map is the measured figure: ``sensorbudget firmware --build``).
"""

from __future__ import annotations

import json

from sensorbudget.trainer.version import package_version

from .errors import FirmwareGenError
from .firmware_main import _WIRE, Firmware, check_payloads, main_source, template
from .kernel_c import choose_kernel
from .multirate import make_multirate_plan
from .multirate_c import model_header, multirate_sources
from .multirate_reference import stated_stream_bound
from .multirate_memory import (
    check_multirate_ram,
    multirate_flash_estimate,
    multirate_ram_estimate,
)
from .plan import FORMAT_VERSION, NUMERIC_CODES, PROTOCOL_VERSION
from .targets import makefile, run_command, runtime_files


def check_multirate_buffers(mplan, target, wire) -> None:
    """FirmwareGenError unless every answer (HELLO, SENSORS, PREDICT, one window of
    PUSH_EVENTS) fits the target's transmit buffer and the smallest PREDICT / PUSH_EVENTS
    requests its receive buffer (``wire``: sample, input and score bytes)."""
    sample, value, score = wire
    answers = {"HELLO": 12 + len(mplan.name), "SENSORS": 2 + 9 * len(mplan.sensors),
               "PREDICT": mplan.t * score, "PUSH_EVENTS": 2 + 4 + mplan.t * score}
    requests = {"PREDICT": mplan.k * value,
                "PUSH_EVENTS": 2 + 1 + mplan.max_sensor_channels * sample}
    check_payloads(target, answers, requests, f"{mplan.k} inputs, {mplan.t} targets, "
                   f"{len(mplan.sensors)} sensors, {mplan.numeric}",
                   "features, targets or sensors")


def multirate_manifest(mplan, target, header, kernel) -> dict:
    """firmware.json of a multi-rate firmware: the single-rate keys (window = hop = 0, as its
    HELLO) and ``multi_rate`` with the window and hop in seconds, every sensor (pushed rate,
    recorded rate, channels, window and hop in its samples) and every group."""
    fx = header.fixed
    artifacts = {"elf": target.exe} if target.mcu else {"executable": target.exe}
    if target.mcu:
        artifacts.update(hex="firmware.hex", bin="firmware.bin")
    sensors = [{"name": s.name, "channels": list(s.channels), "rate_hz": s.rate_hz,
                "recorded_hz": s.recorded_hz, "window": round(mplan.window_s * s.rate_hz),
                "hop": round(mplan.hop_s * s.rate_hz),
                "full_scale": None if s.full_scale is None else list(s.full_scale)}
               for s in mplan.sensors]
    groups = [{"sensor": mplan.sensors[g.sensor].name, "rate_hz": g.rate_hz,
               "factor": g.factor, "window": g.plan.window, "hop": g.plan.hop,
               "features": list(g.plan.features), "inputs": list(g.slots)}
              for g in mplan.groups]
    return {
        "format": "sensorbudget-firmware", "format_version": FORMAT_VERSION,
        "generator": f"sensorbudget {package_version()}", "name": mplan.name,
        "target": target.name, "target_description": target.description,
        "numeric": mplan.numeric, "numeric_code": NUMERIC_CODES[mplan.numeric],
        "kernel": kernel, "bundle_sha256": mplan.bundle_sha256, "task": mplan.task,
        "input_kind": mplan.input_kind, "channels": list(mplan.channels),
        "full_scale": None if mplan.full_scale is None else list(mplan.full_scale),
        "sample_encoding": "float32" if not mplan.fixed else
        "int16 q = clamp(round_half_away(x * 32768 / full_scale), -32768, 32767)",
        "window": 0, "hop": 0, "sample_rate_hz": max(s.rate_hz for s in mplan.sensors),
        "multi_rate": {"window_s": mplan.window_s, "hop_s": mplan.hop_s, "sensors": sensors,
                       "groups": groups},
        "k": mplan.k, "t": mplan.t, "features": list(mplan.features),
        "targets": list(mplan.targets),
        "score_frac_bits": None if fx is None else fx.score_frac_bits,
        "error_bound": None if fx is None else header.error_bound,
        "stream_error_bound": None, "protocol_version": PROTOCOL_VERSION,
        "max_request_payload": target.rx_payload, "max_response_payload": target.tx_payload,
        "cost_unit": target.cost_unit, "artifacts": artifacts,
        "run": run_command(target, ".", port=4321),
    }


def generate_multirate_firmware(bundle, tgt, *, numeric: str, name: str, full_scale=None,
                                kernel: str = "auto", plan=None):
    """The :class:`~.firmware.Firmware` of a multi-rate ``bundle`` for target ``tgt``
    (arguments as :func:`.firmware.generate_firmware`; ``plan``: its MultiRatePlan)."""
    if plan is None:
        plan = make_multirate_plan(bundle, name=name, numeric=numeric, full_scale=full_scale)
    elif (plan.name, plan.numeric, plan.bundle_sha256) != (name, numeric, bundle.bundle_sha256()):
        raise FirmwareGenError(f"the plan (name {plan.name!r}, {plan.numeric}) is not the plan of "
                               f"this bundle for name={name!r}, numeric={numeric!r}")
    check_multirate_buffers(plan, tgt, _WIRE[numeric][:3])
    header = model_header(bundle, plan)
    kernel = choose_kernel(kernel, plan.k, plan.t)
    files = multirate_sources(plan, bundle, header, kernel)
    check_multirate_ram(plan, tgt, files)      # before any compiler runs (.multirate_memory)
    files["main.c"] = main_source(plan, tgt)
    for fname in runtime_files(tgt):
        files[fname] = template(fname)
    sources = ["main.c", f"{name}_multirate.c",
               *(f for f in files if f.endswith("_stream.c")), "sbfw_protocol.c",
               *(f for f in tgt.hal if f.endswith(".c"))]
    headers = sorted(f for f in files if f.endswith(".h"))
    if tgt.name == "avr":
        files["sbfw_simavr.c"] = template("sbfw_simavr.c")
    banner = (f"Makefile of the {name} multi-rate firmware (target {tgt.name}, numeric "
              f"{numeric}), generated by sensorbudget {package_version()}; do not edit.")
    files["Makefile"] = makefile(tgt, sources, headers, banner)
    manifest = multirate_manifest(plan, tgt, header, kernel)
    manifest["stream_error_bound"] = stated_stream_bound(plan, header, bundle.W)
    manifest["ram_estimate"] = multirate_ram_estimate(plan, tgt, files)   # static bytes
    manifest["flash_estimate"] = multirate_flash_estimate(plan, tgt, kernel)
    files["firmware.json"] = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    files["PROTOCOL.md"] = template("PROTOCOL.md")
    return Firmware(files=files, plan=plan, manifest=manifest, header=header)
