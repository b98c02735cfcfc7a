"""The ``sensorbudget`` command line: a thin click layer over the library packages.

The command modules import the heavy library modules (scikit-learn, skl2onnx, matplotlib, Dask)
inside the commands that need them, not at the top: a command then pays only for what it runs
(``python -X importtime``: scikit-learn alone is about 0.5 s of the start).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import click
import numpy as np

from sensorbudget.trainer.errors import TrainerWarning
from sensorbudget.trainer.sensing.streams import StreamFormat
from sensorbudget.trainer.target_scaling import path_in_target_units

from . import __version__
from ._errors import CliError, OneLineGroup, handle_errors
from .cli_costs import (board_lines, cost_options, estimator_kwargs_from_options, plot_option,
                        write_plot)
from .cli_dask import dask_estimator_for_task, dask_option, fit_on_dask, load_shards
from .cli_decisions import (
    decision_for,
    describe_decision,
    target_scale_warning,
    threshold_options,
    warn_overlap,
)
from .cli_features import window_options
from .cli_groups import group_column, groups_option, resolve_groups
from .cli_report import check_html, html_option, write_html
from .text_out import printable

TASKS = ("auto", "regression", "multilabel", "multiclass")


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
@click.option("--task", type=click.Choice(TASKS), default="auto", show_default=True,
              help="Learning task; auto = multilabel for --labels/--xml, else regression.")
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
    from sensorbudget.trainer.bundle.model import bundle_contents, check_bundle_output, save_bundle

    html_out = load_options.pop("html_out", None)     # --html: the report of this bundle
    check_html(html_out)
    check_bundle_output(output)          # a foreign folder is refused before the selection runs
    board = {k: load_options.pop(k, None) for k in ("board", "max_ram", "numeric")}
    if budget is not None and budget <= 0:
        raise CliError(f"--budget={budget} must be at least 1")
    if budget is None and all(v is None for v in (max_sensors, max_cost, max_energy, max_time)):
        raise CliError("give --budget K or a cost budget (--max-cost, --max-sensors, "
                       "--max-energy, --max-time)")
    if dask is not None:
        if compress_labels is not None:
            raise CliError("--compress-labels does not apply with --dask")
        d = load_shards(data, **{k: v for k, v in load_options.items()
                                 if k != "max_drop_fraction"})
        task = d["task"] if task == "auto" else task
        est, shards, targets, extra = dask_estimator_for_task(task, d)
    else:
        d = load_training_data(data, **load_options)
        task = d["task"] if task == "auto" else task
        est, y, targets, extra = estimator_for_task(task, d["Y"], d["targets"])
    if standardize_targets and (task != "regression" or compress_labels is not None):
        raise CliError(f"--standardize-targets applies to regression targets without "
                       f"--compress-labels (task {task})")
    est.set_params(budget=budget, lam=lam, lam_search=lam_search,
                   standardize_targets=standardize_targets, fit_intercept=not no_intercept,
                   standardize=not no_standardize, dtype=dtype,
                   **estimator_kwargs_from_options(
                       max_sensors=max_sensors, max_cost=max_cost, max_energy=max_energy,
                       max_time=max_time, mode=mode, strategy=strategy, unit=unit,
                       feature_set=d["fs"], n_targets=len(targets), **board))
    training_rows, groups = {"X": d["X"]}, None
    if dask is None:
        groups = resolve_groups(load_options["groups"], d)
        warn_overlap(d, groups)
    if dask is not None:
        training_rows = {"X": None,
                         **fit_on_dask(est, shards, dask,
                                       progress=_progress("selecting", show_progress))}
    elif compress_labels is not None:
        fit_compressed(est, d, y, task, compress_labels, extra)
    else:
        with target_scale_warning(task, y, targets, standardize_targets):
            est.fit(d["X"], y, groups=groups, progress=_progress("selecting", show_progress))
    decision = decision_for(est, task, d, y if dask is None else None, groups, threshold_rule,
                            platt, dask)
    if task == "multiclass" and dask is None:
        column = d.get("class_column") or (targets[0] if len(targets) == 1 else None)
        targets = [f"{c:g}" if isinstance(c, float) else str(c) for c in est.classes_.tolist()]
        extra = {"classes": targets, **({"class_column": column} if column else {})}
    extractors, sensors, structure = d["structure"]
    meta, arrays = bundle_contents(est, features=d["features"], targets=targets, task=task,
                                   extractors=extractors, sensors=sensors,
                                   created_by=f"sensorbudget {__version__}",
                                   extra={**structure, **extra, "data": d["source"]},
                                   decision=decision, **training_rows)
    if meta.get("multi_rate"):
        from sensorbudget.trainer.sensing.rates import with_chosen_rates
        meta = with_chosen_rates(meta)
    meta = save_bundle(output, meta, arrays)
    if plot:
        write_plot(path_in_target_units(meta), plot, criterion=meta.get("criterion"))
    if html_out is not None:
        write_html(html_out, [output])
    click.echo(printable(format_path(meta)))
    for line in board_lines(meta, board["board"], board["numeric"]):
        click.echo(line)
    click.echo(f"wrote {output}" + (f" and {plot}" if plot else "")
               + (f" and {html_out}" if html_out else ""))


def fit_compressed(est, d, y, task, energy, extra):
    """Fit with the selection on SVD-compressed targets (``--compress-labels``)."""
    if task == "multiclass":
        raise CliError("--compress-labels applies to regression and multi-label targets")
    from sensorbudget.trainer.label_compression import fit_on_compressed_labels

    fit_on_compressed_labels(est, d["X"], y, energy)
    extra["label_compression"] = est.label_compression_


def load_training_data(data, *, targets, labels, xml, sep, decimal, ignore, na_value,
                       drop_missing, keep_missing_targets, groups, sensors_toml, window, hop,
                       compute_target, stream_format=None, targets_last=None,
                       max_drop_fraction=0.5):
    """X, Y, names, task, bundle structure and source of a feature table or of recordings."""
    from sensorbudget.trainer.data import file_info, load_table
    from sensorbudget.trainer.provenance import recordings_entry
    from sensorbudget.trainer.sensing.feature_set import FeatureSet, is_feature_file, load_feature_set

    fs = None
    if sensors_toml is not None:
        fs = load_feature_set(data, sensors_toml, window=window, hop=hop,
                              compute_target=compute_target, stream_format=stream_format)
        source = {**recordings_entry(data), "sensors": file_info(Path(sensors_toml))}
    elif Path(data).suffix.lower() == ".npz" and is_feature_file(data):
        fs = FeatureSet.load(data)
        source = file_info(Path(data))
    elif window is not None or hop is not None or stream_format not in (None, StreamFormat()):
        raise CliError("--window/--hop and the stream options (--time-column, --split-gaps, "
                       "...) apply to recordings given with --sensors")
    elif Path(data).is_dir():
        raise CliError(f"{str(data)!r} is a folder: recordings need --sensors sensors.toml "
                       f"(a feature table is one CSV, ARFF or NPZ file)")
    if fs is not None:
        if targets:
            raise CliError("--target does not apply to recordings; targets come from sensors.toml")
        return {"X": np.asarray(fs.X, dtype=np.float64), "Y": np.asarray(fs.Y, dtype=np.float64),
                "features": list(fs.feature_names), "targets": list(fs.target_names),
                "task": fs.task, "structure": fs.bundle_structure(), "source": source, "fs": fs}
    if groups == "recording":
        resolve_groups(groups, {"fs": None})      # raises: a table has no recordings
    table = load_table(data, targets=list(targets) or None, labels=labels, xml=xml, sep=sep,
                       decimal=decimal, ignore=tuple(ignore),
                       drop_missing=drop_missing and max_drop_fraction,
                       na_value=na_value, groups=group_column(groups),
                       keep_missing_targets=keep_missing_targets, targets_last=targets_last)
    if "time" in table.feature_names:
        warnings.warn(f"{Path(data).name}: the column 'time' is used as a feature; for a "
                      f"recording give --sensors sensors.toml (or --ignore time)", TrainerWarning)
    if table.dropped_rows:
        click.echo(table.missing.describe(), err=True)
    return {"X": table.X, "Y": table.Y, "features": table.feature_names,
            "targets": table.target_names, "task": table.task,
            "structure": (None, None, {}), "source": table.source, "fs": None,
            "groups": table.groups, "class_column": (table.class_target or (None,))[0]}


def estimator_for_task(task, Y, targets):
    """(unfitted estimator, y, target names, extra model.json keys) for a task.

    Multi-label: labels as +1/-1 scores (what GreedyRLSClassifier does, for any L >= 1).
    Multi-class: one target column of class values, or one-hot 0/1 columns named by class.
    """
    from sensorbudget.trainer import GreedyRLS, GreedyRLSClassifier
    from sensorbudget.trainer.selection.validation import check_targets

    if task != "multiclass":
        check_targets(Y, targets)            # a single-valued target, named (issue 16)
    if task == "regression":
        return GreedyRLS(), Y, targets, {}
    if task == "multilabel":
        for j, name in enumerate(targets):
            values = np.unique(Y[:, j][~np.isnan(Y[:, j])])
            if not np.isin(values, (0.0, 1.0)).all():
                bad = values[~np.isin(values, (0.0, 1.0))][0]
                raise CliError(f"task multilabel needs 0/1 labels; target column {name!r} holds "
                               f"{bad:g} ({values.size} distinct values): use --task regression")
        return GreedyRLS(), 2.0 * Y - 1.0, targets, {}
    if Y.shape[1] == 1:
        values = np.unique(Y[:, 0][~np.isnan(Y[:, 0])])
        if (values != np.round(values)).any() or values.size > max(20, len(Y) // 2):
            raise CliError(f"task multiclass needs class values; target column {targets[0]!r} "
                           f"holds {values.size} distinct values, e.g. {values[-1]:g}: use "
                           f"--task regression")
        return GreedyRLSClassifier(), Y[:, 0], targets, {}
    if not np.isin(Y, (0.0, 1.0)).all() or not (Y.sum(axis=1) == 1).all():
        raise CliError(f"multiclass with {Y.shape[1]} target columns needs one-hot 0/1 rows")
    names = np.asarray(targets)
    return GreedyRLSClassifier(), names[Y.argmax(axis=1)], targets, {}


def format_path(meta: dict) -> str:
    """The selection path of a bundle as a plain-text table (errors in the targets' units:
    :func:`sensorbudget.trainer.target_scaling.path_in_target_units`, as every other surface)."""
    scaled = bool(meta.get("target_scaling"))
    lines = [f"task={meta['task']}  targets={len(meta['targets'])}  lam={meta['lam']:.6g}  "
             f"features={len(meta['features'])}  selected={len(meta['selected'])}",
             f"{'step':>4}  {'added':<32} {criterion_label(meta):>12} "
             + (f"{'std. crit.':>10} " if scaled else "") + f"{'cost':>8}"]
    for entry in path_in_target_units(meta):
        added = ", ".join(entry["added"])
        lines.append(f"{entry['step']:>4}  {added[:32]:<32} {entry['loo_mse']:>12.6g} "
                     + (f"{entry['criterion_mse']:>10.4g} " if scaled else "")
                     + f"{entry['cost']:>8.4g}"
                     + ("  sensors at " + ", ".join(f"{s} {r:g} Hz" for s, r in
                                                    entry["rates_hz"].items())
                        if "rates_hz" in entry else ""))
    lines.append(f"{criterion_label(meta)}: the selection criterion on the training rows, "
                 f"in-sample (the same rows chose the features and lambda): optimistic; "
                 f"nested CV: sensorbudget evaluate"
                 + ("; in the targets' units (each target's MSE on standardised targets times "
                    "its variance); std. crit.: what the selection minimised, on standardised "
                    "targets (mean over targets of MSE / variance)" if scaled else ""))
    if meta.get("required_sensors"):
        rates = meta.get("sensor_rates_hz") or {}
        lines.append("required sensors: " + ", ".join(
            f"{s} at {rates[s]:g} Hz" if s in rates else s for s in meta["required_sensors"]))
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
