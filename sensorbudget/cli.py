"""The ``sensorbudget`` command line: a thin click layer over the library packages."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from . import __version__
from ._errors import CliError, handle_errors

TASKS = ("auto", "regression", "multilabel", "multiclass")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sensorbudget")
def main():
    """Budgeted sensor selection with greedy RLS: recordings -> model -> firmware."""


def _progress(total_label):
    """A click progress bar on stderr driven by ``tick(done, total)`` callbacks."""
    state = {"bar": None}

    def tick(done, total):
        if state["bar"] is None:
            state["bar"] = click.progressbar(length=total, label=total_label, file=sys.stderr)
            state["bar"].__enter__()
        bar = state["bar"]
        bar.update(done - bar.pos)
        if done >= total:
            bar.__exit__(None, None, None)

    return tick


@main.command("train")
@click.argument("data", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--budget", "-k", type=int, required=True, help="Number of features to select.")
@click.option("--target", "targets", multiple=True, help="Target column name (repeatable).")
@click.option("--labels", type=int, default=None,
              help="The last L columns are 0/1 labels (Mulan multi-label).")
@click.option("--xml", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Mulan XML file naming the label columns.")
@click.option("--task", type=click.Choice(TASKS), default="auto", show_default=True,
              help="Learning task; auto = multilabel for --labels/--xml, else regression.")
@click.option("--lam", type=float, default=None,
              help="Ridge parameter; default: chosen by LOO over 2^-15..2^15.")
@click.option("--no-intercept", is_flag=True, help="Fit without an intercept.")
@click.option("--no-standardize", is_flag=True, help="Do not scale features to unit variance.")
@click.option("--sep", default=None, help="CSV field separator [default: ','].")
@click.option("--decimal", default=None, help="CSV decimal mark, e.g. ',' [default: '.'].")
@click.option("--ignore", multiple=True, help="Column to leave out of the features (repeatable).")
@click.option("--na-value", type=float, default=None,
              help="A number that marks a missing value (e.g. -200).")
@click.option("--drop-missing", is_flag=True,
              help="Drop rows with a missing/non-finite value instead of failing.")
@click.option("--dtype", type=click.Choice(("float64", "float32")), default="float64",
              show_default=True, help="Precision of the working arrays.")
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True,
              help="Bundle directory to write (model.json + weights.npz).")
@handle_errors
def train_command(data, budget, targets, labels, xml, task, lam, no_intercept, no_standardize,
                  sep, decimal, ignore, na_value, drop_missing, dtype, output):
    """Select features from DATA (CSV, ARFF or NPZ feature table) and write a model bundle."""
    from trainer import GreedyRLS, GreedyRLSClassifier
    from trainer.bundle import bundle_contents, save_bundle
    from trainer.data import load_table

    if budget is not None and budget <= 0:
        raise CliError(f"--budget={budget} must be at least 1")
    table = load_table(data, targets=list(targets) or None, labels=labels, xml=xml, sep=sep,
                       decimal=decimal, ignore=tuple(ignore), drop_missing=drop_missing,
                       na_value=na_value)
    if budget > table.X.shape[1]:
        raise CliError(f"--budget={budget} exceeds the number of features {table.X.shape[1]}")
    task = table.task if task == "auto" else task
    params = dict(budget=budget, lam=lam, fit_intercept=not no_intercept,
                  standardize=not no_standardize, dtype=dtype)
    if table.dropped_rows:
        click.echo(f"dropped {table.dropped_rows} row(s) with missing values", err=True)
    extra = {"data": table.source}
    if task == "regression":
        est, y, names = GreedyRLS(**params), table.Y, table.target_names
    elif task == "multilabel":
        # Labels as +1/-1 scores: the same problem GreedyRLSClassifier solves, for any L >= 1.
        est, y, names = GreedyRLS(**params), 2.0 * table.Y - 1.0, table.target_names
    else:
        if table.Y.shape[1] != 1:
            raise CliError(f"multiclass needs exactly one target column ({table.Y.shape[1]} given)")
        est, y = GreedyRLSClassifier(**params), table.Y[:, 0]
    est.fit(table.X, y, progress=_progress("selecting"))
    if task == "multiclass":
        names = [f"{table.target_names[0]}={c:g}" for c in est.classes_]
        extra["classes"] = [float(c) for c in est.classes_]
    meta, arrays = bundle_contents(est, table.X, table.feature_names, names, task=task,
                                   created_by=f"sensorbudget {__version__}", extra=extra)
    meta = save_bundle(output, meta, arrays)
    click.echo(format_path(meta))
    click.echo(f"wrote {output}")


def format_path(meta: dict) -> str:
    """The selection path of a bundle as a plain-text table."""
    lines = [f"task={meta['task']}  targets={len(meta['targets'])}  lam={meta['lam']:.6g}  "
             f"features={len(meta['features'])}  selected={len(meta['selected'])}",
             f"{'step':>4}  {'added':<32} {'LOO MSE':>12} {'cost':>8}"]
    for entry in meta["path"]:
        added = ", ".join(entry["added"])
        lines.append(f"{entry['step']:>4}  {added[:32]:<32} {entry['loo_mse']:>12.6g} "
                     f"{entry['cost']:>8.4g}")
    if meta.get("required_sensors"):
        lines.append("required sensors: " + ", ".join(meta["required_sensors"]))
    return "\n".join(lines)


@main.command("info")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@handle_errors
def info_command(path):
    """Describe a bundle directory (selection path) or an exported model.onnx (metadata)."""
    if path.suffix.lower() == ".onnx":
        import export

        click.echo(export.describe_onnx(path))
        return
    from trainer.bundle import load_bundle

    click.echo(format_path(load_bundle(path).meta))


def _register_optional_commands():
    """Commands defined next to this module by the other packages' CLI files."""
    import importlib

    for module, attr in (("cli_features", "features_command"), ("cli_export", "export_group")):
        try:
            mod = importlib.import_module(f"{__package__}.{module}")
        except ImportError:
            continue
        main.add_command(getattr(mod, attr))


_register_optional_commands()
