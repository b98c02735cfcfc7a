"""``sensorbudget predict BUNDLE DATA [-o predictions.csv]``: score new data with a bundle.

DATA is a feature table (CSV, ARFF, NPZ, or the NPZ of ``sensorbudget features``) holding the
bundle's selected feature columns by name, or -- for a bundle trained from recordings -- the
recordings themselves, windowed and featurised through the bundle's own extractors
(:func:`sensorbudget.trainer.bundle.recordings.features_from_recordings`). When DATA holds the targets
(columns named as the bundle's targets, or given with --target/--labels/--xml/--targets-last),
the metrics are printed (:func:`sensorbudget.trainer.evaluation.metrics.task_scores`): regression MSE, MAE,
R² per target and their mean; multi-label the micro/macro-F1, 0/1 loss, Hamming loss and
accuracy of the decisions the CSV holds (the bundle's calibrated thresholds) and the ranking
measures of the scores; multi-class (and binary) accuracy, balanced accuracy, macro-F1 and the
confusion matrix of the decided classes. A line says which decisions are scored.
"""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np

from ._errors import CliError, handle_errors
from .cli_features import window_options
from .cli_tables import table_options
from .text_out import csv_cell, printable


def _table(data: Path, bundle, options: dict):
    """(selected features n x k, targets or None, row ids {name: column}) of a table."""
    from sensorbudget.trainer.data import load_table
    from sensorbudget.trainer.errors import DataError
    from sensorbudget.trainer.sensing.feature_set import FeatureSet, is_feature_file

    meta = bundle.meta
    if data.suffix.lower() == ".npz" and is_feature_file(data):
        fs = FeatureSet.load(data)
        names, X, tnames, Y = list(fs.feature_names), fs.X, list(fs.target_names), fs.Y
        ids = {"recording": np.asarray(fs.recording_names)[fs.groups],
               "window_start": fs.window_start}
    else:
        given = any(options.get(k) for k in ("targets", "labels", "xml", "targets_last"))
        rest = {k: v for k, v in options.items()
                if k not in ("targets", "labels", "xml", "targets_last")}
        wanted = ([meta["class_column"]] if meta.get("class_column")
                  else list(meta["targets"]))
        try:
            table = load_table(data, **(options if given else dict(rest, targets=wanted)))
            names, X, tnames, Y = table.feature_names, table.X, table.target_names, table.Y
        except DataError as exc:
            if given or "unknown target" not in str(exc):
                raise
            # no target columns: every column is a candidate feature (the last one read as a
            # target column only to reach the loader's parsing and missing-value rules)
            table = load_table(data, **dict(rest, targets_last=1, keep_missing_targets=True))
            names = table.feature_names + table.target_names
            X, tnames, Y = np.column_stack([table.X, table.Y]), [], None
        if table.dropped_rows:
            click.echo(table.missing.describe(), err=True)
        ids = {"row": np.arange(len(X))}
        if table.class_target is not None and meta["task"] == "multiclass":   # text classes
            Y, tnames = table.class_target[1][:, None], [table.class_target[0]]
    missing = [f for f in meta["selected"] if f not in names]
    if missing:
        raise CliError(f"{data.name} has no column {missing[0]!r}, a feature the bundle needs "
                       f"({len(meta['selected'])} selected features)")
    Xs = np.asarray(X, dtype=np.float64)[:, [names.index(f) for f in meta["selected"]]]
    return Xs, _targets(Y, tnames, meta), ids


def _targets(Y, names, meta):
    """The bundle's targets from a table's target columns (by name), or None; a multi-class
    bundle trained on one column of class values reads that column as one-hot rows."""
    column = meta.get("class_column")
    if Y is not None and meta["task"] == "multiclass" and column in names:
        from sensorbudget.trainer.data import MISSING_TOKENS
        from sensorbudget.trainer.evaluation.metrics import one_hot_of

        values = np.asarray(Y)[:, names.index(column)]
        if values.dtype.kind in "US":                       # text class names
            values = np.array([np.nan if v in MISSING_TOKENS else v for v in values.tolist()],
                              dtype=object)
        try:
            return one_hot_of(values, meta["classes"])
        except ValueError as exc:
            raise CliError(f"column {column!r}: {exc}") from None
    if Y is None or not all(t in names for t in meta["targets"]):
        return None
    return np.asarray(Y, dtype=np.float64)[:, [names.index(t) for t in meta["targets"]]]


