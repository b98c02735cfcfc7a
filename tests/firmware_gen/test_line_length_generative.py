"""Every emitted C line within MAX_LINE (100) columns by construction (issue 28 item 6): no rewrap
pass exists, so the break marks the emitters place (export.cgen.fit) must hold for any bundle.

Checked over seeded generated cases (:mod:`tests.firmware_gen.generative`: random channels,
extractors, windows and hops; each with a random model name of 1-40 characters and the
longest allowed name, for its target in float32, q15 and q31, and its C library), over the
golden bundles under every name length 1..40, and for channel names of about 200 characters
(they reach the comments and the series functions' names). No break mark is left in any file,
and a long name's stream source is the short name's program with the name replaced (same C
tokens: only the layout differs). ``SB_LINE_CASES`` sets the number of generated cases
(default 40).
"""

from __future__ import annotations

import os
import re
import shutil
import string
from pathlib import Path

import numpy as np
import pytest

from sensorbudget.export.c_header import c_header
from sensorbudget.export.cgen import MAX_LINE, MAX_NAME
from sensorbudget.firmware_gen import NUMERICS, FirmwareGenError, generate_firmware
from sensorbudget.firmware_gen.extractors_c import stream_header, stream_source
from sensorbudget.firmware_gen.library import generate_library
from sensorbudget.firmware_gen.multirate import make_multirate_plan
from sensorbudget.firmware_gen.multirate_c import multirate_sources
from sensorbudget.firmware_gen.plan import make_plan
from sensorbudget.trainer.bundle.model import load_bundle
from tests.firmware_gen import generative as G
from tests.firmware_gen.conftest import need_tools
from tests.firmware_gen.gen_runner import is_refusal
from tests.firmware_gen.test_line_length import ONE_LINE_FORMATS, c_tokens

CASES = int(os.environ.get("SB_LINE_CASES", "40"))
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "bundles"
FULL_SCALE = {"*": 8192.0}
#: the longest library name (its symbols take the prefix '<name>_model')
MAX_LIBRARY_NAME = MAX_NAME - len("_model")
MARKS = re.compile("[\x01\x02\x03]")


def problems(files: dict) -> list:
    """'file:line: length' of every line over MAX_LINE, 'file: mark' of a break mark left
    (JSON manifests aside: a string value is one line)."""
    out = []
    for fname, text in files.items():
        if fname.endswith((*ONE_LINE_FORMATS, ".json")):
            continue
        out += [f"{fname}:{i + 1}: {len(line)}" for i, line in enumerate(text.splitlines())
                if len(line) > MAX_LINE]
        out += [f"{fname}: mark"] if MARKS.search(text) else []
    return out


def random_name(rng, longest: int) -> str:
    """A C prefix of 1..longest characters (a letter, then letters, digits and '_')."""
    n = int(rng.integers(1, longest + 1))
    rest = string.ascii_lowercase + string.digits + "_"
    return "k" + "".join(rng.choice(list(rest), n - 1))


def renamed_tokens(text: str, name: str, to: str = "sbmodel") -> list:
    return [t.replace(name, to).replace(name.upper(), to.upper()) for t in c_tokens(text)]


def emitted(bundle, target: str, numeric: str, name: str, lib_name: str) -> dict:
    """Every file of the firmware for ``target`` and of the C library (a refusal by a fit
    check gives no firmware files)."""
    scale = None if numeric == "float32" else FULL_SCALE
    files = {}
    try:
        fw = generate_firmware(bundle, target=target, numeric=numeric, full_scale=scale,
                               name=name)
        files.update(fw.files)
    except FirmwareGenError as exc:
        assert is_refusal(str(exc)), exc
    lib = generate_library(bundle, numeric=numeric, full_scale=scale, name=lib_name)
    files.update({f"lib/{k}": v for k, v in lib.files.items()})
    return files


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    return G.write_recordings(tmp_path_factory.mktemp("lines") / "recordings", 2026)


