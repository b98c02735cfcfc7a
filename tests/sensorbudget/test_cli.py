"""The train and info commands: happy path and every bad input (exit 2, one line, no bundle)."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from sensorbudget.cli import main
from tests.paths import REPO
from sensorbudget.trainer import GreedyRLS
from sensorbudget.trainer.bundle.model import load_bundle

AIR = REPO / "data" / "air_quality_uci" / "AirQualityUCI.csv"
AIR_ARGS = ["--sep", ";", "--decimal", ",", "--target", "CO(GT)", "--target", "NO2(GT)",
            "--ignore", "Date", "--ignore", "Time", "--ignore", "NMHC(GT)", "--ignore", "NOx(GT)",
            "--ignore", "C6H6(GT)", "--na-value", "-200", "--drop-missing"]


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 5))
    y = X[:, 1] - 2 * X[:, 3] + 0.1 * rng.normal(size=30)
    lines = ["a,b,c,d,e,y"] + [",".join(f"{v:.6f}" for v in row) for row in np.column_stack([X, y])]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_train_then_info(invoke, tmp_path):
    out = tmp_path / "bundle"
    result = invoke(["train", str(AIR), *AIR_ARGS, "--budget", "3", "--lam", "1", "-o", str(out)],
                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    b = load_bundle(out)
    assert b.meta["targets"] == ["CO(GT)", "NO2(GT)"] and len(b.meta["selected"]) == 3
    assert b.meta["data"]["file"] == "AirQualityUCI.csv"
    # Same picks as the estimator on the same table (independent path through the library).
    from sensorbudget.trainer.data import load_table
    t = load_table(AIR, sep=";", decimal=",", targets=["CO(GT)", "NO2(GT)"],
                   ignore=["Date", "Time", "NMHC(GT)", "NOx(GT)", "C6H6(GT)"], na_value=-200,
                   drop_missing=True)
    est = GreedyRLS(budget=3, lam=1.0).fit(t.X, t.Y)
    assert b.meta["selected_index"] == est.selected_.tolist()
    info = invoke(["info", str(out)], catch_exceptions=False)
    assert info.exit_code == 0
    for name in b.meta["selected"]:
        assert name in info.output
    assert "LOO MSE" in info.output


def test_multilabel_via_labels(invoke, tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 4))
    L = (X[:, :2] > 0).astype(int)
    text = "@relation r\n" + "".join(f"@attribute f{i} numeric\n" for i in range(4)) + \
        "@attribute l0 {0,1}\n@attribute l1 {0,1}\n@data\n" + \
        "".join(",".join([f"{v:.5f}" for v in x] + [str(v) for v in l]) + "\n" for x, l in zip(X, L))
    (tmp_path / "m.arff").write_text(text)
    result = invoke(["train", str(tmp_path / "m.arff"), "--labels", "2", "--budget", "2",
                     "-o", str(tmp_path / "b")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    b = load_bundle(tmp_path / "b")
    assert b.task == "multilabel" and sorted(b.meta["selected_index"]) == [0, 1]
    assert (b.predict(X) == L).mean() > 0.9


def bad_cases(tmp_path, table):
    bundle = tmp_path / "good"
    CliRunner().invoke(main, ["train", str(table), "--target", "y", "--budget", "2", "--lam", "1",
                              "-o", str(bundle)], catch_exceptions=False)
    tampered = tmp_path / "tampered"
    tampered.mkdir()
    for f in ("model.json", "weights.npz"):
        (tampered / f).write_bytes((bundle / f).read_bytes())
    meta = json.loads((tampered / "model.json").read_text())
    meta["format_version"] = 99
    (tampered / "model.json").write_text(json.dumps(meta))
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "text.csv").write_text("a,y\n1,2\nx,3\n")
    (tmp_path / "nan.csv").write_text("a,y\n1,2\nnan,3\n4,5\n")
    (tmp_path / "one.csv").write_text("a,y\n1,2\n")
    (tmp_path / "onelabel.arff").write_text("@relation r\n@attribute a numeric\n@attribute b numeric"
                                            "\n@attribute l {0,1}\n@data\n1,2,0\n3,4,0\n5,1,0\n")
    return [
        (["train", str(tmp_path / "missing.csv"), "--target", "y", "--budget", "1"], "does not exist"),
        (["train", str(tmp_path / "empty.csv"), "--target", "y", "--budget", "1"], "is empty"),
        (["train", str(tmp_path / "text.csv"), "--target", "y", "--budget", "1"], "'x' is not a number"),
        (["train", str(table), "--target", "zz", "--budget", "1"], "unknown target 'zz'"),
        (["train", str(tmp_path / "nan.csv"), "--target", "y", "--budget", "1"], "--drop-missing"),
        (["train", str(table), "--target", "y", "--budget", "0"], "--budget=0"),
        (["train", str(table), "--target", "y", "--budget", "6"], "budget=6 is outside 1..5"),
        (["train", str(tmp_path / "one.csv"), "--target", "y", "--budget", "1"], "at least 2"),
        (["train", str(tmp_path / "onelabel.arff"), "--labels", "1", "--budget", "1"], "only one class"),
        (["info", str(tampered)], "format_version=99 is not supported"),
        (["info", str(tmp_path)], "is not a bundle directory"),
    ]


def test_bad_inputs_exit_2_with_one_line(tmp_path, table):
    for args, needle in bad_cases(tmp_path, table):
        out = tmp_path / "out"
        argv = args + (["-o", str(out)] if args[0] == "train" else [])
        result = CliRunner().invoke(main, argv)
        assert result.exit_code == 2, (args, result.output)
        assert needle in result.output, (args, result.output)
        assert "Traceback" not in result.output
        assert len([ln for ln in result.output.splitlines() if ln.startswith("Error:")]) == 1
        assert not out.exists(), args


def test_help_everywhere(invoke):
    for args in (["--help"], ["train", "--help"], ["info", "--help"]):
        result = invoke(args)
        assert result.exit_code == 0 and "Usage:" in result.output


def test_train_from_recordings_fills_the_structure(invoke, tmp_path):
    out = tmp_path / "rec"
    result = invoke(["train", str(AIR), "--sensors", str(REPO / "examples" / "air_quality.sensors.toml"),
                     "--budget", "4", "--lam", "1", "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    meta = load_bundle(out).meta
    by_name = {e["name"]: e for e in meta["extractors"]}
    assert meta["required_extractors"] == [by_name[e]["name"] for e in meta["required_extractors"]]
    needed = {s for e in meta["required_extractors"] for s in by_name[e]["sensors"]}
    assert set(meta["required_sensors"]) == needed
    assert {s["name"] for s in meta["sensors"]} >= needed
    assert all(by_name[e]["params"]["window"] == meta["window"] for e in meta["required_extractors"])


def test_train_multiclass_from_one_hot_feature_table(invoke, tmp_path):
    from sensorbudget.trainer import GreedyRLSClassifier
    from sensorbudget.trainer.sensing.feature_set import load_feature_set

    fs = load_feature_set(AIR, REPO / "examples" / "air_quality.sensors.toml")
    rng = np.random.default_rng(0)
    cls = rng.integers(0, 3, size=len(fs.X))
    X = np.asarray(fs.X, dtype=np.float64)
    X[:, 0] += cls * 5.0
    np.savez(tmp_path / "t.npz", X=X, Y=np.eye(3)[cls],
             feature_names=np.array(fs.feature_names), target_names=np.array(["c", "a", "b"]),
             task=np.array("multiclass"))
    result = invoke(["train", str(tmp_path / "t.npz"), "--budget", "2", "--lam", "1",
                     "-o", str(tmp_path / "b")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    b = load_bundle(tmp_path / "b")
    assert b.meta["targets"] == b.meta["classes"] == ["a", "b", "c"]
    est = GreedyRLSClassifier(budget=2, lam=1.0).fit(X, np.array(["c", "a", "b"])[cls])
    np.testing.assert_array_equal(np.array(b.meta["classes"])[b.predict(X)], est.predict(X))


def test_compress_labels_full_energy_gives_the_same_bundle_picks(invoke, tmp_path):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 6))
    L = np.column_stack([X[:, 0] > 0, X[:, 1] + X[:, 0] > 0, X[:, 2] > 0.3]).astype(int)
    lines = [",".join([f"f{i}" for i in range(6)] + ["a", "b", "c"])]
    lines += [",".join([f"{v:.6f}" for v in x] + [str(v) for v in lab]) for x, lab in zip(X, L)]
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    base = ["train", str(tmp_path / "m.csv"), "--labels", "3", "--task", "multilabel",
            "--budget", "3", "--lam", "0.5"]
    plain = invoke(base + ["-o", str(tmp_path / "p")], catch_exceptions=False)
    comp = invoke(base + ["--compress-labels", "1", "-o", str(tmp_path / "c")],
                  catch_exceptions=False)
    assert plain.exit_code == comp.exit_code == 0, comp.output
    a, b = load_bundle(tmp_path / "p"), load_bundle(tmp_path / "c")
    assert a.meta["selected_index"] == b.meta["selected_index"]
    np.testing.assert_allclose(a.W, b.W, rtol=1e-10, atol=1e-12)
    assert b.meta["label_compression"]["rank"] <= 3


@pytest.fixture
def labels_table(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(70, 6)) * 2
    Y = (X[:, :3] @ rng.normal(size=(3, 3)) + 2 * rng.normal(size=(70, 3)) > 1).astype(int)
    lines = [",".join([f"f{i}" for i in range(6)] + ["p", "q", "r"])]
    lines += [",".join([f"{v:.6f}" for v in x] + [str(v) for v in t]) for x, t in zip(X, Y)]
    path = tmp_path / "ml.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, np.round(X, 6), Y


def _explicit_loo_scores(X, T, features, lam):
    """LOO predictions by refitting ridge (intercept inside the fold, all-row scaling)."""
    Xs = X[:, features] / X[:, features].std(0)
    out = np.empty_like(T)
    for i in range(len(X)):
        keep = np.arange(len(X)) != i
        xm, tm = Xs[keep].mean(0), T[keep].mean(0)
        W = np.linalg.solve((Xs[keep] - xm).T @ (Xs[keep] - xm) + lam * np.eye(len(features)),
                            (Xs[keep] - xm).T @ (T[keep] - tm))
        out[i] = (Xs[i] - xm) @ W + tm
    return out


@pytest.mark.parametrize("rule", [None, "f1", "precision:0.8", "zero"])
def test_train_thresholds_equal_a_brute_force_search_on_held_out_scores(tmp_path, labels_table,
                                                                        rule):
    from sklearn.metrics import f1_score, precision_score

    path, X, Y = labels_table
    args = ["train", str(path), "--labels", "3", "--budget", "3", "--lam", "2", "-o",
            str(tmp_path / "b")] + ([] if rule is None else ["--threshold", rule])
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    meta = load_bundle(tmp_path / "b").meta
    entry = meta["decision"]
    assert entry["rule"] == (rule or "f1") and entry["heldout"] == "loo"
    assert "label thresholds" in result.output
    S = _explicit_loo_scores(X, 2.0 * Y - 1, meta["selected_index"], 2.0)
    for j in range(3):
        s = np.unique(S[:, j])
        cands = np.concatenate([[s[-1] + 1], 0.5 * (s[1:] + s[:-1])[::-1], [s[0] - 1]])
        if rule == "zero":
            expected = 0.0
        elif rule == "precision:0.8":
            ok = [c for c in cands if (S[:, j] > c).any()
                  and precision_score(Y[:, j], S[:, j] > c) >= 0.8]
            expected = min(ok)
        else:
            f1 = [f1_score(Y[:, j], S[:, j] > c, zero_division=0.0) for c in cands]
            expected = cands[int(np.argmax(f1))]
        assert entry["thresholds"][j] == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("args,needle", [
    (["--labels", "3", "--threshold", "precision:2"], "0 < P <= 1"),
    (["--labels", "3", "--threshold", "best"], "must be f1, zero or precision:P"),
    (["--target", "p", "--task", "regression", "--threshold", "f1"],
     "apply to multi-label targets, not task regression"),
])
def test_bad_threshold_options(tmp_path, labels_table, args, needle):
    path, _, _ = labels_table
    result = CliRunner().invoke(main, ["train", str(path), "--budget", "2", *args, "-o",
                                       str(tmp_path / "b")])
    assert result.exit_code == 2 and needle in result.output
    assert not (tmp_path / "b").exists()


def test_train_warns_once_about_overlapping_windows(tmp_path):
    from tests.fixtures import write_sensors_toml, write_stream

    stream = write_stream(tmp_path / "s.csv", n=200)
    toml = write_sensors_toml(tmp_path / "sensors.toml")          # window 8, hop 4
    result = CliRunner().invoke(main, ["train", str(stream), "--sensors", str(toml), "--budget",
                                       "2", "-o", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert result.output.count("windows overlap (window=8, hop=4 samples)") == 1
    result = CliRunner().invoke(main, ["train", str(stream), "--sensors", str(toml), "--hop",
                                       "8", "--budget", "2", "-o", str(tmp_path / "c")])
    assert "windows overlap" not in result.output


def test_drop_missing_prints_the_fraction_and_refuses_above_max_drop_fraction(invoke, tmp_path):
    """Air Quality with NMHC(GT) as a feature: 91 % of the rows miss a value; train refuses
    (exit 2, one line, no bundle) unless --max-drop-fraction allows it, and then prints the
    same counts as the library's report."""
    from sensorbudget.trainer.data import load_table

    args = ["train", str(AIR), "--sep", ";", "--decimal", ",", "--target", "CO(GT)",
            "--ignore", "Date", "--ignore", "Time", "--na-value", "-200", "--drop-missing",
            "--budget", "2", "--lam", "1"]
    out = tmp_path / "b"
    refused = invoke(args + ["-o", str(out)])
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert "(--max-drop-fraction)" in refused.output and "NMHC(GT) 8443" in refused.output
    assert len([ln for ln in refused.output.splitlines() if ln.startswith("Error:")]) == 1
    assert not out.exists()
    table = load_table(AIR, sep=";", decimal=",", targets=["CO(GT)"], ignore=("Date", "Time"),
                       na_value=-200, drop_missing=1.0)
    ok = invoke(args + ["--max-drop-fraction", "1", "-o", str(out)], catch_exceptions=False)
    assert ok.exit_code == 0, ok.output
    assert table.missing.describe() in ok.output
    assert f"({100 * table.missing.fraction:.1f} %)" in ok.output and table.missing.fraction > 0.5


