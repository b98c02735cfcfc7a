"""Damaged or hand-edited report.json files: ``compare`` and ``calibrate`` answer with one
``Error:`` line naming the field (exit 2), never a traceback, and calibrate writes nothing."""

import copy
import json

import pytest
from click.testing import CliRunner

from sensorbudget.device_sim.report_schema import FIELDS
from sensorbudget.cli_simulate import calibrate_command, compare_command, simulate_command


@pytest.fixture(scope="module")
def report(tiny, tmp_path_factory):
    bundle, rec, _ = tiny
    out = tmp_path_factory.mktemp("rep") / "r"
    result = CliRunner().invoke(simulate_command, [str(bundle), "--recordings", str(rec),
                                                   "--report", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text())


def put(data, dotted, value):
    *parents, last = dotted.split(".")
    for p in parents:
        data = data[p]
    if value is DELETE:
        del data[last]
    else:
        data[last] = value


DELETE = object()
BAD = [
    ("cost", DELETE, "cost=None"), ("energy", DELETE, "energy=None"),
    ("cost.unit", "furlongs", "cost.unit='furlongs'"),
    ("cost.measured", "yes", "cost.measured='yes'"),
    ("cost.per_extractor", {"ax.mean": -3.0}, "cost.per_extractor="),
    ("cost.per_extractor", {"ax.mean": float("nan")}, "cost.per_extractor="),
    ("cost.per_extractor", {"ax\nmean": 1.0}, "cost.per_extractor="),
    ("cost.per_extractor", {"ax\x00mean": 1.0}, "cost.per_extractor="),
    ("cost.per_extractor", [1, 2], "cost.per_extractor=[1, 2]"),
    ("profile.name", DELETE, "profile.name=None"),
    ("profile", "m4", "profile='m4'"),
    ("backend", 3, "backend=3"),
    ("bundle.selected", "ax.mean", "bundle.selected='ax.mean'"),
    ("energy.energy_per_prediction_j.sensors", "lots", "sensors='lots'"),
    ("energy.deadline_misses", -1, "deadline_misses=-1"),
    ("cost.extractors", {"median": "fast"}, "cost.extractors="),
]


def write(tmp_path, data, name="bad"):
    out = tmp_path / name
    out.mkdir()
    (out / "report.json").write_text(json.dumps(data))
    return out


def test_a_fresh_report_passes_every_check(report, tmp_path):
    assert len(FIELDS) > 20
    result = CliRunner().invoke(compare_command, [str(write(tmp_path, report)),
                                                  str(write(tmp_path, report, "b"))])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("field, value, message", BAD)
def test_compare_and_calibrate_name_the_bad_field(report, tiny, tmp_path, field, value,
                                                  message):
    data = copy.deepcopy(report)
    data["cost"]["per_extractor_measured"] = True        # calibrate would accept it otherwise
    put(data, field, value)
    bad = write(tmp_path, data)
    good = write(tmp_path, report, "good")
    toml = tmp_path / "sensors.toml"
    toml.write_text(tiny[2].read_text())
    for command, argv in ((compare_command, [str(good), str(bad)]),
                          (calibrate_command, [str(bad), "--sensors", str(toml)])):
        result = CliRunner().invoke(command, argv)
        assert result.exit_code == 2, (command.name, result.output)
        lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
        assert len(lines) == 1 and message in lines[0], result.output
    assert toml.read_text() == tiny[2].read_text()


def test_unknown_profile_and_deep_nesting(report, tiny, tmp_path):
    data = copy.deepcopy(report)
    data["cost"]["per_extractor_measured"] = True
    data["profile"]["name"] = "pdp-11"
    result = CliRunner().invoke(calibrate_command, [str(write(tmp_path, data)), "--sensors",
                                                    str(tiny[2])])
    assert result.exit_code == 2 and "profile 'pdp-11' is not one of" in result.output
    deep = tmp_path / "deep"
    deep.mkdir()
    (deep / "report.json").write_text('{"format": ' + "[" * 100000 + "]" * 100000 + "}")
    result = CliRunner().invoke(compare_command, [str(deep), str(deep)])
    assert result.exit_code == 2 and "not a readable simulation report" in result.output


def test_compare_gives_no_ratio_across_units(report, tmp_path):
    """instructions (a Cortex-M backend) against cycles (AVR): the compute rows carry their
    units and no B/A ratio; rows in common units keep theirs."""
    other = copy.deepcopy(report)
    other["cost"]["unit"] = "cycles"
    other["cost"]["extractors"] = {"min": 9000.0, "median": 9000.0, "max": 9000.0}
    result = CliRunner().invoke(compare_command, [str(write(tmp_path, report)),
                                                  str(write(tmp_path, other, "avr"))])
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines()
               if line.startswith("window pass / prediction (extractors)"))
    median = report["cost"]["extractors"]["median"]
    assert "(different units: no ratio)" in row and row.rstrip().endswith("9000 cycles")
    assert f"{median:.4g} instructions" in row and "x" not in row.split("cycles")[-1]
    same = CliRunner().invoke(compare_command, [str(write(tmp_path, report, "a")),
                                                str(write(tmp_path, report, "b"))])
    row = next(line for line in same.output.splitlines()
               if line.startswith("window pass / prediction (extractors)"))
    assert row.rstrip().endswith("1x")
