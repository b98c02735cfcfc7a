"""The training recordings' bound of every channel the extractors read: max |sample|.

Fixed-point firmware sends samples as Q15 = sample * 32768 / full scale, so it needs a full
scale for every channel it reads. A feature such as the window mean bounds its channel, but
rms, energy or std do not (the std of a channel says nothing of its offset), so a bundle of
those alone had none and ``--numeric q15`` stopped. The feature table therefore keeps, for every
channel the extractors read, the largest finite |sample| over all training recordings
(``channel_bounds``: {channel: bound}); the bundle carries it and the firmware plan derives the
default full scale from it (the power of two above it), unless ``--full-scale`` overrides it.
"""

from __future__ import annotations

import json
import math

import numpy as np

from ..errors import DataError


def recording_bounds(recordings, channels) -> dict:
    """{channel: max finite |sample| over ``recordings``} for ``channels`` (0.0 for a channel
    with no finite sample)."""
    out = {}
    for c in channels:
        bound = 0.0
        for rec in recordings:
            values = np.asarray(rec.columns.get(c, ()), dtype=np.float64)
            finite = np.abs(values[np.isfinite(values)])
            if finite.size:
                bound = max(bound, float(finite.max()))
        out[str(c)] = bound
    return out


def bounds_json(bounds: dict) -> str:
    """The NPZ member text (sorted keys: same bounds, same bytes)."""
    return json.dumps({str(k): float(v) for k, v in bounds.items()}, sort_keys=True)


def parse_bounds(text, source: str) -> dict:
    """{channel: bound} from the member text; raises :class:`DataError` unless it is an object
    of finite numbers >= 0."""
    try:
        value = json.loads(str(text))
        ok = isinstance(value, dict) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            and v >= 0 for v in value.values())
    except (ValueError, OverflowError, RecursionError):        # not JSON, an int beyond float
        ok = False
    if not ok:
        raise DataError(f"{source}: channel_bounds_json must be an object of finite numbers "
                        f">= 0 (got {str(text)[:60]!r})")
    return {str(k): float(v) for k, v in value.items()}
