"""The built wheel: its RECORD, its METADATA, and the whole pipeline run from it.

The wheel is built as a user's ``pip install`` would: an sdist of a copy of the repository (the
build never writes into the checkout), then a wheel of the sdist, with the environment's own
setuptools (offline; ``setuptools>=77`` is in the test extra). It is installed into a new venv
that sees the test environment's dependencies through a ``.pth`` line but not the repository
(the editable install's finder is not run there), and the command line runs from an unrelated
folder: features -> train -> export onnx -> firmware --build -> simulate -> predict -> report.
Each output is compared with the same command run from the checkout; predict's metrics line
names the installed copy of docs/metrics.md.
"""

from __future__ import annotations

import email.parser
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fixtures import TINY_SENSORS, write_stream
from tests.packaging.layout import cited_docs, installed_name, shipped_sources
from tests.paths import REPO

COPIED = ("pyproject.toml", "README.md", "LICENSE", "sensorbudget", "trainer", "export",
          "firmware_gen", "device_sim", "docs")


def run(args, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True,
                            timeout=300, **kwargs)
    assert result.returncode == 0, (args, result.stdout[-3000:], result.stderr[-3000:])
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    import setuptools

    major = int(setuptools.__version__.split(".")[0])
    assert major >= 77, (f"setuptools {setuptools.__version__} cannot build the wheel (the SPDX "
                         f"license needs 77 or later): pip install 'sensorbudget[test]'")
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    for name in COPIED:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, source / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            source.mkdir(exist_ok=True)
            shutil.copy2(src, source / name)
    hook = "import sys; from setuptools import build_meta as b; print(b.build_sdist(sys.argv[1]))"
    sdist_name = run([sys.executable, "-c", hook, base / "dist"], cwd=source).stdout.split()[-1]
    with tarfile.open(base / "dist" / sdist_name) as sdist:
        sdist.extractall(base / "unpacked", filter="data")
    (unpacked,) = (base / "unpacked").iterdir()
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", base / "dist", unpacked])
    (built,) = (base / "dist").glob("sensorbudget-*.whl")
    return built


def record(wheel: Path) -> list:
    with zipfile.ZipFile(wheel) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".dist-info/RECORD")]
        return [line.split(",")[0] for line in z.read(name).decode().splitlines() if line]


def metadata(wheel: Path):
    with zipfile.ZipFile(wheel) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(z.read(name).decode())


def test_top_level_names_are_sensorbudget_only(wheel):
    import sensorbudget

    tops = {path.split("/")[0] for path in record(wheel)}
    assert tops == {"sensorbudget", f"sensorbudget-{sensorbudget.__version__}.dist-info"}
    with zipfile.ZipFile(wheel) as z:
        top_level = [n for n in z.namelist() if n.endswith("top_level.txt")]
        assert [z.read(n).decode().split() for n in top_level] in ([], [["sensorbudget"]])


def test_every_module_template_asset_and_doc_ships(wheel):
    """Every file of sensorbudget/ and the library folders (each subpackage's __init__.py and
    modules, the firmware templates, PROTOCOL.md, the report's script, style and template) and
    every docs/*.md is in the RECORD, under sensorbudget/."""
    files = set(record(wheel))
    expected = {installed_name(p) for p in shipped_sources()}
    assert {"sensorbudget/firmware_gen/PROTOCOL.md", "sensorbudget/device_sim/html/report.js",
            "sensorbudget/device_sim/html/templates/page.html.j2",
            "sensorbudget/trainer/evaluation/__init__.py",
            "sensorbudget/docs/metrics.md"} <= expected
    assert not expected - files, sorted(expected - files)
    cited = {f"sensorbudget/docs/{name}" for name in cited_docs()}
    assert cited and not cited - files, sorted(cited - files)


def test_metadata_has_an_spdx_license_and_the_license_file(wheel):
    meta = metadata(wheel)
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert meta["License"] is None                   # the deprecated free-text field is gone
    assert tuple(map(int, meta["Metadata-Version"].split("."))) >= (2, 4)
    with zipfile.ZipFile(wheel) as z:
        (lic,) = [n for n in z.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert z.read(lic) == (REPO / "LICENSE").read_bytes()


# -- the installed wheel, from an unrelated folder --------------------------------------------

PROBE = """import json, sys, sensorbudget, sensorbudget.trainer, sensorbudget.device_sim.html
from sensorbudget.trainer.doc_files import cite, doc_path
print(json.dumps({"sensorbudget": sensorbudget.__file__, "path": list(sensorbudget.__path__),
                  "trainer": sensorbudget.trainer.__file__,
                  "html": sensorbudget.device_sim.html.__file__,
                  "metrics": str(doc_path("metrics.md")), "cited": cite("metrics.md"),
                  "sys_path": sys.path}))"""


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> tuple:
    """(venv folder, its site-packages, environment for its commands)."""
    venv = tmp_path_factory.mktemp("venv") / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
         wheel])
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
                .stdout.strip())
    # the test environment's dependencies, as plain path entries: a .pth line is not a site
    # folder, so the editable install's own .pth (the repository's finder) is not run
    deps = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "zz_test_dependencies.pth").write_text("".join(f"{d}\n" for d in deps))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return venv, site, env