def test_train_and_info_print_f1_with_thresholds_rechosen_without_each_row(tmp_path,
                                                                          labels_table):
    """The printed F1 per label: explicit LOO refits, then for every row the F1 threshold
    chosen on the other rows by a brute-force search (sklearn's f1_score); the tuned F1 is
    printed in the same line and marked optimistic; info prints the same lines."""
    from sklearn.metrics import f1_score

    path, X, Y = labels_table
    out = tmp_path / "b"
    result = CliRunner().invoke(main, ["train", str(path), "--labels", "3", "--budget", "3",
                                       "--lam", "2", "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    meta = load_bundle(out).meta
    S = _explicit_loo_scores(X, 2.0 * Y - 1, meta["selected_index"], 2.0)
    honest, tuned = [], []
    for j in range(3):
        def best(s, y):
            u = np.unique(s)
            cands = np.concatenate([[u[-1] + 1], 0.5 * (u[1:] + u[:-1])[::-1], [u[0] - 1]])
            f1 = [f1_score(y, s > c, zero_division=0.0) for c in cands]
            return cands[int(np.argmax(f1))]
        own = [best(np.delete(S[:, j], i), np.delete(Y[:, j], i)) for i in range(len(S))]
        honest.append(f1_score(Y[:, j], S[:, j] > np.array(own)))
        tuned.append(f1_score(Y[:, j], S[:, j] > best(S[:, j], Y[:, j])))
    lines = [ln for ln in result.output.splitlines() if "re-chosen without the row" in ln]
    assert len(lines) == 3
    for line, h, t in zip(lines, honest, tuned):
        assert f"LOO F1 {h:.3f} (threshold re-chosen without the row), {t:.3f} with the " \
               f"threshold tuned on the same scores (optimistic)" in line
    mean = next(ln for ln in result.output.splitlines() if ln.startswith("mean LOO F1"))
    assert f"{np.mean(honest):.3f} with thresholds re-chosen without each row" in mean
    assert "in-sample" in mean and "nested CV" in mean
    info = CliRunner().invoke(main, ["info", str(out)], catch_exceptions=False)
    assert info.exit_code == 0 and all(line in info.output for line in lines + [mean])
    # a bundle written before rechosen_* existed: the tuned F1 alone, still marked optimistic
    from sensorbudget.cli_decisions import describe_decision

    old = {**meta, "decision": {k: v for k, v in meta["decision"].items()
                                if not k.startswith("rechosen_")}}
    text = "\n".join(describe_decision(old))
    assert "re-chosen" not in text and text.count("(optimistic)") == 4
    assert f"{np.mean(tuned):.3f} with thresholds tuned on the same scores" in text


@pytest.fixture
def scaled_targets_csv(tmp_path):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(70, 6))
    Y = np.column_stack([X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=70),
                         500 * (X[:, 2] - X[:, 3] + 0.3 * rng.normal(size=70)) + 2000])
    lines = ["a,b,c,d,e,f,small,big"] + [",".join(f"{v:.6f}" for v in row)
                                         for row in np.column_stack([X, Y])]
    path = tmp_path / "scaled.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, np.round(X, 6), np.round(Y, 6)


