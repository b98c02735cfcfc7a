"""Calibrate the flash model (:mod:`sensorbudget.firmware_gen.memory_flash`) against the linker.

``python -m tests.firmware_gen.flash_calibration --seeds 0:52 --cache flash_cal.jsonl`` builds
the generated cases (:mod:`tests.firmware_gen.generative`) of each seed for every board target
and numeric format the fit checks let through, and the single-kind designs of
:func:`ablation_cases` (float32 and q15; about 1,400 builds in all, an hour on two busy cores:
the committed table came from seeds 0-51 and those designs), records each image's plan terms
(:func:`~sensorbudget.firmware_gen.memory_flash.flash_terms`), exact constant bytes and linked
flash (``size -A``) in the cache (a JSON line per build; cached lines are not rebuilt), fits the
bytes per term of each target, measures the error on seeds held out of the fit (5 folds by
seed), and writes ``firmware_gen/flash_calibration.py`` (the table and the margin: the largest
held-out |estimate - linked| times 1.5, rounded up to 64 bytes).

The fit: least squares of ``linked - const_bytes`` on the term counts, every coefficient >= 0
except a kind's deviation from the mean of its arithmetic's kinds (``has:*:f``, ``each:*:q``,
...), which is shrunk towards 0 (ridge, :data:`SHRINK`): a kind seen in few cases costs about
what the other kinds of its arithmetic cost, and a kind never seen costs their mean.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
from pathlib import Path

import numpy as np

TARGETS = ("mps2-an386", "mps2-an385", "nucleo-f4", "arduino-uno", "hifive1", "ch32v003")
NUMERICS = ("float32", "q15", "q31")
SHRINK = 3.0
FOLDS = 5


def build_records(seed: int, work: Path, recordings: Path, data, case=None,
                  numerics=NUMERICS) -> list:
    """Every board image of the generated case ``seed`` (or of ``case``; refusals skipped):
    its terms, constant bytes and linked flash."""
    from sensorbudget.firmware_gen import FirmwareGenError, generate_firmware
    from sensorbudget.firmware_gen.build import build, write_firmware
    from sensorbudget.firmware_gen.memory_flash import const_bytes, flash_terms
    from sensorbudget.firmware_gen.plan import make_plan
    from tests.firmware_gen import gen_runner as R
    from tests.firmware_gen import generative as G

    case = case or G.make_case(seed)
    folder = work / f"s{seed}"
    bundle, _ = G.case_bundle(case, G.feature_set(case, recordings, folder), folder / "bundle")
    out = []
    for numeric in numerics:
        try:
            scales = None
            if numeric != "float32":
                channels = make_plan(bundle, name=case.name, numeric="float32").channels
                scales = R.full_scale(case, channels, data)
            plan = make_plan(bundle, name=case.name, numeric=numeric, full_scale=scales)
        except FirmwareGenError:
            continue
        for target in TARGETS:
            try:
                fw = generate_firmware(bundle, target=target, numeric=numeric, name=case.name,
                                       plan=plan, kernel=case.kernel)
                fp = build(write_firmware(fw, folder / f"{target}_{numeric}"))
            except FirmwareGenError:
                continue
            out.append({"seed": seed, "target": target, "numeric": numeric,
                        "terms": flash_terms(plan, case.kernel), "const": const_bytes(plan),
                        "flash": fp["flash_bytes"]})
    shutil.rmtree(folder, ignore_errors=True)
    return out


#: the single-kind designs: ``last`` on the three ankle axes, plus one kind (on one channel,
#: then on two): they pin each kind's bytes down where random designs see it rarely
ABLATION_KINDS = ("mean", "std", "min", "max", "ptp", "rms", "mad", "zcr", "energy", "skew",
                  "kurtosis", "slope", "peaks_0_5", "percentile_90", "bandpower_1to4",
                  "bandratio_1to3_over_3to8", "domfreq", "centroid", "entropy", "autocorr_3",
                  "cadence_2to9", "jerk.mean", "highpass_0_9.mean")
ABLATION_GROUPS = ("ankle_acc.mag_mean", "ankle_acc.mag_std", "ankle_acc.mag_max", "pair.corr")


def ablation_cases() -> list:
    """(negative seed, Case) of every single-kind design (see :data:`ABLATION_KINDS`)."""
    from tests.firmware_gen import generative as G

    axes = ("ankle_vert", "ankle_horiz_fwd", "ankle_horiz_lateral")
    blocks = [{"channels": list(axes[:2]), "extractors": list(G.WINDOW_STATS)
               + list(G.SHAPE) + list(G.SPECTRAL)},
              {"channels": [axes[2]], "extractors": ["last"]},
              {"channels": [axes[0]], "preprocess": "jerk", "extractors": ["mean"]},
              {"channels": [axes[0]], "preprocess": "highpass:0.9", "extractors": ["mean"]},
              {"group": "ankle_acc", "channels": list(axes), "extractors": list(G.MAGNITUDE)},
              {"group": "pair", "channels": list(axes[:2]), "extractors": ["corr"]}]
    toml = G.sensors_toml(axes, 32, 16, blocks)
    base = tuple(f"{a}.last" for a in axes)
    designs = [base]
    for kind in ABLATION_KINDS:
        designs.append(base + (f"{axes[0]}.{kind}",))
        if "." not in kind:
            designs.append(base + (f"{axes[0]}.{kind}", f"{axes[1]}.{kind}"))
    designs += [base + (g,) for g in ABLATION_GROUPS]
    return [(-1 - i, G.Case(100_000 + 5 * i, toml, 32, 16, d, "host", "float32", axes, "auto"))
            for i, d in enumerate(designs)]     # case seeds: names g100000.., full scales kept


def _plans(case, work: Path, recordings: Path, data) -> dict:
    """{numeric: plan} of ``case`` (the bundle as :func:`build_records` makes it)."""
    from sensorbudget.firmware_gen import FirmwareGenError
    from sensorbudget.firmware_gen.plan import make_plan
    from tests.firmware_gen import gen_runner as R
    from tests.firmware_gen import generative as G

    folder = work / f"plans{case.seed}"
    bundle, _ = G.case_bundle(case, G.feature_set(case, recordings, folder), folder / "bundle")
    out = {}
    for numeric in NUMERICS:
        try:
            scales = None
            if numeric != "float32":
                channels = make_plan(bundle, name=case.name, numeric="float32").channels
                scales = R.full_scale(case, channels, data)
            out[numeric] = make_plan(bundle, name=case.name, numeric=numeric,
                                     full_scale=scales)
        except FirmwareGenError:
            continue
    shutil.rmtree(folder, ignore_errors=True)
    return out


def with_current_terms(records, work: Path, recordings: Path, data) -> list:
    """The records with their terms and constant bytes computed again from their plans by
    today's :func:`~sensorbudget.firmware_gen.memory_flash.flash_terms` (a cache outlives a
    change of the terms)."""
    from sensorbudget.firmware_gen.memory_flash import const_bytes, flash_terms
    from tests.firmware_gen import generative as G

    cases = dict(ablation_cases())
    out, plans = [], {}
    for r in records:
        case = cases[r["seed"]] if r["seed"] < 0 else G.make_case(r["seed"])
        if r["seed"] not in plans:
            plans[r["seed"]] = _plans(case, work, recordings, data)
        plan = plans[r["seed"]][r["numeric"]]
        out.append({**r, "terms": flash_terms(plan, case.kernel), "const": const_bytes(plan)})
    return out


def _expand(terms: dict) -> dict:
    """The terms with each kind's counts also added to its arithmetic's mean (``has:*:f``)."""
    out = dict(terms)
    for t, n in terms.items():
        if t.startswith(("has:", "each:")):
            group, _, arith = t.split(":")
            out[f"{group}:*:{arith}"] = out.get(f"{group}:*:{arith}", 0) + n
    return out


def _design(records, names=None):
    rows = [_expand(r["terms"]) for r in records]
    names = names or sorted({t for row in rows for t in row})
    X = np.zeros((len(rows), len(names)))
    for i, row in enumerate(rows):
        for t, n in row.items():
            if t in names:
                X[i, names.index(t)] = n
    y = np.array([r["flash"] - r["const"] for r in records], dtype=float)
    return X, y, names


def fit(records) -> dict:
    """{term: bytes} of one target's records (see the module docstring)."""
    from scipy.optimize import lsq_linear

    X, y, names = _design(records)
    dev = [i for i, n in enumerate(names) if n.startswith(("has:", "each:")) and ":*:" not in n]
    ridge = np.zeros((len(dev), len(names)))
    ridge[np.arange(len(dev)), dev] = SHRINK
    lower = np.array([-np.inf if i in dev else 0.0 for i in range(len(names))])
    coef = lsq_linear(np.vstack([X, ridge]), np.concatenate([y, np.zeros(len(dev))]),
                      bounds=(lower, np.inf)).x
    table = {n: float(c) for n, c in zip(names, coef) if ":*:" not in n}
    means = {n: float(c) for n, c in zip(names, coef) if ":*:" in n}
    for t in list(table):           # a kind's bytes: its arithmetic's mean plus its deviation
        if t.startswith(("has:", "each:")):
            group, _, arith = t.split(":")
            table[t] = max(0.0, table[t] + means.get(f"{group}:*:{arith}", 0.0))
    for m, v in means.items():      # the means themselves: the bytes of a kind never seen
        table[m] = max(0.0, v)
    return {t: round(v, 1) for t, v in sorted(table.items())}


