"""A bundle's predictions of new data: :func:`predict` and :class:`Predictions`
(``sensorbudget predict``).

DATA is a feature table (CSV, ARFF, NPZ, or the NPZ of ``sensorbudget features``) holding the
bundle's selected feature columns by name, or, for a bundle trained from recordings, the
recordings themselves, windowed and featurised through the bundle's own extractors
(:func:`~sensorbudget.trainer.bundle.recordings.features_from_recordings`). A CSV's columns
that are neither the bundle's features nor its targets are left out without being named
again (``--ignore`` of training). When DATA holds the targets the metrics are computed
(:func:`~sensorbudget.trainer.evaluation.metrics.task_scores`) on the decisions the CSV holds
(:meth:`~sensorbudget.trainer.bundle.model.Bundle.decide`), and a line says which.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import DataError
from .text import brief, csv_cell, printable

_TARGET_KEYS = ("targets", "labels", "xml", "targets_last")


@dataclass
class Predictions:
    """Predictions of ``n`` rows or windows.

    Attributes
    ----------
    ids : dict {name: array (n,)}, ``row``, or ``recording`` and ``window_start``
    columns : dict {name: array (n,)}: regression one per target; multi-label the 0/1
        decision per label, ``score:`` and (Platt) ``p:`` columns; multi-class ``class`` and
        ``score:`` columns
    lines : list of str, what was predicted and the metrics (each says what it measures)
    """

    ids: dict
    columns: dict
    lines: list = field(default_factory=list)
    missing: str = ""           # the report of the rows dropped for missing values

    def __repr__(self) -> str:
        rows = len(next(iter(self.ids.values()))) if self.ids else 0
        return brief("Predictions", rows=rows, columns=list(self.columns))

    def to_csv(self) -> str:
        """The predictions as CSV text (header row; floats written exactly, repr). Text cells
        have their control characters escaped and, when they start like a formula, a leading
        apostrophe (:func:`~sensorbudget.trainer.text.csv_cell`)."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        every = {**self.ids, **self.columns}
        writer.writerow([_cell(str(name)) for name in every])
        for row in zip(*every.values()):
            writer.writerow([_cell(v) for v in row])
        return buf.getvalue()

    def save(self, path) -> Path:
        """Write the CSV (all or nothing); returns the path."""
        from .bundle.files import write_atomically

        write_atomically(Path(path), self.to_csv().encode())
        return Path(path)

    @classmethod
    def load(cls, path) -> "Predictions":
        """The columns of a predictions CSV (numbers as float64, text as str)."""
        try:
            with open(path, newline="", encoding="utf-8") as fh:
                rows = list(csv.reader(fh))
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise DataError(f"{str(path)!r} is not a readable predictions CSV: {exc}") from None
        if not rows:
            raise DataError(f"{str(path)!r} is empty")
        columns = {}
        for j, name in enumerate(rows[0]):
            cells = [r[j] for r in rows[1:]]
            try:
                columns[name] = np.array([float(c) for c in cells])
            except ValueError:
                columns[name] = np.array(cells, dtype=str)
        ids = {k: columns.pop(k) for k in ("row", "recording", "window_start") if k in columns}
        return cls(ids=ids, columns=columns)


def _cell(v) -> str:
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return csv_cell(printable(v.item() if isinstance(v, np.generic) else v))


