"""calibrate's TOML and report.json's sensors (issue 33, item 7): an existing entry of the
wrong type, a method or report folder name with a newline or a control character, and a
report whose ``sensors`` is not an object are one ``Error:`` line or round-trip exactly."""

import copy
import json
import random
import tomllib

import pytest
from click.testing import CliRunner

from sensorbudget.device_sim.calibrate import PUSH_SHARE, render_block
from sensorbudget.cli import main


@pytest.fixture(scope="module")
def report(tiny, tmp_path_factory):
    bundle, rec, _ = tiny
    out = tmp_path_factory.mktemp("rep") / "r"
    result = CliRunner().invoke(main, ["simulate", str(bundle), "--recordings", str(rec),
                                       "--report", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "report.json").read_text())
    data["cost"]["per_extractor_measured"] = True          # calibrate reads it as measured
    return data


def _write(folder, data):
    folder.mkdir()
    (folder / "report.json").write_text(json.dumps(data))
    return folder


def _one_error_line(result, needle):
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("Error: "), result.stderr
    assert needle in result.stderr, result.stderr


@pytest.mark.parametrize("folder", ["run\nnext", "run\x01x", 'run"quote\\back', "run\x7f"])
def test_report_folder_names_round_trip_through_the_toml(report, tiny, tmp_path, folder):
    """A newline or \\x01 in the report folder's name gave a TOMLDecodeError traceback (the
    hand-written TOML did not escape them)."""
    rep = _write(tmp_path / folder, report)
    toml = tmp_path / "sensors.toml"
    toml.write_text(tiny[2].read_text())
    result = CliRunner().invoke(main, ["calibrate", str(rep), "--sensors", str(toml)])
    assert result.exit_code == 0, result.output
    entries = tomllib.loads(toml.read_text())["calibration"]
    measured = [e for e in entries if e.get("measured", True)]
    assert measured and all(e["source"] == f"{rep} (backend {report['backend']})"
                            for e in measured)
    pushes = report["cost"]["per_extractor_push"]            # extractors: plus their pushes
    assert all(e["method"] == report["cost"]["per_extractor_method"] + (
        PUSH_SHARE if e["extractor"] in pushes else "") for e in measured)
    assert not any(c in result.output for c in "\x01\x7f")


@pytest.mark.parametrize("method", ["measured\nper call", "per\x01call"])
def test_a_method_with_control_characters_is_refused(report, tiny, tmp_path, method):
    data = copy.deepcopy(report)
    data["cost"]["per_extractor_method"] = method
    rep = _write(tmp_path / "r", data)
    toml = tmp_path / "sensors.toml"
    toml.write_text(tiny[2].read_text())
    result = CliRunner().invoke(main, ["calibrate", str(rep), "--sensors", str(toml)])
    _one_error_line(result, "cost.per_extractor_method=")
    assert "without control characters" in result.stderr
    assert toml.read_text() == tiny[2].read_text()


@pytest.mark.parametrize("seed", range(3))
def test_rendered_block_parses_back_to_the_entries(seed):
    """render_block against tomllib (the reference reader) on random strings of any code
    point TOML allows in a string, and random finite numbers."""
    rng = random.Random(seed)
    alphabet = [chr(c) for c in range(0x20)] + list("\"\\'=[]#\n\t ab\u00e9\u202e\U0001f600")
    entries = [{"extractor": "".join(rng.choices(alphabet, k=rng.randint(0, 12))),
                "target": "cortex-m4f",
                "compute_time_s": rng.uniform(0, 1e-3) * 10.0 ** rng.randint(-5, 5),
                "method": "".join(rng.choices(alphabet, k=rng.randint(0, 12))),
                "measured": rng.random() < 0.5} for _ in range(20)]
    text = render_block(entries)
    assert tomllib.loads(text) == {"calibration": entries}


@pytest.mark.parametrize("entry, needle", [
    ('target = 5', "target=5 must name the compute target"),
    ('target = "cortex-m4f"\nmeasured = "yes"', "measured='yes' must be true or false"),
    ('target = "cortex-m4f"\ncompute_time_s = "fast"', "compute_time_s='fast' must be"),
])
def test_an_existing_entry_of_the_wrong_type_is_one_line(report, tiny, tmp_path, entry,
                                                        needle):
    """``target = 5`` gave a TypeError traceback (sorting int and str targets)."""
    rep = _write(tmp_path / "r", report)
    toml = tmp_path / "sensors.toml"
    extractor = report["bundle"]["selected"][0]
    text = tiny[2].read_text() + f'\n[[calibration]]\nextractor = "{extractor}"\n{entry}\n'
    toml.write_text(text)
    result = CliRunner().invoke(main, ["calibrate", str(rep), "--sensors", str(toml)])
    _one_error_line(result, needle)
    assert toml.read_text() == text


@pytest.mark.parametrize("sensors", ["lots", [1, 2], {"per_sensor": "x"},
                                     {"per_sensor": {"acc": 5}},
                                     {"per_sensor": {"acc": {"energy_j": "much"}}}])
def test_report_with_sensors_of_the_wrong_type_is_one_line(report, tmp_path, sensors):
    """``report`` on such a report.json raised AttributeError (exit 1)."""
    data = copy.deepcopy(report)
    data["sensors"] = sensors
    rep = _write(tmp_path / "r", data)
    out = tmp_path / "page.html"
    result = CliRunner().invoke(main, ["report", str(rep), "-o", str(out)])
    _one_error_line(result, "sensors")
    assert not out.exists()
