"""What every generated firmware shares: the :class:`Firmware` result, the static files of
``templates/`` and ``main.c`` (the protocol loop, single-rate or multi-rate: templates/main.c.j2)
for :mod:`.firmware` and :mod:`.firmware_multirate`."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from importlib import resources

from sensorbudget.export import cgen
from sensorbudget.export.c_header import HEADER_FORMAT_VERSION
from sensorbudget.trainer.version import package_version

from . import ctemplate
from .errors import FirmwareGenError
from .multirate_c import MULTIRATE_FORMAT_VERSION
from .plan import FORMAT_VERSION, NUMERIC_CODES

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


def check_payloads(target, answers: dict, requests: dict, model: str, fewer: str) -> None:
    """FirmwareGenError unless every answer ({command: bytes}) fits ``target``'s transmit
    buffer and every request its receive buffer; ``model`` describes the model's shape in the
    message, ``fewer`` what to select fewer of."""
    for kind, sizes, limit in (("answer", answers, target.tx_payload),
                               ("request", requests, target.rx_payload)):
        for command, size in sizes.items():
            if size > limit:
                raise FirmwareGenError(
                    f"a {command} {kind} of this model takes {size} bytes ({model}); target "
                    f"{target.name} holds at most {limit}: select fewer {fewer}, or use a "
                    f"smaller numeric format")


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