def predict(bundle, data, *, stream_format=None, max_drop_fraction=0.5,
            **options) -> Predictions:
    """Predict ``data`` (a path, or a loaded Dataset) with ``bundle`` (a Bundle or its
    folder): ``sensorbudget predict``. ``options``: a table's ``targets``, ``labels``, ``xml``, ``targets_last``,
    ``sep``, ``decimal``, ``ignore``, ``na_value``, ``drop_missing``; recordings'
    ``stream_format`` or ``time_column=``, ``time_unit=``, ...."""
    from .bundle.model import Bundle
    from .dataset import _stream_format

    from .dataset import Dataset, check_path

    if not isinstance(bundle, Bundle):
        check_path(bundle, "bundle", "a Bundle")
        bundle = Bundle.load(bundle)
    if isinstance(data, Dataset):
        return _predict_dataset(bundle, data)
    check_path(data, "data", "a Dataset")
    data = Path(data)
    stream_format = _stream_format(stream_format, options)
    if is_recordings(data, bundle):
        from .bundle.recordings import features_from_recordings

        feats = features_from_recordings(bundle, data, stream_format)
        Xs = feats.X.astype(np.float64)
        Y = bundle_targets(feats.Y, feats.target_names, bundle.meta)   # as a features file's
        ids = {"recording": np.asarray(feats.recording_names)[feats.groups],
               "window_start": feats.window_start}
        lines = [f"predicted {len(Xs)} window(s) of {len(feats.recording_names)} "
                 f"recording(s) with {len(bundle.selected)} selected feature(s)"]
        missing_report = ""
    else:
        options = {k: v for k, v in options.items() if v not in (None, False, (), [])}
        if "drop_missing" in options:
            options["drop_missing"] = max_drop_fraction
        for key, kind in (("targets", list), ("ignore", tuple)):
            if key in options:
                options[key] = kind(options[key])
        Xs, Y, ids, missing_report = selected_table(data, bundle, options)
        lines = [f"predicted {len(Xs)} row(s) with {len(bundle.selected)} selected feature(s)"]
    lines += (metric_lines(bundle, Xs, Y, data_kind(bundle, data)) if Y is not None
              else ["(DATA holds no targets: no metrics)"])
    return Predictions(ids=ids, columns=prediction_columns(bundle, Xs), lines=lines,
                       missing=missing_report)


def _predict_dataset(bundle, data) -> Predictions:
    """Predictions of a loaded Dataset (its columns by name; metrics when it holds the
    bundle's targets)."""
    missing = [f for f in bundle.selected if f not in data.feature_names]
    if missing:
        raise DataError(f"the data have no column {missing[0]!r}, a feature the bundle needs "
                        f"({len(bundle.selected)} selected features)")
    Xs = np.asarray(data.X, dtype=np.float64)[:, [data.feature_names.index(f)
                                                  for f in bundle.selected]]
    fs = data.feature_set
    ids = ({"row": np.arange(len(Xs))} if fs is None else
           {"recording": np.asarray(fs.recording_names)[fs.groups],
            "window_start": fs.window_start})
    Y = bundle_targets(data.Y, data.target_names, bundle.meta)
    if Y is None and data.class_values is not None and bundle.task == "multiclass":
        Y = bundle_targets(data.class_values[:, None], [data.class_column], bundle.meta)
    lines = [f"predicted {len(Xs)} {'row' if fs is None else 'window'}(s) with "
             f"{len(bundle.selected)} selected feature(s)"]
    lines += (metric_lines(bundle, Xs, Y) if Y is not None
              else ["(the data hold no targets: no metrics)"])
    return Predictions(ids=ids, columns=prediction_columns(bundle, Xs), lines=lines)


def selected_table(data: Path, bundle, options: dict) -> tuple:
    """(selected features n x k, targets or None, row ids, missing-rows report text) of a
    table."""
    from .data import load_table
    from .sensing.feature_set import FeatureSet, is_feature_file

    meta, report = bundle.meta, ""
    if data.suffix.lower() == ".npz" and is_feature_file(data):
        fs = FeatureSet.load(data)
        names, X, tnames, Y = list(fs.feature_names), fs.X, list(fs.target_names), fs.Y
        ids = {"recording": np.asarray(fs.recording_names)[fs.groups],
               "window_start": fs.window_start}
    else:
        given = any(options.get(k) for k in _TARGET_KEYS)
        rest = {k: v for k, v in options.items() if k not in _TARGET_KEYS}
        wanted = [meta["class_column"]] if meta.get("class_column") else list(meta["targets"])
        if "ignore" not in rest and not given:
            rest["ignore"] = unneeded_columns(data, rest.get("sep"), meta, wanted)
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
            report = table.missing.describe()
        ids = {"row": np.arange(len(X))}
        if table.class_target is not None and meta["task"] == "multiclass":   # text classes
            Y, tnames = table.class_target[1][:, None], [table.class_target[0]]
    missing = [f for f in meta["selected"] if f not in names]
    if missing:
        raise DataError(f"{data.name} has no column {missing[0]!r}, a feature the bundle needs "
                        f"({len(meta['selected'])} selected features)")
    Xs = np.asarray(X, dtype=np.float64)[:, [names.index(f) for f in meta["selected"]]]
    return Xs, bundle_targets(Y, tnames, meta), ids, report


