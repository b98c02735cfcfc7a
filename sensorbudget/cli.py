"""The ``sensorbudget`` command line: a thin click layer over the library packages.

The command modules import the heavy library modules (scikit-learn, skl2onnx, matplotlib, Dask)
inside the commands that need them, not at the top: a command then pays only for what it runs
(``python -X importtime``: scikit-learn alone is about 0.5 s of the start).
"""

from __future__ import annotations

from pathlib import Path

import click

from sensorbudget.trainer.target_scaling import path_in_target_units
from sensorbudget.trainer.training import TASKS as TRAIN_TASKS

from . import __version__
from ._errors import CliError, OneLineGroup, handle_errors
from .cli_costs import board_lines, cost_options, plot_option, ram_costs_of, write_plot
from .cli_dask import dask_option
from .cli_decisions import describe_decision, threshold_options
from .cli_features import window_options
from .cli_groups import groups_option
from .cli_report import check_html, html_option, write_html
from .text_out import printable


@click.group(cls=OneLineGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sensorbudget")
def main():
    """Budgeted sensor selection with greedy RLS: recordings -> model -> firmware."""


def _progress(total_label, enabled=None):
    """A progress bar on stderr (elapsed time, ETA) driven by ``tick(done, total)`` callbacks;
    quiet when stderr is not a terminal unless ``enabled`` (``--progress``)."""
    from .progress import ProgressBar

    return ProgressBar(total_label, enabled=enabled or None)


@main.command("train")
@click.argument("data", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--budget", "-k", type=int, default=None,
              help="Number of extractors to select (default: no count limit; then give a "
                   "cost budget such as --max-cost).")
@click.option("--target", "targets", multiple=True, help="Target column name (repeatable).")
@click.option("--labels", type=int, default=None,
              help="The last L columns are 0/1 labels (Mulan multi-label).")
@click.option("--xml", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Mulan XML file naming the label columns.")
@click.option("--targets-last", type=click.IntRange(min=1), default=None, metavar="N",
              help="The last N columns are regression targets (Mulan multi-target ARFF).")
@click.option("--task", type=click.Choice(TRAIN_TASKS), default="auto", show_default=True,
              help="Learning task; auto = multilabel for --labels/--xml, else regression (a "
                   "features file: its task); binary = multiclass with at most 2 classes.")
@click.option("--lam", type=float, default=None,
              help="Ridge parameter; default: chosen by LOO over 2^-15..2^15 (--lam-search).")
@click.option("--lam-search", type=click.Choice(("path", "grid")), default="path",
              show_default=True,
              help="Without --lam: 'path' steers one greedy run along the grid by the exact "
                   "criterion of its set (about 2 runs); 'grid' runs every grid value (31 runs).")
@click.option("--no-intercept", is_flag=True, help="Fit without an intercept.")
@click.option("--no-standardize", is_flag=True, help="Do not scale features to unit variance.")
@click.option("--standardize-targets", is_flag=True,
              help="Regression: select and fit on targets scaled to unit variance, then fold "
                   "the scales into the weights (predictions and every export stay in the "
                   "targets' units); without it, targets whose spreads differ >10x warn.")
@click.option("--sep", default=None, help="CSV field separator [default: ','].")
@click.option("--decimal", default=None, help="CSV decimal mark, e.g. ',' [default: '.'].")
@click.option("--ignore", multiple=True, help="Column to leave out of the features (repeatable).")
@click.option("--na-value", type=float, default=None,
              help="A number that marks a missing value (e.g. -200).")
@click.option("--drop-missing", is_flag=True,
              help="Drop rows with a missing/non-finite value instead of failing (prints the "
                   "rows, the fraction and the count per column).")
@click.option("--max-drop-fraction", type=click.FloatRange(0, 1, min_open=True), default=0.5,
              show_default=True,
              help="With --drop-missing: refuse when more than this fraction of the rows "
                   "would be dropped (1 = drop any number).")
@click.option("--keep-missing-targets", is_flag=True,
              help="Keep rows whose targets are partly missing: each target then trains on its "
                   "observed rows (regression).")
@groups_option
@click.option("--sensors", "sensors_toml", default=None,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="sensors.toml: DATA is then recordings, windowed into candidate features.")
@window_options
@click.option("--dtype", type=click.Choice(("float64", "float32")), default="float64",
              show_default=True, help="Precision of the working arrays.")
@click.option("--progress", "show_progress", is_flag=True,
              help="Show the progress bar (elapsed, ETA) even when stderr is not a terminal.")
@click.option("--compress-labels", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="Select on the SVD-compressed targets keeping this energy (1 = exact, "
                   "same picks); weights are refit on every target.")
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True,
              help="Bundle directory to write (model.json + weights.npz).")
@cost_options
@threshold_options
@dask_option
@html_option
@handle_errors
def train_command(data, budget, task, lam, lam_search, no_intercept, no_standardize, dtype,
                  show_progress, standardize_targets, compress_labels,
                  output, max_sensors, max_cost, max_energy, max_time, mode, strategy, unit, plot,
                  dask, threshold_rule=None, platt=False, **load_options):
    """Select features from DATA and write a model bundle.

    DATA is a feature table (CSV, ARFF or NPZ, including the NPZ written by
    ``sensorbudget features``) or, with --sensors, recordings to window into features. With
    --dask, DATA may be a glob or directory of NPZ/CSV shards with the same columns.
    """
    from sensorbudget.trainer import api
    from sensorbudget.trainer.training import check_budget

    html_out = load_options.pop("html_out", None)     # --html: the report of this bundle
    check_html(html_out)
    api.Bundle.check_output(output)      # a foreign folder is refused before the selection runs
    board = {k: load_options.pop(k, None) for k in ("board", "max_ram", "numeric", "max_flash")}
    costs = dict(max_sensors=max_sensors, max_cost=max_cost, max_energy=max_energy,
                 max_time=max_time)
    check_budget(budget, **costs)
    if dask is not None and compress_labels is not None:
        raise CliError("--compress-labels does not apply with --dask")
    groups = load_options.pop("groups")
    sensors = load_options.pop("sensors_toml")
    data_set = api.Dataset.load(data, sensors=sensors, shards=dask is not None, groups=groups,
                                **load_options)
    if data_set.dropped_rows:
        click.echo(data_set.missing.describe(), err=True)
    bundle = api.train(data_set, budget=budget, task=task, lam=lam, lam_search=lam_search,
                       fit_intercept=not no_intercept, standardize=not no_standardize,
                       standardize_targets=standardize_targets, dtype=dtype,
                       compress_labels=compress_labels, mode=mode, strategy=strategy,
                       unit=unit, groups=groups, threshold=threshold_rule, platt=platt,
                       dask=dask, ram_costs=ram_costs_of(**board),
                       progress=_progress("selecting", show_progress),
                       created_by=f"sensorbudget {__version__}", **costs)
    bundle.save(output)
    meta = bundle.meta
    if plot:
        write_plot(path_in_target_units(meta), plot, criterion=meta.get("criterion"))
    if html_out is not None:
        write_html(html_out, [output])
    click.echo(printable(format_path(meta)))
    for line in board_lines(meta, board["board"], board["numeric"]):
        click.echo(line)
    click.echo(f"wrote {output}" + (f" and {plot}" if plot else "")
               + (f" and {html_out}" if html_out else ""))


def format_path(meta: dict) -> str:
    """The selection path of a bundle as a plain-text table (errors in the targets' units:
    :func:`sensorbudget.trainer.target_scaling.path_in_target_units`, as every other surface)."""
    scaled = bool(meta.get("target_scaling"))
    path = path_in_target_units(meta)
    memory = [k for k in ("ram", "flash") if path and all(k in (e.get("costs") or {})
                                                          for e in path)]
    lines = [f"task={meta['task']}  targets={len(meta['targets'])}  lam={meta['lam']:.6g}  "
             f"features={len(meta['features'])}  selected={len(meta['selected'])}",
             f"{'step':>4}  {'added':<32} {criterion_label(meta):>12} "
             + (f"{'std. crit.':>10} " if scaled else "") + f"{'cost':>8}"
             + "".join(f" {k + ' B':>8}" for k in memory)]
    for entry in path:
        added = ", ".join(entry["added"])
        lines.append(f"{entry['step']:>4}  {added[:32]:<32} {entry['loo_mse']:>12.6g} "
                     + (f"{entry['criterion_mse']:>10.4g} " if scaled else "")
                     + f"{entry['cost']:>8.4g}"
                     + "".join(f" {entry['costs'][k]:>8.0f}" for k in memory)
                     + ("  sensors at " + ", ".join(f"{s} {r:g} Hz" for s, r in
                                                    entry["rates_hz"].items())
                        if "rates_hz" in entry else ""))
    lines.append(f"{criterion_label(meta)}: the selection criterion on the training rows, "
                 f"in-sample (the same rows chose the features and lambda): optimistic; "
                 f"nested CV: sensorbudget evaluate"
                 + ("; in the targets' units (each target's MSE on standardised targets times "
                    "its variance); std. crit.: what the selection minimised, on standardised "
                    "targets (mean over targets of MSE / variance)" if scaled else ""))
    if memory:
        lines.append(f"{' B, '.join(memory)} B: bytes of the board's firmware that the selected "
                     f"features add (train --board: estimated from the plan by "
                     f"firmware_gen.memory; the runtime's bytes not included)")
    if meta.get("required_sensors"):
        from sensorbudget.trainer.sensing.rates import read_above_paid

        rates, above = meta.get("sensor_rates_hz") or {}, read_above_paid(meta)
        lines.append("required sensors: " + ", ".join(
            f"{s} at {rates[s]:g} Hz" if s in rates else s for s in meta["required_sensors"]))
        lines += [f"  {s}: a device reads it at {r:g} Hz (its features' rates do not divide "
                  f"each other: plain decimation needs a rate they all divide); the selection "
                  f"priced it at {rates[s]:g} Hz, so the energy below is low for it"
                  for s, r in above.items()]
    lines += cost_lines(meta)
    lines += describe_decision(meta)
    return "\n".join(lines)


def cost_lines(meta: dict) -> list:
    """The selected design's price, energy and time per prediction, said for what they are
    (the one cost model: docs/device_costs.md)."""
    total = (meta.get("costs") or {}).get("total") or {}
    if "energy" not in total or not meta.get("window"):
        return []
    readings = (f"{min(int(meta['window']), int(meta.get('hop', meta['window'])))} new "
                f"reading(s) per sensor, min(window, hop)")
    if meta.get("sensor_rates_hz"):       # sensors at their own rates: rate x min(window, hop) s
        readings = "new readings rate x min(window_s, hop_s): " + ", ".join(
            f"{s['name']} {s['readings_per_prediction']}" for s in meta["sensors"]
            if s["name"] in meta["sensor_rates_hz"])
    return [f"per prediction on a streaming device ({readings}): energy "
            f"{total['energy']:.4g} J, time {total['time']:.4g} s "
            f"(sensors, plus calibrated extractor compute when sensors.toml has it); "
            f"price {total.get('price', 0.0):.4g}"]


def criterion_label(meta: dict) -> str:
    """Column title of the selection criterion (LOO or leave-group-out MSE)."""
    return "LOGO MSE" if meta.get("criterion") == "leave-group-out" else "LOO MSE"


@main.command("info")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@plot_option
@handle_errors
def info_command(path, plot):
    """Describe a bundle directory (selection path) or an exported model.onnx (metadata)."""
    if path.suffix.lower() == ".onnx":
        from . import export

        click.echo(printable(export.describe_onnx(path)))
        return
    from sensorbudget.trainer.bundle.model import load_bundle

    meta = load_bundle(path).meta
    click.echo(printable(format_path(meta)))
    if plot:
        write_plot(path_in_target_units(meta), plot, criterion=meta.get("criterion"))
        click.echo(f"wrote {plot}")


def _register_optional_commands():
    """Commands defined next to this module by the other packages' CLI files."""
    import importlib

    commands = (("cli_features", "features_command"), ("cli_export", "export_group"),
                ("cli_evaluate", "evaluate_command"), ("cli_firmware", "firmware_command"),
                ("cli_firmware", "flash_command"), ("cli_simulate", "simulate_command"),
                ("cli_simulate", "compare_command"), ("cli_simulate", "calibrate_command"),
                ("cli_report", "report_command"), ("cli_predict", "predict_command"),
                ("cli_targets", "targets_command"), ("cli_upgrade", "upgrade_command"))
    for module, attr in commands:
        try:
            mod = importlib.import_module(f"{__package__}.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{module}":
                raise
            continue
        if hasattr(mod, attr):
            main.add_command(getattr(mod, attr))
    from .cli_export import export_group
    from .cli_library import c_library_command

    export_group.add_command(c_library_command)         # sensorbudget export c-library


_register_optional_commands()
