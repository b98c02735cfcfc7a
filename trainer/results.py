"""Nested cross-validation of a :class:`~sensorbudget.trainer.dataset.Dataset`:
:func:`evaluate` and its typed result :class:`Evaluation` (``sensorbudget evaluate``).

The numbers are nested CV: selection, lambda and thresholds are chosen inside each training
fold and scored on the held-out outer fold (:mod:`sensorbudget.trainer.evaluation.protocol`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import DataError, TrainerError
from .tasks import TASK_NAMES, Task, check_binary
from .text import brief

#: the ``task`` choices of evaluate (``auto``: what the data suggest)
TASKS = ("auto", *TASK_NAMES, "ranking")
#: the files :meth:`Evaluation.save` writes
RESULTS_FILE = "results.json"


@dataclass
class Evaluation:
    """The per-fold records of a nested cross-validation, and what ran.

    Attributes
    ----------
    result : EvaluationResult (records, config, measures, methods, budgets)
    title : str, the report's title
    notes : list of str, the report's notes on the setup and the folds
    chosen : list of str, what ran (budgets, methods and why: the ``evaluating`` line)
    folds_run : int, how many outer folds ran
    """

    result: object
    title: str = "Evaluation"
    notes: list = field(default_factory=list)
    chosen: list = field(default_factory=list)
    folds_run: int = 0
    missing: str = ""           # the report of the rows dropped for missing values

    def __repr__(self) -> str:
        return brief("Evaluation", title=self.title, records=len(self.records),
                     folds_run=self.folds_run)

    @property
    def records(self) -> list:
        return self.result.records

    def to_dict(self) -> dict:
        """What results.json holds
        (:func:`~sensorbudget.trainer.evaluation.report.results_dict`)."""
        from .evaluation.report import results_dict

        return results_dict(self.result)

    def summary_lines(self) -> list:
        """The lines ``sensorbudget evaluate`` prints, each number said for what it is."""
        from .evaluation.folds import describe_split
        from .evaluation.report import summary_table, wilcoxon_tests

        config = self.result.config
        split = describe_split(config["split"], config["folds"], config["window"],
                               config.get("stratified", False))
        lines = [f"outer folds: {split}",
                 f"scores: nested CV, on the held-out outer folds (selection, lambda and "
                 f"thresholds chosen inside each training fold), mean and std over "
                 f"{self.folds_run} fold(s)", summary_table(self.result)]
        for t in wilcoxon_tests(self.result):
            if t["measure"] in ("macro_auc", "mse", "hamming_loss", "pairwise_error"):
                lines.append(f"wilcoxon {t['measure']} {t['budget']}: {t['a']} vs {t['b']} "
                             f"p={t['p_value']:.4g} better={t['better']} (paired over the "
                             f"nested CV folds)")
        return lines

    def save(self, path) -> Path:
        """Write the report folder (report.md, curves.png, summary.csv, wilcoxon.csv,
        results.json), all or nothing; returns the path."""
        from .evaluation.report import write_report

        write_report(self.result, Path(path), title=self.title, notes=self.notes)
        return Path(path)

    @classmethod
    def load(cls, path) -> "Evaluation":
        """The records of a report folder's results.json (or of that file)."""
        from .evaluation.protocol import EvaluationResult

        path = Path(path)
        file = path / RESULTS_FILE if path.is_dir() else path
        try:
            raw = json.loads(file.read_text(encoding="utf-8"))
            result = EvaluationResult(raw["records"], raw["config"], raw["measures"],
                                      raw["methods"], raw["budgets"])
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            raise DataError(f"{str(file)!r} is not an evaluation's results.json: "
                            f"{type(exc).__name__}: {exc}"[:300]) from None
        folds = {r.get("fold") for r in result.records}
        return cls(result=result, title=f"Evaluation in {path.name}", folds_run=len(folds))


def eval_data(data, unit: str, groups):
    """(EvalData, cost kwargs) of a Dataset: windows of recordings keep their sensor costs and
    recording groups; a table's groups are its ``groups`` column."""
    from .evaluation.protocol import EvalData

    fs = data.feature_set
    if fs is not None:
        from .sensing.sensor_budget import cost_kwargs_from_feature_set

        data.group_ids(groups)                     # raises for a column name
        costs = cost_kwargs_from_feature_set(fs, unit=unit) if fs.sensors else {}
        return EvalData(fs.X.astype(float), fs.Y, fs.task, list(fs.target_names),
                        groups=fs.groups, window_start=fs.window_start, window=fs.window,
                        hop=fs.hop), costs
    if unit != "feature":
        raise DataError(f"--unit {unit} needs sensor information (--sensors or a feature "
                        f"table)")
    ids = data.groups if groups is None else data.group_ids(groups)
    return EvalData(data.X, data.Y, data.task, list(data.target_names), groups=ids), {}