@pytest.fixture(scope="module")
def case_bundles(recordings, tmp_path_factory):
    """[(case, bundle)] of the first CASES seeds (a seed whose selection the recordings cannot
    train is skipped, as the generative test's runner does)."""
    work = tmp_path_factory.mktemp("line_cases")
    out = []
    for seed in range(CASES):
        case = G.make_case(seed)
        fs = G.feature_set(case, recordings, work / f"g{seed}")
        bundle, _ = G.case_bundle(case, fs, work / f"g{seed}" / "bundle")
        out.append((case, bundle))
    return out


def test_generated_cases_are_short_for_random_and_longest_names(case_bundles):
    seen = 0
    for case, bundle in case_bundles:
        rng = np.random.default_rng(case.seed + 28)
        for numeric in NUMERICS:
            for name, lib_name in ((random_name(rng, MAX_NAME),
                                    random_name(rng, MAX_LIBRARY_NAME)),
                                   ("n" * MAX_NAME, "m" * MAX_LIBRARY_NAME)):
                files = emitted(bundle, case.target, numeric, name, lib_name)
                assert problems(files) == [], (case.seed, numeric, name)
                seen += len(files)
    assert seen > 0


def test_generated_stream_sources_are_the_short_names_program(case_bundles):
    """The stream source of the longest name (also without the header's fixed model: the
    memory estimate's form) has the short name's C tokens; so has its header but for the
    channel macros (cut to C99's 63 significant characters under a long prefix)."""
    long = "n" * MAX_NAME
    for case, bundle in case_bundles:
        for numeric in NUMERICS:
            scale = None if numeric == "float32" else FULL_SCALE
            texts = {}
            for name in ("sbmodel", long):
                plan = make_plan(bundle, name=name, numeric=numeric, full_scale=scale)
                fixed = c_header(bundle, name=name, numeric=numeric).fixed
                texts[name] = {"stream.c": stream_source(plan, fixed),
                               "plain.c": stream_source(plan), "stream.h": stream_header(plan)}
            assert problems(texts[long]) == [], (case.seed, numeric)
            for fname, text in texts[long].items():
                channel = re.compile(r"SBMODEL_CH_\w+")
                got = [channel.sub("CH", t) for t in renamed_tokens(text, long)]
                want = [channel.sub("CH", t) for t in c_tokens(texts["sbmodel"][fname])]
                assert got == want, (case.seed, numeric, fname)


@pytest.mark.parametrize("golden", sorted(p.name for p in GOLDEN.iterdir()))
def test_golden_bundles_for_every_name_length(golden):
    """A greedy packing that fits one name length and not the next would show here."""
    bundle = load_bundle(GOLDEN / golden)
    for numeric in NUMERICS:
        scale = None if numeric == "float32" else FULL_SCALE
        for length in range(1, MAX_NAME + 1):
            name = ("k" + "abcdefghij" * 4)[:length]
            if bundle.meta.get("multi_rate"):    # every generated part, groups <name>_g<i>
                if length + len("_g0") <= MAX_NAME:
                    files = multirate_sources(make_multirate_plan(
                        bundle, name=name, numeric=numeric, full_scale=scale), bundle)
                    assert problems(files) == [], (golden, numeric, length)
                continue
            plan = make_plan(bundle, name=name, numeric=numeric, full_scale=scale)
            fixed = c_header(bundle, name=name, numeric=numeric).fixed
            files = {"stream.c": stream_source(plan, fixed), "stream.h": stream_header(plan)}
            assert problems(files) == [], (golden, numeric, length)


def _long_channel_recordings(recordings: Path, folder: Path) -> dict:
    """The recordings with every channel renamed to about 200 characters, the three axes of a
    sensor sharing their first 190 (cut to fit, the series functions' names would collide);
    returns {old: new}."""
    new = {c: f"{c.split('_')[0]}_{'x' * 180}_{c}" for c in G.CHANNELS}
    folder.mkdir(parents=True)
    for path in recordings.glob("*.npz"):
        with np.load(path, allow_pickle=False) as z:
            np.savez(folder / path.name, **{new.get(k, k): z[k] for k in z.files})
    shutil.copy(recordings / "index.csv", folder / "index.csv")
    return new


