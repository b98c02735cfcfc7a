"""``sensorbudget predict BUNDLE DATA [-o predictions.csv]``: score new data with a bundle.

DATA is a feature table (CSV, ARFF, NPZ, or the NPZ of ``sensorbudget features``) holding the
bundle's selected feature columns by name, or -- for a bundle trained from recordings -- the
recordings themselves, windowed and featurised through the bundle's own extractors
(:func:`sensorbudget.trainer.bundle.recordings.features_from_recordings`; the work is
:func:`sensorbudget.trainer.api.predict`). When DATA holds the targets
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

from ._errors import CliError, handle_errors
from .cli_features import window_options
from .cli_tables import table_options
from .text_out import printable


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
    from sensorbudget.trainer.api import predict

    if window is not None or hop is not None or compute_target is not None:
        raise CliError("--window/--hop/--compute-target do not apply: the bundle fixes the "
                       "window, hop and extractors")
    result = predict(bundle_dir, data, stream_format=stream_format, targets=targets,
                     labels=labels, xml=xml, targets_last=targets_last, sep=sep,
                     decimal=decimal, ignore=ignore, na_value=na_value,
                     drop_missing=drop_missing, max_drop_fraction=max_drop_fraction)
    if result.missing:
        click.echo(result.missing, err=True)
    if output is None:
        click.echo(result.to_csv(), nl=False)
        for line in result.lines:
            click.echo(printable(line), err=True)
        return
    result.save(output)
    for line in result.lines + [f"wrote {output}"]:
        click.echo(printable(line))
