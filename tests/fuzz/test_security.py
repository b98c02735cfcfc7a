"""The security review's checkable rules (SECURITY.md), so they stay true.

- no unpickling anywhere: every ``np.load`` passes ``allow_pickle=False``, nothing calls
  ``pickle.load(s)``, ``marshal`` or ``shelve``;
- no ``eval`` / ``exec``, no ``shell=True``, no ``os.system`` / ``os.popen``;
- bandit (when installed) reports no high-severity issue in the packages.
"""

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import REPO

PACKAGES = ("trainer", "export", "firmware_gen", "device_sim", "sensorbudget")
SOURCES = sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py"))


def _calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            owner = getattr(f.value, "id", "") if isinstance(f, ast.Attribute) else ""
            yield node, owner, name


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_unsafe_calls(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            assert not {"marshal", "shelve", "dill", "cloudpickle"} & set(names), path
    for node, owner, name in _calls(tree):
        where = f"{path.relative_to(REPO)}:{node.lineno}"
        assert name not in ("eval", "exec", "system", "popen") or owner not in ("", "os"), where
        assert not (owner == "pickle" and name in ("load", "loads", "Unpickler")), where
        for kw in node.keywords:
            if kw.arg == "shell":
                assert isinstance(kw.value, ast.Constant) and kw.value.value is False, where
            if kw.arg == "allow_pickle":
                assert isinstance(kw.value, ast.Constant) and kw.value.value is False, where
        if name == "load" and owner == "np":
            assert any(kw.arg == "allow_pickle" for kw in node.keywords), \
                f"{where}: np.load without allow_pickle=False"


@pytest.mark.skipif(shutil.which("bandit") is None and not (Path(sys.executable).parent
                                                          / "bandit").exists(),
                    reason="bandit is not installed (pip install bandit)")
def test_bandit_finds_no_high_severity_issue():
    exe = shutil.which("bandit") or str(Path(sys.executable).parent / "bandit")
    done = subprocess.run([exe, "-q", "-r", *PACKAGES, "-f", "json", "--severity-level", "high"],
                          cwd=REPO, capture_output=True, text=True, check=False)
    report = json.loads(done.stdout)
    high = [f"{r['filename']}:{r['line_number']} {r['test_id']} {r['issue_text']}"
            for r in report["results"] if r["issue_severity"] == "HIGH"]
    assert not high, "\n".join(high)
