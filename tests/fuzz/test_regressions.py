"""Replay every input the fuzzers found a bug with (``fuzz/regressions/<target>/``).

Python reproducers go through their target's ``test_one_input`` (no atheris needed): each must
return normally. The C reproducer needs clang with libFuzzer (skipped otherwise): the rebuilt
fuzzer must run it without a sanitizer report.
"""

import importlib
import subprocess

import pytest

import fuzz._harness as harness
from tests.paths import REPO

REGRESSIONS = REPO / "fuzz" / "regressions"
PY_CASES = sorted(p for p in REGRESSIONS.glob("py_*/*") if p.is_file())
C_CASES = sorted(p for p in REGRESSIONS.glob("c_*/*") if p.is_file())


@pytest.fixture(scope="module")
def targets(tmp_path_factory):
    """{target name: module} with scratch dirs and base bundles set up, atheris left out."""
    harness.atheris = None                 # plain imports: no coverage instrumentation here
    base = tmp_path_factory.mktemp("fuzz")
    modules = {}
    for name in sorted({p.parent.name for p in PY_CASES}):
        module = importlib.import_module(f"fuzz.{name}")
        module._DIR = base / name
        module._DIR.mkdir()
        if hasattr(module, "_load_bases") and not module.BASES:
            module._load_bases(module._DIR)
        if hasattr(module, "_base_report") and module._BASE is None:      # py_reports
            (module._DIR / "base").mkdir()
            module._BASE = module._base_report(module._DIR / "base")
        if hasattr(module, "_base") and module._BASE is None:             # py_features
            module._BASE = module._base(module._DIR)
        modules[name] = module
    return modules


def test_there_are_regressions_for_the_bugs_found():
    assert len(PY_CASES) >= 15 and C_CASES


@pytest.mark.parametrize("path", PY_CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_python_reproducer_is_handled(targets, path):
    module = targets[path.parent.name]
    module.test_one_input(path.read_bytes())


@pytest.mark.parametrize("path", C_CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_c_reproducer_is_handled(tmp_path, path):
    from fuzz.c_targets import CONFIGS, build_one, find_clang

    cc = find_clang()
    if cc is None:
        pytest.skip("no clang with libFuzzer (apt-get install clang libclang-rt-14-dev)")
    from fuzz._bundles import make_bundles

    config = next(c for c in CONFIGS if c.name == path.parent.name[2:])
    exe = build_one(config, make_bundles(tmp_path / "bundles", wide=True), tmp_path, cc)
    done = subprocess.run([str(exe), str(path)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
