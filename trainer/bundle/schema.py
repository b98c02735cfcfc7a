"""Types of the ``model.json`` fields that the bundle's consumers read.

:func:`check_meta_types` runs when a bundle is saved or loaded
(:func:`sensorbudget.trainer.bundle.model.check_bundle`), so a hand-edited or corrupted ``model.json`` fails
there with one :class:`BundleError` naming the field and the value, instead of as a ``TypeError``
deep inside the CLI, an exporter or firmware generation (found by ``fuzz/py_bundle.py``). Only
the *types* (and simple ranges) of the known fields are checked; unknown fields pass, and
consistency with ``weights.npz`` is :func:`~sensorbudget.trainer.bundle.model.check_bundle`'s job.
"""

from __future__ import annotations

import math

from ..errors import BundleError


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _integer(v) -> bool:
    """An integer an int64 holds (the C, NumPy and ONNX sides store them so)."""
    return isinstance(v, int) and not isinstance(v, bool) and -2**63 <= v < 2**63


def _strings(v) -> bool:
    return isinstance(v, list) and all(isinstance(s, str) for s in v)


def _numbers(v) -> bool:
    return isinstance(v, list) and all(_number(x) for x in v)


def _number_dict(v) -> bool:
    return isinstance(v, dict) and all(_number(x) for x in v.values())


def _positive_int(v) -> bool:
    return _integer(v) and v >= 1


def _text(v) -> bool:
    return isinstance(v, str)


def _flag(v) -> bool:
    return isinstance(v, bool)


# field -> (check, what it must be)
TOP_REQUIRED = {
    "created_by": (_text, "a string"), "weights_sha256": (_text, "a string"),
    "features": (lambda v: _strings(v) and len(v) > 0, "a non-empty list of strings"),
    "targets": (lambda v: _strings(v) and len(v) > 0, "a non-empty list of strings"),
    "selected": (_strings, "a list of strings"),
    "selected_index": (lambda v: isinstance(v, list) and all(_integer(i) for i in v),
                       "a list of integers"),
    "lam": (lambda v: _number(v) and v >= 0, "a finite number >= 0"),
    "fit_intercept": (_flag, "true or false"), "standardize": (_flag, "true or false"),
    "path": (lambda v: isinstance(v, list), "a list"),
    "extractors": (lambda v: isinstance(v, list), "a list"),
    "sensors": (lambda v: isinstance(v, list), "a list"),
    "required_extractors": (_strings, "a list of strings"),
    "required_sensors": (_strings, "a list of strings"),
}
TOP_OPTIONAL = {
    "content_sha256": (_text, "a string"),            # format 2 (load_bundle requires it there)
    "budget": (_integer, "an integer"), "n_samples": (_integer, "an integer"),
    "classes": (_strings, "a list of strings"), "class_column": (_text, "a string"),
    "window": (_positive_int, "an integer >= 1"),
    "hop": (_positive_int, "an integer >= 1"),
    "sample_rate_hz": (lambda v: _number(v) and v > 0, "a finite number > 0"),
    "window_s": (_number, "a number"), "hop_s": (_number, "a number"),
    "currency": (_text, "a string"), "criterion": (_text, "a string"),
    "n_groups": (_integer, "an integer"),
    "required_transforms": (_strings, "a list of strings"),
    "target_rows": (lambda v: isinstance(v, list) and all(_integer(i) for i in v),
                    "a list of integers"),
    "lam_per_target": (_numbers, "a list of numbers"),
    "selection_units": (_strings, "a list of strings"), "costs": (lambda v: isinstance(v, dict),
                                                                  "an object"),
    "target_scaling": (lambda v: isinstance(v, dict) and _numbers(v.get("scale"))
                       and _numbers(v.get("mean")), "an object with lists mean and scale"),
    "channel_bounds": (lambda v: _number_dict(v) and all(x >= 0 for x in v.values()),
                       "an object of numbers >= 0"),
    "multi_rate": (_flag, "true or false"),                 # sensors at their own rates
    "recording_options": (lambda v: isinstance(v, dict) and all(isinstance(k, str) for k in v),
                          "an object of recording options (time_column, time_unit, ...)"),
    "sensor_rates_hz": (lambda v: _number_dict(v) and all(x > 0 for x in v.values()),
                        "an object of rates > 0"),
}
PATH_FIELDS = {
    "step": (_integer, "an integer"), "added": (_strings, "a list of strings"),
    "loo_mse": (_number, "a finite number"), "cost": (_number, "a finite number"),
    "added_extractors": (_strings, "a list of strings"),
    "added_sensors": (_strings, "a list of strings"),
    "loo_mse_per_target": (_numbers, "a list of numbers"),
    "costs": (_number_dict, "an object of numbers"),
    "costs_mean_per_target": (_number_dict, "an object of numbers"),
    "rates_hz": (lambda v: _number_dict(v) and all(x > 0 for x in v.values()),
                 "an object of rates > 0"),
}
PATH_REQUIRED = ("step", "added", "loo_mse", "cost")
EXTRACTOR_FIELDS = {
    "name": (_text, "a string"), "features": (_strings, "a list of strings"),
    "sensors": (_strings, "a list of strings"), "cost": (_number, "a finite number"),
    "costs": (_number_dict, "an object of numbers"),
    "params": (lambda v: isinstance(v, dict), "an object"),
}
PARAM_FIELDS = {
    "kind": (_text, "a string"),
    "channels": (lambda v: _strings(v) and len(v) > 0, "a non-empty list of strings"),
    "window": (_positive_int, "an integer >= 1"), "hop": (_positive_int, "an integer >= 1"),
    "sample_rate_hz": (lambda v: _number(v) and v > 0, "a finite number > 0"),
    "fixed_point": (_flag, "true or false"), "arithmetic": (_text, "a string"),
}
SENSOR_NUMBERS = ("unit_price", "energy_per_reading_j", "sample_rate_hz", "average_power_w",
                  "power_w", "read_time_s", "readings_per_prediction",
                  "energy_per_prediction_j", "cost", "chosen_rate_hz")
