"""What ``firmware`` and ``export c-library`` print for feature-table and multi-label bundles."""

from click.testing import CliRunner

from sensorbudget.cli_firmware import firmware_command
from sensorbudget.cli_library import c_library_command
from tests.export.helpers import synthetic_bundle
from tests.export.test_export_decisions import calibrated_bundle


def test_feature_table_firmware_says_its_input(tmp_path):
    bundle, _ = synthetic_bundle(tmp_path, "regression", budget=3)
    result = CliRunner().invoke(firmware_command, [str(tmp_path / "b"), "--target", "host",
                                                   "-o", str(tmp_path / "fw")],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert ("3 features -> 3 scores, input: the 3 selected features (one prediction per "
            "feature vector), ") in result.output
    assert "extractors on" not in result.output and "window 1" not in result.output


def test_c_library_names_the_decide_call(tmp_path):
    calibrated_bundle(tmp_path)
    result = CliRunner().invoke(c_library_command, [str(tmp_path / "cal"), "-o",
                                                    str(tmp_path / "lib"), "--name", "gait"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "input: the 5 selected features (one prediction per feature vector)" in result.output
    assert ("label decisions: gait_decide(scores, decisions) with the bundle's calibrated "
            "thresholds (f1)") in result.output
    assert "gait_decide(const gait_score_t *scores" in (tmp_path / "lib" / "src" / "gait.h"
                                                        ).read_text()
