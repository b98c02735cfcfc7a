"""``sensorbudget evaluate``: nested cross-validation of budgeted selection methods."""

from __future__ import annotations

from pathlib import Path

import click

from ._errors import CliError, handle_errors
from .cli_decisions import _rule
from .cli_groups import RECORDING, group_column, resolve_groups
from .cli_report import check_html, html_option, write_html
from .cli_tables import table_options
from .text_out import printable

TASKS = ("auto", "regression", "multilabel", "multiclass", "ranking")
METHOD_NAMES = ("greedy-joint", "greedy-separate", "mtlasso", "greedy-rank")


def _methods(ctx, param, value):
    if value is None:
        return None
    names = [m.strip() for m in value.split(",") if m.strip()]
    bad = [m for m in names if m not in METHOD_NAMES]
    if bad or not names:
        raise click.BadParameter(f"{bad[0] if bad else value!r} is not a method; choose from "
                                 f"{', '.join(METHOD_NAMES)}", ctx, param)
    return list(dict.fromkeys(names))


def _budgets(ctx, param, value):
    if value is None:
        return None
    from sensorbudget.trainer.errors import TrainerError
    from sensorbudget.trainer.evaluation.protocol import parse_budgets

    try:
        return parse_budgets(value)
    except TrainerError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


def _load(data, sensors, unit, table_options, groups):
    """(EvalData, cost kwargs, task): a sensorbudget feature table (or recordings with
    --sensors) keeps its sensor costs and recording groups; other files via load_table, with
    ``--groups COLUMN`` as the groups (recordings, subjects; query ids for ranking)."""
    from sensorbudget.trainer.evaluation.protocol import EvalData
    from sensorbudget.trainer.sensing.feature_set import FeatureSet, is_feature_file, load_feature_set

    fs = None
    if sensors is not None:
        fs = load_feature_set(data, sensors)
    elif data.suffix.lower() == ".npz" and is_feature_file(data):
        fs = FeatureSet.load(data)
    if fs is not None:
        from sensorbudget.trainer.sensing.sensor_budget import cost_kwargs_from_feature_set

        resolve_groups(groups, {"fs": fs})          # raises for a column name
        costs = cost_kwargs_from_feature_set(fs, unit=unit) if fs.sensors else {}
        return EvalData(fs.X.astype(float), fs.Y, fs.task, list(fs.target_names),
                        groups=fs.groups, window_start=fs.window_start, window=fs.window,
                        hop=fs.hop), costs, fs.task
    from sensorbudget.trainer.data import load_table

    if unit != "feature":
        raise CliError(f"--unit {unit} needs sensor information (--sensors or a feature table)")
    if groups == RECORDING:
        resolve_groups(groups, {"fs": None})        # raises: a table has no recordings
    table = load_table(data, groups=group_column(groups), **table_options)
    if table.dropped_rows:
        click.echo(table.missing.describe(), err=True)
    return (EvalData(table.X, table.Y, table.task, list(table.target_names), groups=table.groups),
            {}, table.task)


@click.command("evaluate", short_help="Nested cross-validation of selection methods.")
@click.argument("data", type=click.Path(exists=True, path_type=Path))
@click.option("--sensors", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="sensors.toml: DATA are recordings; enables cost budgets.")
@click.option("--unit", type=click.Choice(("feature", "channel", "sensor")), default="feature",
              show_default=True, help="Selection unit with sensor information.")
@click.option("--budgets", default=None, callback=_budgets,
              help="Comma list: counts (3), fractions (0.1, 10%), low/med/high (10/45/80% of "
                   "the units) or cost limits (price:5, energy:0.2, time:1, sensors:2) "
                   "[default: 1,2,4,... up to min(units, half the rows of the smallest "
                   "training fold)].")
@click.option("--folds", type=click.IntRange(min=2), default=10, show_default=True,
              help="Outer cross-validation folds.")
@click.option("--methods", default=None, callback=_methods,
              help="Comma list of methods to compare (greedy-joint, greedy-separate, mtlasso, "
                   "greedy-rank) [default: the first three, mtlasso only for count budgets "
                   "of single features; ranking: greedy-rank,greedy-joint].")
