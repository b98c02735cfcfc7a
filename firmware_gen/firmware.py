"""Assemble a complete firmware source tree for a bundle: pure, returns file texts.

:func:`generate_firmware` gives ``{file name: text}``: export's model header, the streaming
extractors, the model kernel, ``main.c`` (protocol loop), the static runtime and HAL of the
target, a Makefile, ``firmware.json`` (what a host needs to talk to it) and PROTOCOL.md.
Writing them is :func:`sensorbudget.firmware_gen.build.write_firmware`'s (or the CLI's) job.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from importlib import resources

from sensorbudget.export import cgen
from sensorbudget.export.c_header import HEADER_FORMAT_VERSION, c_header
from sensorbudget.export.cgen import DEFAULT_NAME
from sensorbudget.export.errors import ExportError
from sensorbudget.trainer.version import package_version

from . import ctemplate
from .bounds import stated_stream_bound
from .errors import FirmwareGenError
from .extractors_c import stream_header, stream_source
from .kernel_c import choose_kernel, kernel_header
from .memory import check_ram, ram_estimate
from .memory_flash import check_flash, flash_estimate
from .multirate_c import MULTIRATE_FORMAT_VERSION
from .plan import FORMAT_VERSION, NUMERIC_CODES, PROTOCOL_VERSION, make_plan
from .targets import get_target, makefile, run_command, runtime_files

MANIFEST = "firmware.json"
MANIFEST_FORMAT = "sensorbudget-firmware"
_WIRE = {  # numeric -> (sample bytes, input bytes, score bytes, get sample, get input, put score)
    "float32": (4, 4, 4, "sbfw_get_f32(in)", "sbfw_get_f32(in)",
                "sbfw_put_f32(out + j * FW_SCORE_BYTES, fw_scores[j]);"),
    "q15": (2, 2, 4, "sbfw_get_i16(in)", "sbfw_get_i16(in)",
            "sbfw_put_u32(out + j * FW_SCORE_BYTES, (uint32_t)(int32_t)fw_scores[j]);"),
    "q31": (2, 4, 8, "sbfw_get_i16(in)", "sbfw_get_i32(in)",
            "sbfw_put_u64(out + j * FW_SCORE_BYTES, (uint64_t)(int64_t)fw_scores[j]);"),
}


@dataclass(frozen=True)
class Firmware:
    """Generated firmware: ``files`` ({name: text}, in a fixed order), the plan and manifest."""

    files: dict
    plan: object
    manifest: dict
    header: object            # export's CHeader

    @property
    def target(self) -> str:
        return self.manifest["target"]


def template(name: str) -> str:
    """A static file shipped in ``firmware_gen/templates`` (or PROTOCOL.md)."""
    base = resources.files(__package__)
    path = base / "PROTOCOL.md" if name == "PROTOCOL.md" else base / "templates" / name
    return path.read_text(encoding="utf-8")



def _multirate_values(mplan) -> dict:
    """main.c's values of a multi-rate plan: the sensors comment and the tables of
    templates/main_multirate.c.j2 (window and hop per sensor, sensor, decimation, window and
    hop per group)."""
    P = mplan.name.upper()
    sizes = [(round(mplan.window_s * s.rate_hz), round(mplan.hop_s * s.rate_hz))
             for s in mplan.sensors]
    groups = mplan.groups
    tables = [cgen.array_declare(ctype, name, values, size_macros=(size,))
              for ctype, name, values, size in (
                  ("uint16_t", "fw_sensor_window", [w for w, _ in sizes], f"{P}_N_SENSORS"),
                  ("uint16_t", "fw_sensor_hop", [h for _, h in sizes], f"{P}_N_SENSORS"),
                  ("uint8_t", "fw_group_sensor", [g.sensor for g in groups], f"{P}_N_GROUPS"),
                  ("uint16_t", "fw_group_factor", [g.factor for g in groups], f"{P}_N_GROUPS"),
                  ("uint16_t", "fw_group_window", [g.plan.window for g in groups],
                   f"{P}_N_GROUPS"),
                  ("uint16_t", "fw_group_hop", [g.plan.hop for g in groups], f"{P}_N_GROUPS"))]
    listing = "; ".join(f"{i} {s.name} ({s.rate_hz:g} Hz): {', '.join(s.channels)}"
                        for i, s in enumerate(mplan.sensors))
    return {"mr": True, "tables": tables, "n_channels": str(len(mplan.channels)),
            "mr_fmt": str(MULTIRATE_FORMAT_VERSION), "channels_text": listing}


def main_source(plan, target) -> str:
    """``main.c``: the protocol loop for the plan's numeric format (templates/main.c.j2; its
    lines are short by construction: :func:`sensorbudget.export.ctemplate.fit`); of a
    :class:`~.multirate.MultiRatePlan`, the multi-rate loop (PUSH_EVENTS, SENSORS)."""
    sb, ib, scb, get_sample, get_input, put_score = _WIRE[plan.numeric]
    score_t = {"float32": "float", "q15": "int16_t", "q31": "int32_t"}[plan.numeric]
    extra = _multirate_values(plan) if hasattr(plan, "groups") else {"mr": False}
    channels = extra.pop("channels_text", None) or ", ".join(plan.channels)
    values = {**extra,
        "name": plan.name, "NAME": plan.name.upper(), "target": target.name,
        "numeric": plan.numeric, "NUMERIC": plan.numeric.upper(), "version": package_version(),
        "fmt": str(FORMAT_VERSION), "header_fmt": str(HEADER_FORMAT_VERSION),
        "sha": plan.bundle_sha256, "bundle_id": f"{plan.bundle_id:08x}",
        "channels": "\n *     ".join(textwrap.wrap(cgen.c_comment(channels)[1:-1], 90)),
        "k": str(plan.k), "t": str(plan.t),
        "numeric_code": str(NUMERIC_CODES[plan.numeric]), "sample_bytes": str(sb),
        "input_bytes": str(ib), "score_bytes": str(scb), "score_t": score_t,
        "get_sample": get_sample, "get_input": get_input, "put_score": put_score}
    return ctemplate.render("main.c.j2", **values)


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
                        "arithmetic": "q15" if e.fixed else "float32"} for e in plan.extractors],
        "score_frac_bits": None if fx is None else fx.score_frac_bits,
        "error_bound": None if fx is None else header.error_bound,
        "stream_error_bound": stream_bound,     # from samples: firmware_gen.bounds
        "protocol_version": PROTOCOL_VERSION, "max_request_payload": target.rx_payload,
        "max_response_payload": target.tx_payload, "cost_unit": target.cost_unit,
        "artifacts": artifacts, "run": run_command(target, ".", port=4321),
    }


def check_buffers(plan, target) -> None:
    """FirmwareGenError unless every answer fits the target's transmit buffer and the smallest
    PREDICT / PUSH_SAMPLES requests fit its receive buffer (found by fuzz/: a 24-target Q31 model
    on AVR answered PREDICT with 192 bytes into a 160-byte buffer)."""
    sample, value, score = _WIRE[plan.numeric][:3]
    answers = {"HELLO": 12 + len(plan.name), "PREDICT": plan.t * score,
               "PUSH_SAMPLES": 2 + 4 + plan.t * score}
    requests = {"PREDICT": plan.k * value, "PUSH_SAMPLES": 2 + len(plan.channels) * sample}
    for kind, sizes, limit in (("answer", answers, target.tx_payload),
                               ("request", requests, target.rx_payload)):
        for command, size in sizes.items():
            if size > limit:
                raise FirmwareGenError(
                    f"a {command} {kind} of this model takes {size} bytes ({plan.k} inputs, "
                    f"{plan.t} targets, {plan.numeric}); target {target.name} holds at most "
                    f"{limit}: select fewer features or targets, or use a smaller numeric format")


def generate_firmware(bundle, *, target: str, numeric: str = "float32", name: str = DEFAULT_NAME,
                      full_scale=None, kernel: str = "auto", plan=None) -> Firmware:
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
        from .firmware_multirate import generate_multirate_firmware

        return generate_multirate_firmware(bundle, tgt, numeric=numeric, name=name,
                                           full_scale=full_scale, kernel=kernel, plan=plan)
    if plan is None:
        plan = make_plan(bundle, name=name, numeric=numeric, full_scale=full_scale)
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