def prediction_columns(bundle, Xs) -> dict:
    """{column name: values} of the predictions (see :func:`predict_command`)."""
    meta = bundle.meta
    scores = bundle.selected_scores(Xs)
    if bundle.task == "regression":
        return dict(zip(meta["targets"], scores.T))
    if bundle.task == "multiclass":
        classes = _classes(meta)
        out = {"class": np.asarray(classes, dtype=object)[bundle.predict(Xs, selected=True)]}
        return {**out, **{f"score:{c}": scores[:, j] for j, c in enumerate(classes)}}
    decisions = bundle.predict(Xs, selected=True)
    out = {name: decisions[:, j] for j, name in enumerate(meta["targets"])}
    out.update({f"score:{name}": scores[:, j] for j, name in enumerate(meta["targets"])})
    proba = bundle.predict_proba(Xs, selected=True)
    if proba is not None:
        out.update({f"p:{name}": proba[:, j] for j, name in enumerate(meta["targets"])})
    return out


def _cell(v) -> str:
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return csv_cell(printable(v.item() if isinstance(v, np.generic) else v))


def csv_text(ids: dict, columns: dict) -> str:
    """The predictions as CSV text (header row; floats written exactly, repr). Names and other
    text cells have their control characters escaped and, when they start like a formula
    (``=``, ``+``, ``-``, ``@``), a leading apostrophe (:func:`sensorbudget.text_out.csv_cell`)."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    allc = {**ids, **columns}
    writer.writerow([_cell(str(name)) for name in allc])
    for row in zip(*allc.values()):
        writer.writerow([_cell(v) for v in row])
    return buf.getvalue()


def data_kind(bundle, data: Path) -> str:
    """What metrics on ``data`` measure: in-sample when it holds the bundle's training data
    (the same bytes: :func:`sensorbudget.trainer.provenance.same_data`), else data the bundle did not
    train on, or, when the bundle cannot tell, in-sample only if they are its training data."""
    from sensorbudget.trainer.provenance import same_data

    same = same_data(bundle.meta.get("data"), data)
    if same:
        return "in-sample: DATA is the bundle's training data, so these are optimistic"
    if same is None:
        return ("in-sample if DATA is (or holds) the bundle's training data, optimistic then; "
                "a test split otherwise (the bundle records no digest to tell)")
    return ("DATA is not the bundle's training file: a test split when none of its rows "
            "were trained on")


def metric_lines(bundle, Xs, Y, kind: str = "") -> list:
    """The metrics of the predictions against the targets Y (rows with a missing target are
    left out, and counted); ``kind`` (:func:`data_kind`) says what they measure, and a line
    says which decisions they score (:func:`sensorbudget.trainer.bundle.decision.describe`)."""
    from sensorbudget.trainer.bundle.decision import describe
    from sensorbudget.trainer.evaluation.metrics import LABELS, confusion_lines, task_scores

    ok = ~np.isnan(Y).any(axis=1)
    lines = [f"metrics on {int(ok.sum())} row(s)"
             + (f" ({int((~ok).sum())} with a missing target left out)" if (~ok).any() else "")
             + (f"; {kind}" if kind else "") + " (definitions: docs/metrics.md):"]
    if not ok.any():
        return lines[:1]
    Xs, Y = Xs[ok], Y[ok]
    scores = bundle.selected_scores(Xs)
    values = task_scores(bundle.task, Y, scores, bundle.predict(Xs, selected=True),
                         bundle.meta["targets"])
    confusion = values.pop("confusion", None)
    lines.append(f"  {describe(bundle.meta)}")
    labels = {}
    for key in values:
        base, _, rest = key.partition("[")
        labels[key] = LABELS.get(base, base) + (f"[{rest}" if rest else "")
    width = max(map(len, labels.values()))
    lines += [f"  {labels[key]:<{width}}  {value:.6g}" for key, value in values.items()]
    if confusion is not None:
        lines.append("  confusion matrix (rows: true class, columns: decided class):")
        lines += [f"    {line}" for line in confusion_lines(confusion, _classes(bundle.meta))]
    return lines


def _classes(meta) -> list:
    return list(meta.get("classes") or meta["targets"])


@click.command("predict", short_help="Score a feature table or recordings with a bundle.")
@click.argument("bundle_dir", metavar="BUNDLE", type=click.Path(exists=True, file_okay=False,
                                                                path_type=Path))
@click.argument("data", type=click.Path(exists=True, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="CSV of the predictions to write [default: print it].")
@click.option("--target", "targets", multiple=True,
              help="Target column name (repeatable) [default: the bundle's targets if present].")
@click.option("--labels", type=int, default=None, help="The last L columns are 0/1 labels.")
@click.option("--xml", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Mulan XML file naming the label columns.")
@click.option("--targets-last", type=click.IntRange(min=1), default=None, metavar="N",
              help="The last N columns are the targets.")
@table_options
@window_options
@handle_errors
def predict_command(bundle_dir, data, output, targets, labels, xml, targets_last, sep, decimal,
                    ignore, na_value, drop_missing, window, hop, compute_target, stream_format,
                    max_drop_fraction=0.5):
    """Predict DATA with BUNDLE: one CSV row per table row (``row``) or per window of the
    recordings (``recording``, ``window_start``), then the predictions: regression one column
    per target; multi-label the 0/1 decision per label (the bundle's thresholds), ``score:``
    and, with Platt coefficients, ``p:`` columns; multi-class ``class`` and ``score:``
    columns. Metrics are printed when DATA holds the targets."""
    from sensorbudget.trainer.bundle import write_atomically
    from sensorbudget.trainer.bundle.model import load_bundle

    if window is not None or hop is not None or compute_target is not None:
        raise CliError("--window/--hop/--compute-target do not apply: the bundle fixes the "
                       "window, hop and extractors")
    bundle = load_bundle(bundle_dir)
    if _is_recordings(data, bundle):
        from sensorbudget.trainer.bundle.recordings import features_from_recordings

        feats = features_from_recordings(bundle, data, stream_format)
        Xs, Y = feats.X.astype(np.float64), feats.Y
        ids = {"recording": np.asarray(feats.recording_names)[feats.groups],
               "window_start": feats.window_start}
        source = f"{len(Xs)} window(s) of {len(feats.recording_names)} recording(s)"
    else:
        options = dict(targets=list(targets) or None, labels=labels, xml=xml, sep=sep,
                       decimal=decimal, ignore=tuple(ignore),
                       drop_missing=drop_missing and max_drop_fraction,
                       na_value=na_value, targets_last=targets_last)
        Xs, Y, ids = _table(data, bundle, options)
        source = f"{len(Xs)} row(s)"
    text = csv_text(ids, prediction_columns(bundle, Xs))
    info = [f"predicted {source} with {len(bundle.meta['selected'])} selected feature(s)"]
    info += (metric_lines(bundle, Xs, Y, data_kind(bundle, data)) if Y is not None
             else ["(DATA holds no targets: no metrics)"])
    if output is None:
        click.echo(text, nl=False)
        for line in info:
            click.echo(printable(line), err=True)
        return
    write_atomically(output, text.encode())
    for line in info + [f"wrote {output}"]:
        click.echo(printable(line))


def _is_recordings(data: Path, bundle) -> bool:
    """DATA are recordings when the bundle was trained from recordings and DATA is not a
    feature table (a folder, a .ts file, or a stream CSV/NPZ without the candidate columns)."""
    if not bundle.meta.get("window"):
        return False
    if data.is_dir() or data.suffix.lower() in (".ts", ".txt"):
        return True
    from sensorbudget.trainer.sensing.feature_set import is_feature_file

    if data.suffix.lower() == ".npz":
        return not is_feature_file(data)
    if data.suffix.lower() == ".csv":
        with open(data, encoding="utf-8-sig", errors="replace") as fh:
            header = fh.readline()
        return not all(f in header for f in bundle.meta["selected"])
    return False
