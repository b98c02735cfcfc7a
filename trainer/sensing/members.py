"""Values read back from the members of a feature-table NPZ (:mod:`.feature_set`), checked
before they are used: a mutated or hostile file must give a :class:`DataError`, never a hang."""

from __future__ import annotations

import numpy as np

from ..errors import DataError


def scalar(value):
    """The single element of a 0-d (or one-element) array."""
    value = np.asarray(value)
    if value.size != 1:
        raise DataError(f"expected a single value, got an array of shape {value.shape}")
    return value.reshape(-1)[0].item()


def names(value, key: str, source: str, limit: int) -> list:
    """A 1-D member of at most ``limit`` entries as a list of strings (names per column or per
    recording; their counts are checked against X and Y afterwards). The limit comes first: an
    array of a zero-byte dtype may claim billions of entries without holding any data."""
    value = np.asarray(value)
    if value.ndim != 1 or value.shape[0] > limit:
        raise DataError(f"{source}: {key!r} must be a 1-D array of at most {limit} names, "
                        f"got shape {value.shape}")
    return [str(s) for s in value]