@click.option("--target", "targets", multiple=True, help="Target column name (repeatable).")
@click.option("--labels", type=int, default=None, help="The last L columns are 0/1 labels.")
@click.option("--xml", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Mulan XML file naming the label columns.")
@click.option("--targets-last", type=click.IntRange(min=1), default=None, metavar="N",
              help="The last N columns are regression targets (Mulan multi-target ARFF).")
@click.option("--task", type=click.Choice(TASKS), default="auto", show_default=True,
              help="auto = multilabel for --labels/--xml, else regression. ranking: --groups "
                   "names the query ids; scored by pairwise ranking error within queries.")
@click.option("--groups", default=None, metavar="COLUMN|recording",
              help="Rows sharing this id stay in one fold (a CSV/ARFF column or NPZ array; "
                   "recordings: 'recording', the default); the query ids for --task ranking.")
@click.option("--lam", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Fixed ridge parameter; default: LOO over 2^-15..2^15 per fold and budget.")
@click.option("--lam-search", type=click.Choice(("path", "grid")), default="path",
              show_default=True,
              help="Without --lam, greedy-joint/separate per fold: 'path' runs GreedyRLS's "
                   "steered search per budget; 'grid' one path per grid value (31 runs).")
@click.option("--compress-labels", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="Greedy-joint criterion on the SVD-compressed labels keeping this energy "
                   "(1 = full rank, exact).")
@click.option("--label-subset", type=click.IntRange(min=1), default=None,
              help="Learn only K labels chosen by ML-CSSP and reconstruct the others.")
@click.option("--no-intercept", is_flag=True, help="Fit without an intercept.")
@click.option("--no-standardize", is_flag=True, help="Do not scale features to unit variance.")
@click.option("--standardize-targets", is_flag=True,
              help="Regression: greedy-joint's criterion and mtlasso on targets scaled to unit "
                   "variance within each training fold (predictions and scores stay in target "
                   "units; greedy-separate is unaffected).")
@table_options
@click.option("--split", type=click.Choice(("auto", "group", "blocked", "shuffled")),
              default="auto", show_default=True,
              help="Outer folds: group (a group in one fold), blocked (contiguous blocks in "
                   "time, a gap of one window; a table's rows in file order), shuffled; auto = "
                   "group with at least --folds groups, else blocked for windows of "
                   "recordings, else shuffled.")
@click.option("--threshold", "threshold_rule", default=None, callback=_rule,
              metavar="f1|precision:P|zero",
              help="Multi-label decisions inside each outer fold: per-label thresholds chosen "
                   "on the training fold's LOO scores as 'train --threshold' chooses them "
                   "(zero: the sign of the score, the old numbers)  [default: f1]")
@click.option("--seed", type=int, default=0, show_default=True, help="Fold shuffling seed.")
@click.option("--fold", "only_folds", type=click.IntRange(min=0), multiple=True,
              help="Run only this fold index (repeatable; cheap re-runs).")
@click.option("--cache", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory keeping each finished (fold, method); a re-run resumes from it.")
@click.option("--report", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write report.md, curves.png, summary.csv, wilcoxon.csv, results.json here.")
@click.option("--progress", "show_progress", is_flag=True,
              help="Show the progress bar (elapsed, ETA) even when stderr is not a terminal.")
@html_option
@handle_errors
def evaluate_command(data, sensors, unit, budgets, folds, methods, targets, labels, xml,
                     targets_last, task,
                     groups, lam, lam_search, compress_labels, label_subset, no_intercept,
                     no_standardize, standardize_targets, sep,
                     decimal, ignore, na_value, drop_missing, max_drop_fraction, split, threshold_rule, seed,
                     only_folds, cache,
                     report, show_progress=False, html_out=None):
    """Nested K-fold evaluation of METHODS on DATA at every budget: selection and lambda are
    chosen inside each training fold; prints mean ± std per measure and budget."""
    from sensorbudget.trainer.evaluation.folds import describe_split
    from sensorbudget.trainer.evaluation.protocol import Setup, evaluate
    from sensorbudget.trainer.evaluation.report import (results_dict, summary_table, wilcoxon_tests,
                                           write_report)

    options = dict(targets=list(targets) or None, labels=labels, xml=xml, sep=sep,
                   decimal=decimal, ignore=tuple(ignore),
                   drop_missing=drop_missing and max_drop_fraction,
                   na_value=na_value, targets_last=targets_last)
    if task == "ranking" and groups is None:
        raise CliError("--task ranking needs --groups COLUMN (the query id of every row)")
    check_html(html_out)
    evdata, costs, found_task = _load(data, sensors, unit, options, groups)
    if task == "auto":
        task = "multilabel" if (labels or xml) else found_task
    evdata.task = task
    if threshold_rule is not None and task != "multilabel":
        raise CliError(f"--threshold {threshold_rule} applies to multi-label targets, not task "
                       f"{task}")
    bad = [f for f in only_folds if f >= folds]
    if bad:
        raise CliError(f"--fold {bad[0]} is outside 0..{folds - 1}")
    if any(b.kind not in ("count", "fraction") for b in budgets or ()) and not costs:
        raise CliError("cost budgets need sensor information: give --sensors sensors.toml "
                       "(or a feature table built from one)")
    if standardize_targets and task != "regression":
        raise CliError(f"--standardize-targets applies to regression targets, not task {task}")
    setup = Setup(task=evdata.task, fit_intercept=not no_intercept,
                  standardize_targets=standardize_targets,
                  standardize=not no_standardize, lam=lam, lam_search=lam_search,
                  cost_kwargs=costs,
                  compress_energy=compress_labels, label_subset=label_subset, seed=seed,
                  threshold=threshold_rule or "f1")
    budgets, methods = _defaults(evdata, setup, budgets, methods, folds, split)
    from .progress import ProgressBar

    bar = ProgressBar("evaluating (fold, method)", enabled=show_progress or None)
    try:
        result = evaluate(evdata, methods, budgets, folds=folds, setup=setup,
                          only_folds=list(only_folds) or None, cache_dir=cache, progress=bar,
                          split=split)
    finally:
        bar.close()
    click.echo(f"outer folds: {describe_split(result.config['split'], folds, evdata.window)}")
    click.echo(f"scores: nested CV, on the held-out outer folds (selection, lambda and "
               f"thresholds chosen inside each training fold), mean and std over "
               f"{len(only_folds) or folds} fold(s)")
    click.echo(printable(summary_table(result)))
    for t in wilcoxon_tests(result):
        if t["measure"] in ("macro_auc", "mse", "hamming_loss", "pairwise_error"):
            click.echo(f"wilcoxon {t['measure']} {t['budget']}: {t['a']} vs {t['b']} "
                       f"p={t['p_value']:.4g} better={t['better']} (paired over the nested CV "
                       f"folds)")
    if report is not None:
        notes = _notes(setup, evdata, result.config["split"])
        write_report(result, report, title=f"Evaluation of {data.name}", notes=notes)
        click.echo(f"wrote {report}")
    if html_out is not None:
        write_html(html_out, [],
                   evaluations={f"evaluation of {data.name}": results_dict(result)},
                   title=f"Evaluation of {data.name}")
        click.echo(f"wrote {html_out}")


def _defaults(evdata, setup, budgets, methods, folds, split) -> tuple:
    """(budgets, methods): the given ones, or the defaults of
    :mod:`sensorbudget.trainer.evaluation.defaults`, with one printed line saying what runs."""
    from sensorbudget.trainer.evaluation.defaults import default_budgets, default_methods

    chosen = []
    if budgets is None:
        budgets, note = default_budgets(evdata, setup, folds, split)
        chosen.append(note)
    else:
        chosen.append("budgets " + ",".join(b.label for b in budgets))
    if methods is None:
        methods, notes = default_methods(evdata.task, budgets, setup, evdata.X.shape[1])
        chosen.append(f"methods {','.join(methods)} (default)")
        chosen += notes
    else:
        chosen.append(f"methods {','.join(methods)}")
    click.echo("evaluating " + "; ".join(chosen))
    return budgets, methods


def _notes(setup, evdata, split) -> list:
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
                     "(group K-fold)")
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