def held_out_errors(records) -> np.ndarray:
    """estimate - linked of every generated (seed >= 0) record, each predicted by a fit
    without its seed's fold (the single-kind designs, seed < 0, are always fitted)."""
    from sensorbudget.firmware_gen.memory_flash import estimate_from_terms

    seeds = sorted({r["seed"] for r in records if r["seed"] >= 0})
    fold_of = [seeds.index(r["seed"]) % FOLDS if r["seed"] >= 0 else -1 for r in records]
    errors = {}
    for fold in range(FOLDS):
        table = fit([r for r, f in zip(records, fold_of) if f != fold])
        errors.update({i: estimate_from_terms(table, r["terms"]) + r["const"] - r["flash"]
                       for i, (r, f) in enumerate(zip(records, fold_of)) if f == fold})
    return np.asarray([errors[i] for i in sorted(errors)])     # the records' order


def _wrapped(d: dict) -> str:
    """A small dict literal, one entry a line."""
    return "{\n" + "".join(f"    {k!r}: {v!r},\n" for k, v in sorted(d.items())) + "}"


def write_table(tables: dict, margins: dict, errors: dict, path: Path) -> None:
    lines = ['"""Bytes of flash per plan term and target (:mod:`.memory_flash`), fitted to the',
             "linker's ``size -A`` of generated cases; the margin is the largest |estimate -",
             "linked| on seeds held out of the fit, times 1.5, rounded up to 64 bytes.", "",
             "Generated by ``python -m tests.firmware_gen.flash_calibration``; do not edit by "
             'hand.', '"""', "",
             "#: held-out max |estimate - linked| (bytes) and cases, per target",
             f"HELD_OUT = {_wrapped(errors)}", f"FLASH_MARGIN = {_wrapped(margins)}",
             "FLASH_BYTES = {"]
    for target in sorted(tables):
        lines.append(f"    {target!r}: {{")
        items = [f"{t!r}: {v!r}," for t, v in tables[target].items()]
        row = "       "
        for item in items:             # several entries a line, within 100 columns
            if len(row) + 1 + len(item) > 99:
                lines.append(row)
                row = "       "
            row += " " + item
        lines += [row, "    },"]
    lines.append("}")
    path.write_text("\n".join(lines) + "\n", encoding="ascii")


