"""The golden C files (issue 28 item 6): every file the emitters write for the bundles of
:mod:`tests.golden.cases` equals its committed copy in ``tests/golden/files``; a change shows
as a unified diff (review it, then ``make golden`` to accept it)."""

from __future__ import annotations

import difflib

import pytest

from tests.golden import cases as C


@pytest.fixture(scope="module")
def emitted():
    return C.emit()


def test_emission_is_deterministic(emitted):
    """Two emissions in one run are the same bytes (the golden copy would be noise otherwise)."""
    assert C.emit(C.CASES[:1]) == {k: v for k, v in emitted.items()
                                   if k.startswith(C.CASES[0].name + "/")}


def test_every_emitted_file_equals_its_golden_copy(emitted):
    stored = C.read()
    diff = []
    for rel in sorted(set(emitted) | set(stored)):
        old, new = stored.get(rel, ""), emitted.get(rel, "")
        if old != new:
            diff += difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                         f"golden/{rel}", f"emitted/{rel}")
    if diff:
        pytest.fail("the generated C differs from tests/golden/files (review the diff; "
                    "`make golden` accepts it):\n" + "".join(diff[:400]), pytrace=False)


def test_the_golden_set_covers_the_outputs(emitted):
    """Each case has the header, the library and all four firmware folders (emitted or
    refused), and the set is small enough to review."""
    folders = {rel.rsplit("/", 1)[0] for rel in emitted if rel.count("/") >= 2}
    for case in C.CASES:
        assert f"{case.name}/c-header" in {r.rsplit("/", 1)[0] for r in emitted}
        assert any(f.startswith(f"{case.name}/c-library") for f in folders)
        for target in C.TARGETS:
            assert f"{case.name}/firmware-{target}" in folders
    # 575 KB since issue 28's batched push (<p>_stream_add_rows, <name>_push_rows) and the AVR
    # assembly branches of the Q15 sources: a reviewer reads the diffs, which stay small
    assert sum(len(t) for t in emitted.values()) < 650_000


def test_the_stored_bundles_are_what_the_trainer_makes(tmp_path):
    """The golden bundles are stored (a retrained weight may differ in its last bit on another
    machine's BLAS, which would show as a C diff); retrained here they select the same
    features, in the same order, with the same weights to rounding."""
    import numpy as np

    from sensorbudget.trainer.bundle.model import load_bundle

    C.retrain(C.CASES, tmp_path)
    for case in C.CASES:
        fresh, stored = load_bundle(tmp_path / case.name), load_bundle(C.BUNDLES / case.name)
        assert fresh.meta["selected"] == stored.meta["selected"], case.name
        assert fresh.meta["targets"] == stored.meta["targets"], case.name
        for key in stored.arrays:
            np.testing.assert_allclose(fresh.arrays[key], stored.arrays[key], rtol=1e-9,
                                       atol=1e-12, err_msg=f"{case.name}: {key}")
