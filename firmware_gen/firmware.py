"""Assemble a complete firmware source tree for a bundle: pure, returns file texts.

:func:`generate_firmware` gives ``{file name: text}``: export's model header, the streaming
extractors, the model kernel, ``main.c`` (protocol loop), the static runtime and HAL of the
target, a Makefile, ``firmware.json`` (what a host needs to talk to it) and PROTOCOL.md.
Writing them is :func:`sensorbudget.firmware_gen.build.write_firmware`'s (or the CLI's) job.
"""

from __future__ import annotations

import json

from sensorbudget.export import cgen
from sensorbudget.export.c_header import c_header
from sensorbudget.export.cgen import DEFAULT_NAME
from sensorbudget.export.errors import ExportError
from sensorbudget.trainer.version import package_version

from .bounds import stated_stream_bound
from .errors import FirmwareGenError
from . import fft_c
from .extractors_c import stream_header, stream_source
from .firmware_main import (  # noqa: F401  (their home was this module)
    _WIRE,
    MANIFEST,
    MANIFEST_FORMAT,
    Firmware,
    check_payloads,
    main_source,
    template,
)
from .firmware_multirate import generate_multirate_firmware
from .kernel_c import choose_kernel, kernel_header
from .memory import check_ram, ram_estimate
from .memory_flash import check_flash, flash_estimate
from .plan import FORMAT_VERSION, NUMERIC_CODES, PROTOCOL_VERSION, make_plan
from .targets import get_target, makefile, run_command, runtime_files

def _manifest(plan, target, header, kernel, stream_bound=None) -> dict:
    fx = header.fixed
    artifacts = {"elf": target.exe} if target.mcu else {"executable": target.exe}
    if target.mcu:
        artifacts.update(hex="firmware.hex", bin="firmware.bin")
    return {
        "format": MANIFEST_FORMAT, "format_version": FORMAT_VERSION,
        "generator": f"sensorbudget {package_version()}", "name": plan.name, "target": target.name,
        "target_description": target.description, "numeric": plan.numeric,
        "numeric_code": NUMERIC_CODES[plan.numeric], "kernel": kernel,
        "bundle_sha256": plan.bundle_sha256, "task": plan.task, "input_kind": plan.input_kind,
        "channels": list(plan.channels),
        "full_scale": None if plan.full_scale is None else list(plan.full_scale),
        "sample_encoding": "float32" if not plan.fixed else
        "int16 q = clamp(round_half_away(x * 32768 / full_scale), -32768, 32767)",
        "window": plan.window, "hop": plan.hop, "sample_rate_hz": plan.sample_rate_hz,
        "k": plan.k, "t": plan.t, "features": list(plan.features), "targets": list(plan.targets),
        "extractors": [{"name": e.name, "kind": e.kind,
                        "channels": [plan.channels[c] for c in e.channels],
                        "inputs": list(e.slots),
                        "arithmetic": fft_c.arithmetic(plan, e)} for e in plan.extractors],
        "score_frac_bits": None if fx is None else fx.score_frac_bits,
        "error_bound": None if fx is None else header.error_bound,
        "stream_error_bound": stream_bound,     # from samples: firmware_gen.bounds
        "protocol_version": PROTOCOL_VERSION, "max_request_payload": target.rx_payload,
        "max_response_payload": target.tx_payload, "cost_unit": target.cost_unit,
        "artifacts": artifacts, "run": run_command(target, ".", port=4321),
        **fft_c.manifest_fields(plan),
    }


def check_buffers(plan, target) -> None:
    """FirmwareGenError unless every answer fits the target's transmit buffer and the smallest
    PREDICT / PUSH_SAMPLES requests fit its receive buffer (found by fuzz/: a 24-target Q31 model
    on AVR answered PREDICT with 192 bytes into a 160-byte buffer)."""
    sample, value, score = _WIRE[plan.numeric][:3]
    answers = {"HELLO": 12 + len(plan.name), "PREDICT": plan.t * score,
               "PUSH_SAMPLES": 2 + 4 + plan.t * score}
    requests = {"PREDICT": plan.k * value, "PUSH_SAMPLES": 2 + len(plan.channels) * sample}
    check_payloads(target, answers, requests, f"{plan.k} inputs, {plan.t} targets, "
                   f"{plan.numeric}", "features or targets")


