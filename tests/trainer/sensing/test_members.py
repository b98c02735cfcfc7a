"""trainer.sensing.members: NPZ members checked before use (no hang on a hostile file)."""

import numpy as np
import pytest

from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.sensing.members import names, scalar


def test_names_are_a_bounded_1d_member():
    assert names(np.array(["a", "b"]), "feature_names", "f.npz", 5) == ["a", "b"]
    assert names(np.array([1, 2]), "feature_names", "f.npz", 2) == ["1", "2"]
    huge = np.lib.stride_tricks.as_strided(np.zeros(1, dtype=np.uint16), shape=(2 ** 31,),
                                           strides=(0,))   # 2^31 entries, 2 bytes of data
    for bad in (np.zeros((2, 0, 0), dtype=np.uint16), np.array("a"), huge):
        with pytest.raises(DataError, match="'feature_names' must be a 1-D array of at most 5"):
            names(bad, "feature_names", "f.npz", 5)


def test_scalar_takes_one_element():
    assert scalar(np.array([3])) == 3 and scalar(np.array(2.5)) == 2.5
    with pytest.raises(DataError, match=r"shape \(2,\)"):
        scalar(np.array([1, 2]))