def evaluate(data, *, budgets=None, folds=10, methods=None, task="auto", groups=None,
             unit="feature", lam=None, lam_search="path", compress_labels=None,
             label_subset=None, fit_intercept=True, standardize=True,
             standardize_targets=False, split="auto", threshold=None, seed=0, only_folds=(),
             cache=None, progress=None, title=None, announce=None,
             **data_options) -> Evaluation:
    """Nested K-fold evaluation of ``methods`` on ``data`` at every budget:
    ``sensorbudget evaluate``.

    ``budgets``: a spec string (``"2,4,8"``, ``"price:5"``) or Budget list, default 1, 2, 4,
    ... (:mod:`~sensorbudget.trainer.evaluation.defaults`); ``methods``: names
    (greedy-joint, greedy-separate, mtlasso, greedy-rank), default by task; ``threshold``:
    multi-label decisions inside each fold (``f1``, ``precision:P``, ``zero``);
    ``announce(evaluation)``, when given, is called before the folds run with the Evaluation
    to come (its ``chosen`` and ``missing`` set, no result yet): the command prints what runs.
    """
    from .dataset import as_dataset
    from .evaluation.defaults import default_budgets, default_methods
    from .evaluation.protocol import Setup, parse_budgets
    from .evaluation.protocol import evaluate as run

    if task == "ranking" and groups is None:
        raise TrainerError("--task ranking needs --groups COLUMN (the query id of every row)")
    name = (Path(str(data)).name if not hasattr(data, "feature_names")
            else str(data.source.get("file") or data.source.get("recordings") or "data"))
    data = as_dataset(data, groups=groups, **data_options)
    evdata, costs = eval_data(data, unit, groups)
    if task == "auto":
        task = ("multilabel" if (data_options.get("labels") or data_options.get("xml"))
                else data.task)
    elif task != "ranking":
        task = Task.of(str(task))           # a Task (binary is multi-class) or its name
        check_binary(task, evdata.Y, evdata.target_names, data.class_values)
        task = task.stored
    evdata.task = task
    if task == "multiclass" and evdata.Y.shape[1] > 1:      # one-hot columns named by class:
        order = sorted(range(len(evdata.target_names)),    # the bundle's (sorted) class order
                       key=lambda j: evdata.target_names[j])
        evdata.Y, evdata.target_names = (np.asarray(evdata.Y)[:, order],
                                         [evdata.target_names[j] for j in order])
    if threshold is not None and task != "multilabel":
        raise TrainerError(f"--threshold {threshold} applies to multi-label targets, not task "
                           f"{task}")
    only_folds = list(only_folds or ())
    bad = [f for f in only_folds if f >= folds]
    if bad:
        raise TrainerError(f"--fold {bad[0]} is outside 0..{folds - 1}")
    budgets = parse_budgets(budgets) if isinstance(budgets, str) else budgets
    if isinstance(methods, str):            # "greedy-joint,mtlasso", as the command takes it
        methods = [m.strip() for m in methods.split(",") if m.strip()]
    if any(b.kind not in ("count", "fraction") for b in budgets or ()) and not costs:
        raise TrainerError("cost budgets need sensor information: give --sensors sensors.toml "
                           "(or a feature table built from one)")
    if standardize_targets and task != "regression":
        raise TrainerError(f"--standardize-targets applies to regression targets, not task "
                           f"{task}")
    setup = Setup(task=evdata.task, fit_intercept=fit_intercept,
                  standardize_targets=standardize_targets, standardize=standardize, lam=lam,
                  lam_search=lam_search, cost_kwargs=costs, compress_energy=compress_labels,
                  label_subset=label_subset, seed=seed, threshold=threshold or "f1")
    chosen = []
    if budgets is None:
        budgets, note = default_budgets(evdata, setup, folds, split)
        chosen.append(note)
    else:
        chosen.append("budgets " + ",".join(b.label for b in budgets))
    if methods is None:
        methods, method_notes = default_methods(evdata.task, budgets, setup, evdata.X.shape[1])
        chosen += [f"methods {','.join(methods)} (default)", *method_notes]
    else:
        chosen.append(f"methods {','.join(methods)}")
    out = Evaluation(result=None, title=title or f"Evaluation of {name}", chosen=chosen,
                     folds_run=len(only_folds) or folds,
                     missing=data.missing.describe() if data.dropped_rows else "")
    if announce is not None:
        announce(out)
    out.result = run(evdata, methods, budgets, folds=folds, setup=setup,
                     only_folds=only_folds or None, cache_dir=cache, progress=progress,
                     split=split)
    out.notes = _notes(setup, evdata, out.result.config["split"],
                       out.result.config.get("stratified", False))
    return out


def _notes(setup, evdata, split, stratified=False) -> list:
    """The report's notes: the task, lambda, target scaling, label compression, the folds."""
    notes = [f"task: {evdata.task}; lambda: "
             f"{'LOO over 2^-15..2^15 per fold and budget' if setup.lam is None else setup.lam}"]
    if setup.standardize_targets:
        notes.append("greedy-joint selected and mtlasso fitted on targets standardised with "
                     "each training fold's means and scales; scores in target units")
    if setup.compress_energy is not None:
        notes.append(f"greedy-joint selected on SVD-compressed labels (energy "
                     f"{setup.compress_energy}); weights refitted on all labels")
    if setup.label_subset is not None:
        notes.append(f"every method learned {setup.label_subset} ML-CSSP labels; the others "
                     f"reconstructed by Y_C^+ Y")
    if split == "group":
        notes.append("folds keep the rows of one group (recording, subject or query) together "
                     + ("and are dealt by class (stratified group K-fold)" if stratified
                        else "(group K-fold)"))
    elif split == "blocked" and evdata.window is None:
        notes.append("folds are contiguous blocks of the table's rows in file order (no gap)")
    elif split == "blocked":
        notes.append("fewer recordings than folds: folds are contiguous blocks in time with a "
                     "gap of one window length between training and test windows")
    elif evdata.window is not None:
        notes.append("shuffled folds on windows of recordings: neighbouring windows fall on "
                     "both sides of a split, so scores are optimistic")
    elif evdata.groups is not None:
        notes.append("fewer groups than folds: rows of one group are split across folds "
                     "(shuffled K-fold)")
    return notes