def unneeded_columns(data: Path, sep, meta: dict, wanted: list) -> tuple:
    """A CSV's header columns that are neither the bundle's candidate features nor ``wanted``
    (its targets): what training left out with ``--ignore`` need not be named again. Other
    formats: ()."""
    if data.suffix.lower() not in (".csv", ".txt"):
        return ()
    try:
        with open(data, newline="", encoding="utf-8-sig", errors="replace") as fh:
            header = next(csv.reader(fh, delimiter=sep or ","), [])
    except (OSError, csv.Error):
        return ()
    keep = set(meta["features"]) | set(wanted)
    return tuple(c.strip() for c in header if c.strip() and c.strip() not in keep)


def bundle_targets(Y, names, meta):
    """The bundle's targets from a table's target columns (by name), or None; a multi-class
    bundle trained on one column of class values reads that column as one-hot rows."""
    column = meta.get("class_column")
    if Y is not None and meta["task"] == "multiclass" and column in names:
        from .data import MISSING_TOKENS
        from .evaluation.metrics import one_hot_of

        values = np.asarray(Y)[:, names.index(column)]
        if values.dtype.kind in "US":                       # text class names
            values = np.array([np.nan if v in MISSING_TOKENS else v for v in values.tolist()],
                              dtype=object)
        try:
            return one_hot_of(values, meta["classes"])
        except ValueError as exc:
            raise DataError(f"column {column!r}: {exc}") from None
    if Y is None or not all(t in names for t in meta["targets"]):
        return None
    return np.asarray(Y, dtype=np.float64)[:, [names.index(t) for t in meta["targets"]]]


def prediction_columns(bundle, Xs) -> dict:
    """{column name: values} of the predictions of the selected features ``Xs``: the scores
    and :meth:`~sensorbudget.trainer.bundle.model.Bundle.decide`'s decisions."""
    meta = bundle.meta
    scores = bundle.selected_scores(Xs)
    if bundle.task == "regression":
        return dict(zip(meta["targets"], scores.T))
    decisions = bundle.decide(scores)
    if bundle.task == "multiclass":
        classes = bundle.classes
        out = {"class": np.asarray(classes, dtype=object)[decisions]}
        return {**out, **{f"score:{c}": scores[:, j] for j, c in enumerate(classes)}}
    out = {name: decisions[:, j] for j, name in enumerate(meta["targets"])}
    out.update({f"score:{name}": scores[:, j] for j, name in enumerate(meta["targets"])})
    proba = bundle.predict_proba(Xs, selected=True)
    if proba is not None:
        out.update({f"p:{name}": proba[:, j] for j, name in enumerate(meta["targets"])})
    return out


def data_kind(bundle, data: Path) -> str:
    """What metrics on ``data`` measure: in-sample when it holds the bundle's training data
    (the same bytes: :func:`~sensorbudget.trainer.provenance.same_data`), else data the bundle
    did not train on, or, when the bundle cannot tell, in-sample only if they are its
    training data."""
    from .provenance import same_data

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
    says which decisions they score (:func:`~sensorbudget.trainer.bundle.decision.describe`)."""
    from .bundle.decision import describe
    from .doc_files import cite
    from .evaluation.metrics import LABELS, confusion_lines, task_scores

    ok = ~np.isnan(Y).any(axis=1)
    lines = [f"metrics on {int(ok.sum())} row(s)"
             + (f" ({int((~ok).sum())} with a missing target left out)" if (~ok).any() else "")
             + (f"; {kind}" if kind else "") + f" (definitions: {cite('metrics.md')}):"]
    if not ok.any():
        return lines[:1]
    Xs, Y = Xs[ok], Y[ok]
    scores = bundle.selected_scores(Xs)
    values = task_scores(bundle.task, Y, scores, bundle.decide(scores), bundle.meta["targets"])
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
        lines += [f"    {line}" for line in confusion_lines(confusion, bundle.classes)]
    return lines


def is_recordings(data: Path, bundle) -> bool:
    """DATA are recordings when the bundle was trained from recordings and DATA is not a
    feature table (a folder, a .ts file, or a stream CSV/NPZ without the candidate columns)."""
    if not bundle.meta.get("window"):
        return False
    if data.is_dir() or data.suffix.lower() in (".ts", ".txt"):
        return True
    from .sensing.feature_set import is_feature_file

    if data.suffix.lower() == ".npz":
        return not is_feature_file(data)
    if data.suffix.lower() == ".csv":
        with open(data, encoding="utf-8-sig", errors="replace") as fh:
            header = fh.readline()
        return not all(f in header for f in bundle.meta["selected"])
    return False
