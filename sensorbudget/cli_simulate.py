"""``sensorbudget simulate | compare | calibrate``: replay on a device, compare, feed costs back."""

from __future__ import annotations

from pathlib import Path

import click

from sensorbudget.export.cgen import NUMERICS
from sensorbudget.firmware_gen.boards import (
    BOARD_NAMES,
    DEFAULT_BOARD,
    board_of_backend,
    measurers,
    names_where,
)

from ._errors import handle_errors
from .cli_firmware import parse_full_scale, rounding_notes
from .cli_report import check_html, html_option, write_html
from .text_out import printable

#: best, python and the board registry's measuring backends (each measures one board's image)
NAMED_BACKENDS = ("best", "python", *measurers())


class BackendType(click.ParamType):
    """A backend name, or ``serial:URL`` (any pyserial URL or port)."""

    name = "backend"

    def convert(self, value, param, ctx):
        if value in NAMED_BACKENDS or (value.startswith("serial:") and len(value) > 7):
            return value
        self.fail(f"{value!r} is not one of {', '.join(NAMED_BACKENDS)} or serial:URL", param, ctx)


class RateType(click.ParamType):
    """Samples per second (> 0), or ``recorded`` (the recordings' own rate)."""

    name = "rate"

    def convert(self, value, param, ctx):
        if value is None or value == "recorded" or isinstance(value, float):
            return value
        try:
            rate = float(value)
        except ValueError:
            self.fail(f"{value!r} is neither a number of samples per second nor 'recorded'",
                      param, ctx)
        if not rate > 0:
            self.fail(f"--rate={value} must be > 0", param, ctx)
        return rate


@click.command("simulate")
@click.argument("bundle_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--recordings", required=True, type=click.Path(exists=True, path_type=Path),
              help="Recordings to replay (file or directory, as for 'features').")
@click.option("--backend", type=BackendType(), default="python", show_default=True,
              help="python (op-count estimates), "
                   + ", ".join(f"{n} (the {b.name} image)" for n, (b, _) in measurers().items())
                   + ", serial:URL (a board: /dev/ttyACM0, socket://...), or best (the most "
                     "informative one available here); unicorn-* count the core only.")
@click.option("--numeric", type=click.Choice(NUMERICS), default="float32",
              show_default=True, help="Arithmetic of the model on the device.")
@click.option("--rate", type=RateType(), default=None,
              help="Replay pace in samples/s, or 'recorded'; default: as fast as possible.")
@click.option("--report", "report_dir", required=True, type=click.Path(path_type=Path),
              help="Directory to write report.json, summary.md and the plots into.")
@click.option("--battery-mah", type=click.FloatRange(min=0, min_open=True), default=1000.0,
              show_default=True, help="Battery capacity for the battery-life estimate.")
@click.option("--battery-v", type=click.FloatRange(min=0, min_open=True), default=3.7,
              show_default=True, help="Battery voltage.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds to wait for each answer before a retry [default: 0.5 python and "
                   "serial, 2 host, 5 QEMU, 10 simavr].")
@click.option("--retries", type=click.IntRange(min=0), default=4, show_default=True,
              help="Retransmissions of an unanswered request before it counts as lost.")
@click.option("--full-scale", "full_scale", multiple=True, callback=parse_full_scale,
              help="Fixed point: full scale of the Q15 samples, CHANNEL=VALUE or VALUE for every "
                   "channel (repeatable; default: the power of two above the channel's "
                   "largest |sample| in the training recordings, stored in the bundle).")
@click.option("--profile", type=click.Choice(BOARD_NAMES), default=None,
              help="The older name of --board.")
@click.option("--board", type=click.Choice(BOARD_NAMES), default=None,
              help="The board whose clock and power price the compute the backend measures "
                   "(measuring and costing are separate: --backend unicorn-m4f counts the "
                   f"{board_of_backend('unicorn-m4f').name} image's instructions, --board "
                   f"{names_where(lambda b: b.flashing.kind == 'cortex-m')} prices them as "
                   "that board) "
                   "[default: the board the backend's image is built for; python and serial: "
                   f"{DEFAULT_BOARD}]; 'sensorbudget targets' lists the boards.")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep the generated and compiled firmware here (default: a temporary dir).")
@click.option("--fft", type=click.Choice(("float32", "q15")), default="float32",
              show_default=True,
              help="Transform of the spectral features (q15/q31): q15 the integer Q15 FFT, as "
                   "'sensorbudget firmware --fft q15' builds it.")
@click.option("--progress", "show_progress", is_flag=True,
              help="Show the progress bar (elapsed, ETA) even when stderr is not a terminal.")
