"""The Numeric noun (issue 27 item 2): one typed value for float32 / Q15 / Q31 that every surface
takes and that reads and writes as its name."""

import json
import re

import pytest
from click.testing import CliRunner

import sensorbudget as sb
from sensorbudget.cli import main
from sensorbudget.export import c_header
from sensorbudget.export.errors import ExportError
from sensorbudget.export.fixed_point import FORMATS
from sensorbudget.export.numeric import NUMERICS, Numeric
from tests.export.helpers import synthetic_bundle


def test_members_are_their_names_at_every_boundary():
    assert sb.Numeric is Numeric and NUMERICS == ("float32", "q15", "q31")
    for m in Numeric:
        assert m == m.value and f"{m}" == m.value and str(m) == m.value
        assert json.loads(json.dumps({"n": m})) == {"n": m.value}
        assert Numeric.parse(m.value) is m and Numeric.parse(m) is m
        assert m.fixed == (m.value in FORMATS)
        assert {m: 1}[m.value] == 1            # keys the same dictionaries as the names


@pytest.mark.parametrize("value", ["Q15", "q7", "", None, 15, "float64"])
def test_a_wrong_value_is_one_line_naming_it_and_the_choices(value):
    with pytest.raises(ExportError) as info:
        Numeric.parse(value)
    assert str(info.value) == f"numeric={value!r} is not one of float32, q15, q31"


@pytest.mark.parametrize("m", list(Numeric))
def test_the_c_type_is_the_generated_headers(tmp_path, m):
    """The member's C type is the one the header's predict function takes, and a member gives
    the same header as its name."""
    bundle, _ = synthetic_bundle(tmp_path, "regression", seed=list(Numeric).index(m))
    text = c_header(bundle, numeric=m).text
    assert text == c_header(bundle, numeric=m.value).text
    suffix = "" if not m.fixed else f"_{m.value}"
    proto = re.search(rf"void sbmodel_predict{suffix}\(const ([a-z0-9_]+) \*", text)
    assert proto is not None and proto.group(1) == m.ctype


def test_every_numeric_option_offers_exactly_the_members():
    checked = 0
    for argv in (["export", "c-header"], ["export", "c-library"], ["firmware"], ["simulate"],
                 ["train"]):
        help_text = CliRunner().invoke(main, [*argv, "--help"]).output
        if "--numeric" not in help_text:
            continue
        choice = re.search(r"--numeric \[([a-z0-9|]+)\]", help_text)
        assert choice is not None and tuple(choice.group(1).split("|")) == NUMERICS, argv
        checked += 1
    assert checked >= 3