def generate_firmware(bundle, *, target: str, numeric: str = "float32", name: str = DEFAULT_NAME,
                      full_scale=None, kernel: str = "auto", plan=None,
                      fft: str | None = None) -> Firmware:
    """Every source file of the firmware for ``bundle`` (a :class:`sensorbudget.trainer.bundle.model.Bundle`).

    Parameters
    ----------
    target : {"host", "cortex-m4f", "cortex-m3", "avr"}
    numeric : {"float32", "q15", "q31"}
    name : str
        Prefix of every generated C symbol; a C identifier that is not a reserved word.
    full_scale : dict, optional
        {channel or "*": full scale} of the Q15 samples (q15/q31 only); see PROTOCOL.md.
    kernel : {"auto", "loop", "unrolled"}
        Model kernel: straight-line code with constant weights, or the header's loop.
    plan : FirmwarePlan, optional
        The plan of ``bundle`` already made by :func:`~sensorbudget.firmware_gen.plan.make_plan` (with this
        ``name`` and ``numeric``; its full scales replace ``full_scale``), so that a caller
        holding one (``device_sim``'s reference model) generates firmware from that same plan.
    fft : {"float32", "q15"}, optional
        The spectra's transform (q15/q31 only; :func:`.fft_c.check_fft`): default float32, or
        the plan's.
    """
    tgt = get_target(target)
    try:
        cgen.check_identifier(name, "name")
    except ExportError as exc:
        raise FirmwareGenError(str(exc)) from None
    if name.lower().startswith("sbfw") or name.lower() == "fw":
        raise FirmwareGenError(f"name={name!r} collides with the firmware runtime's 'sbfw_' / "
                               f"'fw_' symbols; choose another prefix")
    if numeric == "q31" and tgt.arch == "avr":
        raise FirmwareGenError(f"numeric q31 needs a 64-bit double for its quantiser; "
                               f"{tgt.name}'s avr-gcc has a 32-bit double (the scores would "
                               f"differ from the reference): use --numeric q15 or float32")
    if bundle.meta.get("multi_rate"):     # sensors at their own rates: .firmware_multirate
        fft_c.check_single_rate(fft)
        return generate_multirate_firmware(bundle, tgt, numeric=numeric, name=name,
                                           full_scale=full_scale, kernel=kernel, plan=plan)
    if plan is None:
        plan = make_plan(bundle, name=name, numeric=numeric, full_scale=full_scale,
                         fft=fft or "float32")
    elif fft is not None and fft != plan.fft:
        raise FirmwareGenError(f"fft={fft!r} but the plan's spectra use fft={plan.fft!r}")
    elif (plan.name, plan.numeric, plan.bundle_sha256) != (name, numeric, bundle.bundle_sha256()):
        raise FirmwareGenError(f"the plan (name {plan.name!r}, {plan.numeric}) is not the plan of "
                               f"this bundle for name={name!r}, numeric={numeric!r}")
    elif full_scale is not None:
        raise FirmwareGenError("give full_scale to make_plan, not with a plan")
    check_buffers(plan, tgt)
    try:
        header = c_header(bundle, name=name, numeric=numeric)
    except ExportError as exc:
        raise FirmwareGenError(f"cannot export the model: {exc}") from None
    kernel = choose_kernel(kernel, plan.k, plan.t)
    stream_c = stream_source(plan, header.fixed)
    check_ram(plan, tgt, stream_c)      # before any compiler runs: firmware_gen.memory
    check_flash(plan, tgt, kernel)      # and .memory_flash
    files = {f"{name}.h": header.text, f"{name}_stream.h": stream_header(plan),
             f"{name}_stream.c": stream_c,
             f"{name}_kernel.h": kernel_header(plan, bundle, header, kernel),
             "main.c": main_source(plan, tgt)}
    for fname in runtime_files(tgt):
        files[fname] = template(fname)
    sources = ["main.c", f"{name}_stream.c", "sbfw_protocol.c",
               *(f for f in tgt.hal if f.endswith(".c"))]
    headers = sorted(f for f in files if f.endswith(".h"))
    if tgt.name == "avr":
        files["sbfw_simavr.c"] = template("sbfw_simavr.c")
    banner = (f"Makefile of the {name} firmware (target {tgt.name}, numeric {numeric}), "
              f"generated by sensorbudget {package_version()}; do not edit.")
    files["Makefile"] = makefile(tgt, sources, headers, banner)
    manifest = _manifest(plan, tgt, header, kernel, stated_stream_bound(plan, header, bundle.W))
    manifest["ram_estimate"] = ram_estimate(plan, tgt, stream_c)   # static bytes, from the plan
    manifest["flash_estimate"] = flash_estimate(plan, tgt, kernel)   # code + constants
    files[MANIFEST] = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    files["PROTOCOL.md"] = template("PROTOCOL.md")
    return Firmware(files=files, plan=plan, manifest=manifest, header=header)