@html_option
@handle_errors
def simulate_command(bundle_dir, recordings, backend, numeric, rate, report_dir, battery_mah,
                     battery_v, timeout, retries, full_scale, profile, board, workdir,
                     fft="float32", show_progress=False, html_out=None):
    """Replay RECORDINGS through BUNDLE_DIR's firmware on a backend, compare every prediction
    with the Python reference, and write a cost report."""
    from sensorbudget.device_sim.api import check_simulation_output, simulate
    from sensorbudget.device_sim.report_text import rates_line

    from .progress import ProgressBar

    check_html(html_out)
    check_simulation_output(report_dir)          # before the replay
    sim = simulate(bundle_dir, recordings, backend=backend, numeric=numeric, rate=rate,
                   battery_wh=battery_mah * battery_v / 1000.0, workdir=workdir,
                   timeout=timeout, retries=retries, full_scale=full_scale, profile=profile,
                   board=board, fft=fft,
                   progress=ProgressBar("replaying (samples)", enabled=show_progress or None))
    sim.save(report_dir)
    report = sim.report
    click.echo(printable(format_outcome(report)))
    if rates_line(report):                      # sensors at their own rates
        click.echo(printable(rates_line(report)))
    click.echo(printable(sim.stack_line()))
    for line in sim.accuracy_lines():
        click.echo(printable(line))
    if numeric != "float32":
        for note in rounding_notes(full_scale):
            click.echo(note)
    click.echo(f"report: {report_dir / 'summary.md'}")
    if html_out is not None:
        write_html(html_out, [report_dir])
        click.echo(f"wrote {html_out}")
    if report["mismatches"]:
        raise click.ClickException(f"{report['mismatches']} of {report['predictions']} "
                                   f"predictions differ from the Python reference")


def format_outcome(report: dict) -> str:
    from sensorbudget.device_sim.report_text import arithmetic, compute_text

    c, e = report["cost"], report["energy"]
    return (f"{report['backend']} ({arithmetic(report)}): {report['predictions']} "
            f"predictions, "
            f"{report['delivered']} delivered, {report['retried']} retried, {report['lost']} "
            f"lost, {report['mismatches']} mismatches\n"
            f"{compute_text(c)}\n"
            f"energy per prediction (costed on {report['profile']['name']}): sensors "
            f"{_g(e['energy_per_prediction_j']['sensors'])} J, "
            f"compute {_g(e['energy_per_prediction_j']['compute'])} J; average power "
            f"{_g(e['average_power_w'])} W; battery life {_g(e['battery_life_days'])} days")


def _g(x) -> str:
    return "-" if x is None else f"{x:.4g}"


@click.command("compare")
@click.argument("side_a", type=click.Path(exists=True, path_type=Path))
@click.argument("side_b", type=click.Path(exists=True, path_type=Path))
@click.option("--markdown", is_flag=True, help="Print a Markdown table.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the table to this file.")
@html_option
@handle_errors
def compare_command(side_a, side_b, markdown, output, html_out=None):
    """Side-by-side cost/accuracy table of two simulation reports (or bundle directories),
    e.g. the full-sensor model against the budgeted one."""
    from sensorbudget.device_sim.api import compare

    check_html(html_out)
    comparison = compare(side_a, side_b)
    text = comparison.table(markdown=markdown)
    click.echo(printable(text))
    if output is not None:
        comparison.save(output, markdown=markdown)
    if html_out is not None:
        write_html(html_out, [side_a, side_b])
        click.echo(f"wrote {html_out}")


@click.command("calibrate")
@click.argument("reports", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--sensors", "sensors_toml", required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="sensors.toml to update with the measured costs.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the updated file here instead of replacing --sensors.")
@click.option("--allow-estimated", is_flag=True,
              help="Accept reports whose costs are estimated (python backend).")
@handle_errors
def calibrate_command(reports, sensors_toml, output, allow_estimated):
    """Write the per-extractor compute costs measured in REPORTS into a sensors.toml
    ([[calibration]] entries), so the next 'train' budgets with measured costs."""
    from sensorbudget.device_sim.api import calibrate

    done = calibrate(sensors_toml, reports, allow_estimated=allow_estimated)
    written = done.save(output)
    click.echo(f"wrote {len(done.entries)} calibration entr"
               f"{'y' if len(done.entries) == 1 else 'ies'} to {written}")
    if done.skipped:
        click.echo("not in the sensors file (skipped): " + ", ".join(done.skipped), err=True)
    if done.unmeasured:
        click.echo(f"not measured, op-count estimates kept or added ({len(done.unmeasured)}): "
                   + ", ".join(done.unmeasured), err=True)