def main(argv=None) -> None:
    from tests.firmware_gen import gen_runner as R
    from tests.firmware_gen import generative as G

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0:52", help="first:stop seeds of generated cases")
    ap.add_argument("--cache", type=Path, default=Path("flash_cal.jsonl"))
    ap.add_argument("--ablation-numerics", default="float32,q15",
                    help="numeric formats of the single-kind designs (q31's extractors are "
                         "q15's)")
    ap.add_argument("--work", type=Path, default=Path("flash_cal_work"))
    ap.add_argument("--no-build", action="store_true", help="fit the cached images only")
    ap.add_argument("--write", type=Path, default=Path(__file__).resolve().parents[2]
                    / "firmware_gen" / "flash_calibration.py")
    args = ap.parse_args(argv)
    lo, hi = (int(x) for x in args.seeds.split(":"))
    done = set()
    if args.cache.is_file():
        done = {json.loads(line)["seed"] for line in args.cache.read_text().splitlines()}
    recordings = G.write_recordings(args.work / "recordings", 2026)
    data = R.recordings_arrays(recordings)
    todo = [] if args.no_build else [(s, None) for s in range(lo, hi)] + ablation_cases()
    with args.cache.open("a") as fh:
        for seed, case in todo:
            if seed not in done:
                numerics = NUMERICS if case is None else args.ablation_numerics.split(",")
                for record in build_records(seed, args.work, recordings, data, case, numerics):
                    fh.write(json.dumps(record, sort_keys=True) + "\n")
                fh.flush()
    records = [json.loads(line) for line in args.cache.read_text().splitlines()]
    records = [r for r in records if r["seed"] < 0 or lo <= r["seed"] < hi]
    records = with_current_terms(records, args.work, recordings, data)
    tables, margins, errors = {}, {}, {}
    for target in TARGETS:
        mine = [r for r in records if r["target"] == target]
        if not mine:
            continue
        tables[target] = fit(mine)
        worst = float(np.abs(held_out_errors(mine)).max())
        errors[target] = [int(math.ceil(worst)), len(mine)]
        margins[target] = int(math.ceil(worst * 1.5 / 64.0) * 64)
        print(f"{target}: {len(mine)} images, held-out max |estimate - linked| = {worst:.0f} "
              f"bytes; margin {margins[target]}")
    write_table(tables, margins, errors, args.write)
    print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
