"""``sensorbudget features``: recordings + sensors.toml -> candidate feature table (.npz)."""

from __future__ import annotations

import functools
from pathlib import Path

import click

from sensorbudget.trainer.errors import DataError
from sensorbudget.trainer.sensing.streams import StreamFormat

from ._errors import CliError, handle_errors


def window_options(f):
    """How recordings are read and become features (features, train): --window, --hop and
    --compute-target, and the stream options, which reach the command as one
    ``stream_format`` (:class:`sensorbudget.trainer.sensing.streams.StreamFormat`)."""

    inner = f

    @functools.wraps(inner)
    def command(*args, time_column, time_unit, columns, split_gaps, recording_column, **kw):
        try:
            kw["stream_format"] = StreamFormat(
                time_column=time_column, time_unit=time_unit,
                columns=None if columns is None else tuple(c.strip() for c in columns.split(",")),
                split_gaps=split_gaps, recording_column=recording_column)
        except DataError as exc:
            raise CliError(str(exc)) from None
        return inner(*args, **kw)

    f = command
    for option in reversed((
            click.option("--time-column", default="time", show_default=True,
                         help="Recordings: the column of time stamps."),
            click.option("--time-unit",
                         type=click.Choice(("auto", "s", "ms", "us", "ns", "iso")),
                         default="auto", show_default=True,
                         help="Recordings: seconds, milli-, micro- or nanoseconds since any "
                              "epoch, or ISO 8601 text (2024-05-01T12:00:00.125Z); auto: "
                              "ISO text, or epoch s/ms/us/ns told by the size of the first "
                              "stamp (after 2001), else seconds."),
            click.option("--columns", default=None, metavar="NAME,NAME,...",
                         help="Recordings without a header row: the column names (.txt files "
                              "may be separated by blanks, as Daphnet's)."),
            click.option("--split-gaps", type=float, default=None, metavar="SECONDS",
                         help="Cut each stream into recordings where the time stamps jump by "
                              "more than SECONDS (for leave-recording-out)."),
            click.option("--recording-column", default=None, metavar="NAME",
                         help="Cut each stream into recordings where this column changes "
                              "(e.g. a subject or session id; it becomes a label)."),
            click.option("--window", type=click.IntRange(min=1), default=None,
                         help="Window length in samples (overrides [window] in sensors.toml)."),
            click.option("--hop", type=click.IntRange(min=1), default=None,
                         help="Hop between window starts in samples (default: sensors.toml, "
                              "else window)."),
            click.option("--compute-target", default=None,
                         help="Which [[calibration]] target of sensors.toml prices extractor "
                              "compute."))):
        f = option(f)
    return f


@click.command("features", short_help="Turn recordings into a candidate feature table.")
@click.argument("recordings", type=click.Path(exists=True, path_type=Path))
@click.option("--sensors", "sensors_toml", required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="sensors.toml: sensors, costs, and the extractors per channel.")
@window_options
@click.option("--on-missing", type=click.Choice(("skip", "error")), default=None,
              help="Windows with missing samples or time gaps: skip them (default) or fail.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Feature table to write (.npz).")
@click.option("--progress", "show_progress", is_flag=True,
              help="Show the progress bar over the recordings (elapsed, ETA) even when stderr "
                   "is not a terminal.")
@handle_errors
def features_command(recordings, sensors_toml, window, hop, on_missing, compute_target, output,
                     stream_format, show_progress):
    """Window RECORDINGS (a CSV/NPZ stream, a .ts file, AirQualityUCI.csv, or a directory) and
    compute the candidate features that sensors.toml describes; write them as an NPZ."""
    from sensorbudget.trainer.api import features

    from .progress import ProgressBar

    data = features(recordings, sensors_toml, window=window, hop=hop, on_missing=on_missing,
                    compute_target=compute_target, stream_format=stream_format,
                    progress=ProgressBar("features", enabled=show_progress or None))
    data.save(output)
    fs = data.feature_set
    skipped = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in fs.skipped.items() if v)
    click.echo(f"{fs.X.shape[0]} windows x {fs.X.shape[1]} features, {len(fs.target_names)} "
               f"target(s) ({fs.task}) from {len(fs.recording_names)} recording(s); "
               + _window_text(fs))
    if skipped:
        click.echo(f"skipped windows: {skipped}")
    click.echo(f"wrote {output}")


def _window_text(fs) -> str:
    """The window of a feature table: in samples at its rate, or (sensors at their own rates)
    in seconds with each sensor's recorded rate and its candidate rates."""
    if not fs.feature_rates:
        return f"window={fs.window} hop={fs.hop} samples at {fs.sample_rate:g} Hz"
    sensors = [f"{s['name']} {s['sample_rate_hz']:g} Hz" + (
        f" (candidates at {', '.join(f'{r:g}' for r in s['rates_hz'])} Hz)"
        if s.get("rates_hz") else "") for s in fs.sensors]
    return (f"window {fs.window / fs.sample_rate:g} s, hop {fs.hop / fs.sample_rate:g} s; "
            f"sensors at {', '.join(sensors)}")