SENSOR_FIELDS = {"name": (_text, "a string"), "channels": (_strings, "a list of strings"),
                 "part": (_text, "a string"), "source": (_text, "a string"),
                 **{k: (_number, "a finite number") for k in SENSOR_NUMBERS},
                 "rates_hz": (lambda v: _numbers(v) and len(v) > 0 and all(x > 0 for x in v),
                              "a non-empty list of rates > 0"),
                 "energy_per_reading_j_by_rate": (_numbers, "a list of numbers")}


def _not_json(name: str):
    raise BundleError(f"model.json holds {name}, which is not JSON (numbers must be finite)")


#: The longest integer literal model.json may hold: int64 has 19 digits (Python refuses to
#: convert more than 4300 and raised ValueError outside the schema: issue 33).
MAX_INT_DIGITS = 19


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise BundleError(f"model.json holds an integer of {digits} digits; at most "
                          f"{MAX_INT_DIGITS} (int64) are allowed")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BundleError(f"model.json holds the number {text[:20]}, which is not finite")
    return value


#: ``json.loads`` keywords for model.json: strict JSON (Python's json accepts NaN and Infinity,
#: and 1e400 overflows to inf; either then broke the bundle hash: found by fuzz/py_bundle), and
#: integers of at most 19 digits.
STRICT_JSON = {"parse_constant": _not_json, "parse_float": _finite_float,
               "parse_int": _bounded_int}


def _fail(where: str, value, what: str):
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise BundleError(f"model.json {where}={shown} must be {what}")


def _check_fields(obj, fields: dict, required: tuple, where: str, nullable=()) -> None:
    if not isinstance(obj, dict):
        _fail(where, obj, "an object")
    for key in required:
        if key not in obj:
            raise BundleError(f"model.json {where or 'top level'} lacks the key {key!r}")
    for key, (check, what) in fields.items():
        if key in obj and not (obj[key] is None and key in nullable) and not check(obj[key]):
            _fail(f"{where}.{key}" if where else key, obj[key], what)


def check_meta_types(meta: dict) -> None:
    """Raise :class:`BundleError` when a known ``model.json`` field has the wrong type."""
    _check_fields(meta, TOP_REQUIRED, tuple(TOP_REQUIRED), "")
    _check_fields(meta, TOP_OPTIONAL, (), "", nullable=("budget", "n_groups"))
    if meta.get("multi_rate") and not all(_number(meta.get(k)) and meta[k] > 0
                                          for k in ("window_s", "hop_s")):
        _fail("window_s", meta.get("window_s"), "a number > 0 with hop_s in a multi-rate bundle")
    for i, entry in enumerate(meta["path"]):
        _check_fields(entry, PATH_FIELDS, PATH_REQUIRED, f"path[{i}]")
    for i, entry in enumerate(meta["extractors"]):
        _check_fields(entry, EXTRACTOR_FIELDS, ("name", "features"), f"extractors[{i}]")
        if isinstance(entry.get("params"), dict):
            _check_fields(entry["params"], PARAM_FIELDS, (), f"extractors[{i}].params")
    for i, entry in enumerate(meta["sensors"]):
        _check_fields(entry, SENSOR_FIELDS, ("name",), f"sensors[{i}]")