def inside(path, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


def test_the_installed_package_resolves_in_site_packages_not_the_repository(installed, tmp_path):
    venv, site, env = installed
    found = json.loads(run([venv / "bin" / "python", "-c", PROBE], cwd=tmp_path, env=env).stdout)
    for key in ("sensorbudget", "trainer", "html", "metrics"):
        assert inside(found[key], site / "sensorbudget"), (key, found[key])
    assert found["path"] == [str(site / "sensorbudget")]    # no checkout appended
    assert Path(found["metrics"]).read_bytes() == (REPO / "docs" / "metrics.md").read_bytes()
    assert found["cited"] == found["metrics"]         # messages name the installed copy
    repo = REPO.resolve()
    assert not [p for p in found["sys_path"] if p and Path(p).resolve() == repo]
    assert not [p for p in found["sys_path"]
                if p and inside(p, REPO) and (Path(p) / "sensorbudget").exists()]


def checkout_cli(*args) -> str:
    from sensorbudget.cli import main

    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def same_files(a: Path, b: Path, suffixes=None) -> list:
    """The files of folder ``b`` (those with one of ``suffixes``; all by default) have the same
    names and bytes in folder ``a``; returns their relative names."""
    names = sorted(p.relative_to(b) for p in b.rglob("*")
                   if p.is_file() and (suffixes is None or p.suffix in suffixes))
    assert names
    for rel in names:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
    return names


def test_the_pipeline_runs_from_the_installed_wheel_as_from_the_checkout(installed, tmp_path,
                                                                         monkeypatch):
    """Each step through the installed console script, in a folder unrelated to the repository,
    and the same step through the checkout's CLI on the same files: same bytes (features,
    bundle, ONNX, generated firmware sources, the bundle's report page), same simulation
    numbers but the measured compute time."""
    from sensorbudget.device_sim.backends import available_backends

    venv, site, env = installed
    backend = "host" if available_backends()["host"] is None else "python"
    data = tmp_path / "data"
    (data / "sensors.toml").parent.mkdir()
    (data / "sensors.toml").write_text(TINY_SENSORS)
    rec = write_stream(data / "rec" / "stream.csv", n=240, seed=3)
    wheel_out, repo_out = tmp_path / "wheel", tmp_path / "checkout"
    wheel_out.mkdir()

    def both(*args) -> tuple:
        """``sensorbudget args`` from the wheel in the folder wheel/ and from the checkout in
        checkout/ (the outputs are named relative to each, so the runs' names agree); their
        standard outputs."""
        return (run([venv / "bin" / "sensorbudget", *args], cwd=wheel_out, env=env).stdout,
                checkout_cli(*args))

    repo_out.mkdir()
    monkeypatch.chdir(repo_out)
    both("features", rec, "--sensors", data / "sensors.toml", "-o", "feats.npz")
    both("train", "feats.npz", "--budget", 3, "-o", "bundle")
    both("export", "onnx", "bundle", "-o", "model.onnx")
    both("firmware", "bundle", "--target", "host", "-o", "fw",
         *(["--build"] if backend == "host" else []))
    both("simulate", "bundle", "--recordings", rec, "--backend", backend, "--report", "sim")
    said = both("predict", "bundle", rec, "-o", "predictions.csv")
    both("report", "bundle", "-o", "bundle.html")
    both("report", "bundle", "sim", "-o", "report.html")

    assert (wheel_out / "feats.npz").read_bytes() == (repo_out / "feats.npz").read_bytes()
    assert "model.json" in map(str, same_files(wheel_out / "bundle", repo_out / "bundle"))
    assert (wheel_out / "model.onnx").read_bytes() == (repo_out / "model.onnx").read_bytes()
    assert ((wheel_out / "predictions.csv").read_bytes()
            == (repo_out / "predictions.csv").read_bytes())
    # the metrics' definitions: the installed copy from the wheel, docs/ of the checkout
    installed_doc = site / "sensorbudget" / "docs" / "metrics.md"
    assert f"(definitions: {installed_doc}):" in said[0] and installed_doc.is_file()
    assert "(definitions: docs/metrics.md):" in said[1]
    same_files(wheel_out / "fw", repo_out / "fw", suffixes=(".c", ".h"))
    if backend == "host":
        assert (wheel_out / "fw" / "firmware.json").is_file()
    wheel_sim = json.loads((wheel_out / "sim" / "report.json").read_text())
    repo_sim = json.loads((repo_out / "sim" / "report.json").read_text())
    assert wheel_sim["predictions"] == repo_sim["predictions"] > 0
    assert wheel_sim["mismatches"] == repo_sim["mismatches"] == 0
    assert wheel_sim["accuracy"] == repo_sim["accuracy"]
    # the series but the measured compute (the host backend's unit is wall-clock nanoseconds)
    assert ({k: v for k, v in wheel_sim["series"].items() if k != "cost"}
            == {k: v for k, v in repo_sim["series"].items() if k != "cost"})
    assert len(wheel_sim["series"]["cost"]) == len(repo_sim["series"]["cost"]) > 0
    assert (wheel_out / "bundle.html").read_bytes() == (repo_out / "bundle.html").read_bytes()
    page = (wheel_out / "report.html").read_text(encoding="utf-8")
    assert "<h2>Simulations</h2>" in page and f"{wheel_sim['predictions']} predictions" in page
