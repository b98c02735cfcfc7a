"""``sensorbudget evaluate``: nested cross-validation of budgeted selection methods."""

from __future__ import annotations

from pathlib import Path

import click

from sensorbudget.trainer.results import TASKS as EVALUATE_TASKS

from ._errors import handle_errors
from .cli_decisions import _rule
from .cli_features import window_options
from .cli_report import check_html, html_option, write_html
from .cli_tables import table_options
from .text_out import printable

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


@click.command("evaluate", short_help="Nested cross-validation of selection methods.")
@click.argument("data", type=click.Path(exists=True, path_type=Path))
@click.option("--sensors", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="sensors.toml: DATA are recordings; enables cost budgets.")
@click.option("--unit", type=click.Choice(("feature", "channel", "sensor")), default="feature",
              show_default=True, help="Selection unit with sensor information.")
@click.option("--budgets", default=None, callback=_budgets,
              help="Comma list: counts (3), fractions (0.1, 10%), low/med/high (10/45/80% of "
                   "the units), cost limits (price:5, energy:0.2, time:1, sensors:2) or at "
                   "most N units under one (8@energy:0.2) "
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
@click.option("--task", type=click.Choice(EVALUATE_TASKS), default="auto", show_default=True,
              help="auto = multilabel for --labels/--xml, else regression (a features file: "
                   "its task). binary = multiclass with at most 2 classes. ranking: --groups "
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
@window_options
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
                     report, window=None, hop=None, compute_target=None, stream_format=None,
                     show_progress=False, html_out=None):
    """Nested K-fold evaluation of METHODS on DATA at every budget: selection and lambda are
    chosen inside each training fold; prints mean ± std per measure and budget."""
    from sensorbudget.trainer.api import evaluate

    from .progress import ProgressBar

    check_html(html_out)
    bar = ProgressBar("evaluating (fold, method)", enabled=show_progress or None)

    def announce(plan):                                  # before the folds run: what runs
        if plan.missing:
            click.echo(plan.missing, err=True)
        click.echo("evaluating " + "; ".join(plan.chosen))

    try:
        result = evaluate(data, sensors=sensors, unit=unit, budgets=budgets, folds=folds,
                          methods=methods, targets=targets, labels=labels, xml=xml,
                          targets_last=targets_last, task=task, groups=groups, lam=lam,
                          lam_search=lam_search, compress_labels=compress_labels,
                          label_subset=label_subset, fit_intercept=not no_intercept,
                          standardize=not no_standardize,
                          standardize_targets=standardize_targets, sep=sep, decimal=decimal,
                          ignore=ignore, na_value=na_value, drop_missing=drop_missing,
                          max_drop_fraction=max_drop_fraction, split=split,
                          threshold=threshold_rule, seed=seed, only_folds=only_folds,
                          cache=cache, progress=bar, title=f"Evaluation of {data.name}",
                          window=window, hop=hop, compute_target=compute_target,
                          stream_format=stream_format, announce=announce)
    finally:
        bar.close()
    for line in result.summary_lines():
        click.echo(printable(line))
    if report is not None:
        result.save(report)
        click.echo(f"wrote {report}")
    if html_out is not None:
        write_html(html_out, [], evaluations={f"evaluation of {data.name}": result.to_dict()},
                   title=f"Evaluation of {data.name}")
        click.echo(f"wrote {html_out}")
