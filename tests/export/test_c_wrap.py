"""export.c_wrap: generated C rewrapped within MAX_LINE is the same program (same tokens)."""

import shutil
import subprocess

import pytest

from sensorbudget.export.c_wrap import wrap_c
from sensorbudget.export.cgen import MAX_LINE

LONG = "gait_classifier_left_ankle_v2"


def tokens(text: str, tmp_path) -> str:
    """The program's tokens without comments or layout: line splices joined (translation phase
    2, which -fpreprocessed skips), gcc's comment-stripping pass keeping the directives (no
    macro expansion, no includes), then every blank removed."""
    path = tmp_path / "x.c"
    path.write_text(text.replace("\\\n", ""))
    out = subprocess.run(["gcc", "-fpreprocessed", "-dD", "-E", "-P", str(path)], check=True,
                         capture_output=True, text=True).stdout
    return "".join(out.split())


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_wrapped_generated_c_has_the_same_tokens(tmp_path):
    from sensorbudget.firmware_gen.extractors_c import _stream_source, stream_header
    from sensorbudget.firmware_gen.firmware import main_source
    from sensorbudget.firmware_gen.plan import make_plan
    from sensorbudget.firmware_gen.targets import get_target
    from tests.export.helpers import synthetic_bundle

    bundle, _ = synthetic_bundle(tmp_path, "regression", name="b", d=12, t=2, budget=4)
    texts = [f"/* {'a comment ' * 20} */\nint {LONG}_x = 1; /* {'trailing ' * 15} */\n"
             f"#define {LONG.upper()}_M(a, b) ((a) + (b) + {LONG.upper()}_OFFSET_THAT_IS_LONG "
             f"+ {LONG.upper()}_OTHER_LONG_OFFSET)\n"]
    plan = make_plan(bundle, name=LONG, numeric="float32")     # a feature-vector plan
    texts += [stream_header(plan), _stream_source(plan), main_source(plan, get_target("host"))]
    assert any(max(map(len, t.splitlines())) > MAX_LINE for t in texts[1:])  # wrapping is needed
    for text in texts:
        wrapped = wrap_c(text)
        assert max(map(len, wrapped.splitlines())) <= MAX_LINE
        assert tokens(wrapped, tmp_path) == tokens(text, tmp_path)
        assert wrap_c(wrapped) == wrapped                       # idempotent


def test_string_literals_and_short_lines_are_left_alone():
    line = 'static const char *s = "' + "x " * 60 + '";'
    assert wrap_c(line) == line
    assert wrap_c("int a;\n") == "int a;\n"
