"""The whole bundle is covered by its hash: an edited model.json is refused by every command; a
format-1 bundle still loads, with one warning line saying it is unprotected."""

import json

import numpy as np
import pytest


@pytest.fixture
def bundle(tmp_path, invoke):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 5))
    y = X[:, 1] + 2 * X[:, 3] + 0.1 * rng.normal(size=50)
    lines = ["a,b,c,d,e,y"] + [",".join(f"{v:.6f}" for v in (*x, t)) for x, t in zip(X, y)]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "B"
    result = invoke(["train", str(tmp_path / "t.csv"), "--target", "y", "--budget", "3",
                     "--lam", "1", "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


def edit(bundle, change):
    meta = json.loads((bundle / "model.json").read_text())
    change(meta)
    (bundle / "model.json").write_text(json.dumps(meta, indent=2, sort_keys=True))
    return meta


@pytest.mark.parametrize("argv", [["info", "{b}"], ["export", "c-header", "{b}", "-o", "{o}"],
                                  ["export", "onnx", "{b}", "-o", "{o}"]])
def test_reordered_selection_is_refused(invoke, bundle, tmp_path, argv):
    def reverse(meta):
        meta["selected"].reverse()
        meta["selected_index"].reverse()

    edit(bundle, reverse)
    out = tmp_path / "model.out"
    result = invoke([a.format(b=bundle, o=out) for a in argv])
    assert result.exit_code == 2
    assert "content_sha256" in result.output and "tampered" in result.output
    assert not out.exists()


def test_format_1_bundles_load_with_a_warning(invoke, bundle):
    def downgrade(meta):
        del meta["content_sha256"]
        meta["format_version"] = 1

    meta = edit(bundle, downgrade)
    result = invoke(["info", str(bundle)])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("Warning:")]
    assert len(warnings) == 1 and "not covered by a hash" in warnings[0]
    assert all(name in result.output for name in meta["selected"])