def test_standardize_targets_train_equals_the_estimator_and_warns_without(tmp_path,
                                                                         scaled_targets_csv,
                                                                         labels_table):
    path, X, Y = scaled_targets_csv
    args = ["train", str(path), "--target", "small", "--target", "big", "--budget", "2",
            "--lam", "1"]
    plain = CliRunner().invoke(main, args + ["-o", str(tmp_path / "p")], catch_exceptions=False)
    assert plain.exit_code == 0
    assert "Warning: target standard deviations differ" in plain.output
    assert "--standardize-targets" in plain.output
    result = CliRunner().invoke(main, args + ["--standardize-targets", "-o", str(tmp_path / "s")],
                                catch_exceptions=False)
    assert result.exit_code == 0 and "Warning" not in result.output
    assert "on standardised targets" in result.output
    est = GreedyRLS(budget=2, lam=1.0, standardize_targets=True).fit(X, Y)
    bundle = load_bundle(tmp_path / "s")
    assert bundle.meta["selected_index"] == est.selected_.tolist()
    np.testing.assert_allclose(bundle.predict(X), est.predict(X), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(bundle.meta["target_scaling"]["scale"], Y.std(0), rtol=1e-12)
    # the plain fit picked for the big target only; the standardised one serves both
    assert set(load_bundle(tmp_path / "p").meta["selected_index"]) == {2, 3}
    assert set(bundle.meta["selected_index"]) != {2, 3}
    bad = CliRunner().invoke(main, ["train", str(labels_table[0]), "--labels", "3", "--budget",
                                    "1", "--standardize-targets", "-o", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "applies to regression targets" in bad.output