@pytest.fixture(scope="module")
def long_channel_bundles(recordings, tmp_path_factory):
    """[(seed, bundle)] of the first 12 generated cases on the renamed channels."""
    work = tmp_path_factory.mktemp("long_channels")
    new = _long_channel_recordings(recordings, work / "recordings")
    out = []
    for seed in range(12):
        case = G.make_case(seed)
        toml = case.toml
        for old in sorted(new, key=len, reverse=True):
            toml = toml.replace(f'"{old}"', f'"{new[old]}"')
        case = G.Case(seed, toml, case.window, case.hop, (), case.target, case.numeric,
                      tuple(new[c] for c in case.channels), case.kernel)
        fs = G.feature_set(case, work / "recordings", work / f"g{seed}")
        out.append((seed, G.case_bundle(case, fs, work / f"g{seed}" / "bundle")[0]))
    return out


def _series_names(stream: str) -> list:
    return re.findall(r"^static void (\w+_series_\w+)\(", stream, re.M)


def test_channel_names_of_200_characters(long_channel_bundles):
    """Comments naming the channels are wrapped (a word longer than a line is cut), the
    series functions' names are cut to 80 characters and stay distinct."""
    cut = 0
    for seed, bundle in long_channel_bundles:
        for numeric in NUMERICS:
            files = emitted(bundle, "host", numeric, "n" * MAX_NAME, "m" * MAX_LIBRARY_NAME)
            assert problems(files) == [], (seed, numeric)
            names = _series_names(files[f"{'n' * MAX_NAME}_stream.c"])
            assert len(names) == len(set(names)) and all(len(n) <= 80 for n in names)
            cut += len(names)
    assert cut > 0                      # some case has series functions named for channels


def test_channel_names_of_200_characters_build(long_channel_bundles, tmp_path):
    """The host firmware of two such bundles with series functions builds with -Werror."""
    from sensorbudget.firmware_gen.build import build, write_firmware

    need_tools("make", "gcc")
    long = "n" * MAX_NAME
    picked = [(seed, b) for seed, b in long_channel_bundles
              if _series_names(stream_source(make_plan(b, name=long, numeric="q15",
                                                       full_scale=FULL_SCALE)))][:2]
    assert picked
    for seed, bundle in picked:
        fw = generate_firmware(bundle, target="host", numeric="q15", full_scale=FULL_SCALE,
                               name="n" * MAX_NAME)
        write_firmware(fw, tmp_path / f"g{seed}")
        build(tmp_path / f"g{seed}")          # raises with the compiler's text on a warning


def test_every_stream_routine_for_the_longest_prefix():
    """Each macro of the stream source's templates taking only the prefix (p, P) alone, the
    series and spectrum routines and the Q15 power spectrum with its tables (which no
    generated case emits yet) under a 40-character prefix."""
    from jinja2.runtime import Macro

    from sensorbudget.firmware_gen import fft_c, fft_q15_c, series_c
    from sensorbudget.firmware_gen.ctemplate import environment

    p = "n" * MAX_NAME
    values = {"p": p, "P": p.upper()}
    texts = {f"series {n}": series_c.ROUTINES[n][1](p) for n in series_c.ROUTINES}
    texts.update({f"spectrum {n}": fft_c.ROUTINES[n][1](p) for n in fft_c.ROUTINES})
    texts["fft_q15"] = fft_q15_c.routine(p) + "".join(fft_q15_c.tables(p, 64, (48,)))
    for template in ("stream.c.j2", "q15.c.j2", "series.c.j2", "spectrum.c.j2", "fft_q15.c.j2"):
        module = environment().get_template(template).module
        for name in dir(module):
            routine = getattr(module, name)
            if isinstance(routine, Macro) and set(routine.arguments) <= set(values):
                texts[f"{template} {name}"] = str(routine(*(values[a] for a in
                                                           routine.arguments)))
    assert len(texts) > 40 and all(p in t.lower() for t in texts.values())
    assert problems(texts) == []
