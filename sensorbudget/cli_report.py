"""``sensorbudget report``: one interactive HTML page of bundles, evaluations, simulations and
built firmware; ``--html FILE`` on train, evaluate, simulate and compare writes the same page
of their runs."""

from __future__ import annotations

from pathlib import Path

import click

from sensorbudget.device_sim.api import DEFAULT_TITLE

from ._errors import handle_errors

#: ``--html FILE`` for the commands that also write the report of their own runs.
html_option = click.option(
    "--html", "html_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Also write the interactive HTML report of this run to FILE (sensorbudget[report]).")


def check_html(html_out) -> None:
    """Refuse early (before any long work or other output) when the page cannot be written:
    plotly missing, or the target a directory, device node, FIFO or link."""
    if html_out is not None:
        from sensorbudget.device_sim.api import check_report_output

        check_report_output(html_out)


def write_html(html_out, runs, *, evaluations=None, title: str = DEFAULT_TITLE) -> None:
    """Write the report of the run folders ``runs`` (plus in-memory ``evaluations``: {name:
    results.json dict}) to ``html_out`` atomically."""
    from sensorbudget.device_sim.api import report

    report(runs, title=title, evaluations=evaluations).save(html_out)


@click.command("report", short_help="One interactive HTML report of bundles, evaluations, "
                                    "simulations and firmware.")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The HTML file to write.")
@click.option("--title", default=DEFAULT_TITLE, show_default=True, help="Page title.")
@handle_errors
def report_command(runs, output, title):
    """Write one self-contained HTML page (plotly.js inline: no network needed to view it)
    of RUNS: bundle folders, evaluation reports (evaluate --report), simulation reports
    (simulate --report) and built firmware folders (firmware --build: flash and RAM). A
    simulation brings in the bundle it names when that still exists. The page opens on a
    summary of each bundle's chosen design (or an evaluation's best)."""
    write_html(output, list(runs), title=title)
    click.echo(f"wrote {output}")
