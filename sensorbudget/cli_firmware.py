"""``sensorbudget firmware`` and ``sensorbudget flash``: generate, build and flash firmware."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from sensorbudget.export.cgen import DEFAULT_NAME, NUMERICS
from sensorbudget.firmware_gen.boards import ALIASES, names_where
from sensorbudget.firmware_gen.targets import TARGET_NAMES
from sensorbudget.trainer.bundle.files import check_folder_output

from ._errors import handle_errors
from .cli_export import BUNDLE_ARG


force_option = click.option(
    "--force", is_flag=True,
    help="Write even where OUTPUT holds files sensorbudget did not write (or changed): the "
         "folder is first moved aside whole to OUTPUT.moved-aside (never deleted).")


def echo_moved(out_dir, moved) -> None:
    """Say where ``--force`` moved a foreign output folder."""
    if moved is not None:
        click.echo(f"moved the earlier {out_dir} (files sensorbudget did not write) aside to "
                   f"{moved}", err=True)


fft_option = click.option(
    "--fft", type=click.Choice(("float32", "q15")), default="float32", show_default=True,
    help="Transform of the spectral features (q15/q31 with bandpower, bandratio, domfreq, "
         "centroid or entropy on a raw window): q15 runs the integer Q15 FFT (each window "
         "block-normalised, then scaled per stage like CMSIS-DSP's arm_rfft_q15: no "
         "soft-float FFT on cores without an FPU), less exact than float32, the float FFT "
         "on the Q15 samples (docs/extractors.md).")


def echo_fft(manifest: dict) -> None:
    """Say which spectra read the Q15 FFT (nothing for the float32 transform)."""
    if manifest.get("fft", "float32") != "float32":
        click.echo(f"spectra from the Q15 FFT (--fft {manifest['fft']}; less exact than "
                   f"float32): {', '.join(manifest['fft_spectra'])}")


def parse_full_scale(ctx, param, values) -> dict:
    """``--full-scale acc_x=16 --full-scale 8`` -> {"acc_x": 16.0, "*": 8.0}."""
    out = {}
    for text in values:
        channel, _, value = text.rpartition("=")
        try:
            number = float(value)
        except ValueError:
            raise click.BadParameter(f"{text!r} is not [CHANNEL=]NUMBER", ctx, param) from None
        if not number > 0 or number == float("inf"):
            raise click.BadParameter(f"{text!r}: the full scale must be a positive number",
                                     ctx, param)
        out[channel or "*"] = number
    return out


def rounding_notes(full_scale, channels=None) -> list:
    """The ``--full-scale`` values used as the next power of two above them
    (:func:`sensorbudget.firmware_gen.api.full_scale_roundings`), as lines, e.g. ``--full-scale
    8000 for acc_x is used as 8192``."""
    from sensorbudget.firmware_gen.api import full_scale_roundings

    return [f"--full-scale {value:g} for {'every channel' if channel == '*' else channel} is "
            f"used as {used:g} (full scales are powers of two)"
            for channel, value, used in full_scale_roundings(full_scale, channels)]


@click.command("firmware")
@click.argument("bundle_dir", type=BUNDLE_ARG)
@click.option("--target", type=click.Choice(TARGET_NAMES), required=True,
              help=f"Boards: {names_where(lambda b: b.flashing.tools)}. Emulation only: "
                   f"{names_where(lambda b: b.mcu and b.flashing.kind == 'none')}. Not flashed "
                   f"by sensorbudget: {names_where(lambda b: b.flashing.kind == 'manual')}. "
                   f"host (gcc, stdin/stdout). Old names: {', '.join(ALIASES)}. 'sensorbudget "
                   f"targets' lists them with their parts, limits and power.")
@click.option("--numeric", type=click.Choice(NUMERICS), default="float32",
              show_default=True, help="Model arithmetic: float32, or fixed point (Q15 samples; "
                                      "Q15 or Q31 model).")
@click.option("-o", "--output", "out_dir", required=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Directory for the sources (and, with --build, the binaries).")
@click.option("--name", default=DEFAULT_NAME, show_default=True,
              help="Prefix of every generated C symbol.")
@click.option("--full-scale", multiple=True, callback=parse_full_scale,
              metavar="[CHANNEL=]VALUE",
              help="Q15 full scale of a channel's samples (q15/q31; repeatable; without "
                   "CHANNEL= for every channel). Default: the power of two above the "
                   "largest |sample| of the channel in the training recordings (stored in "
                   "the bundle).")
@click.option("--kernel", type=click.Choice(("auto", "loop", "unrolled")), default="auto",
              show_default=True, help="Model kernel: unrolled straight-line code with constant "
                                      "weights, or the header's loop (auto: unrolled up to "
                                      "256 multiply-adds).")
@click.option("--build", "do_build", is_flag=True,
              help="Compile (.elf/.hex/.bin for MCUs) and report flash and RAM per section.")
@fft_option
@force_option
@handle_errors
def firmware_command(bundle_dir, target, numeric, out_dir, name, full_scale, kernel, do_build,
                     fft, force):
    """Generate firmware for BUNDLE_DIR: the model header, streaming extractors, a main loop
    speaking the framed serial protocol, the target's startup/HAL and a Makefile."""
    from sensorbudget.firmware_gen.api import FIRMWARE_KIND, firmware

    if not force:
        check_folder_output(out_dir, kind=FIRMWARE_KIND)     # before a long build
    fw = firmware(bundle_dir, target=target, numeric=numeric, name=name,
                  full_scale=full_scale, kernel=kernel, build=do_build, fft=fft)
    echo_moved(out_dir, fw.save(out_dir, force=force))
    plan, m = fw.plan, fw.manifest
    click.echo(f"wrote {len(fw.files)} files to {out_dir}: {target}, {numeric}, {plan.k} "
               f"features -> {plan.t} scores, {input_summary(plan)}, {m['kernel']} kernel")
    echo_full_scales(plan, full_scale)
    echo_fft(m)
    echo_bounds(m)
    if do_build:
        _report_build(out_dir, fw)


def _report_build(out_dir: Path, fw) -> None:
    from sensorbudget.firmware_gen.build import FOOTPRINT, format_footprint

    fp = fw.footprint
    click.echo(format_footprint(fp))
    for warning in fp.get("warnings", []):
        click.echo(f"Warning: {warning}", err=True)
    click.echo(f"built {', '.join(fp['artifacts'].values())}; footprint in {out_dir / FOOTPRINT}")
    if fw.is_avr:
        if fw.harness_error is None:
            click.echo(f"simulate: {out_dir / 'sbfw_simavr'} {out_dir / 'firmware.elf'}")
        else:
            click.echo(f"(simavr harness not built: {fw.harness_error})", err=True)
    elif fw.target != "host" and not fw.manifest["run"]:
        click.echo("run: no emulator runs this part here; flash it, or cost its functions with "
                   "'sensorbudget simulate --backend unicorn-rv32ec'")
    elif fw.target != "host":
        click.echo("run: " + shlex.join(fw.manifest["run"]) + f" (in {out_dir})")


@click.command("flash")
@click.argument("out_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--port", default=None,
              help="An AVR board (the Uno): its serial port (/dev/ttyACM0, net:HOST:PORT). A "
                   "Nucleo-64 or HiFive1: the mount point of its USB drive (a copy), or the "
                   "ST-LINK serial (st-flash) / probe id (pyocd).")
@click.option("--programmer", type=click.Choice(("auto", "avrdude", "st-flash", "pyocd",
                                                 "openocd", "copy", "jlink")),
              default="auto", show_default=True,
              help="auto: avrdude for the Uno; for the Nucleo a copy to --port if it is a "
                   "directory, else st-flash, pyocd or OpenOCD (the first installed); for the "
                   "HiFive1 a copy of the .hex to --port (its J-Link drive), else OpenOCD or "
                   "J-Link Commander (JLinkExe).")
@click.option("--baud", type=click.IntRange(min=1), default=115200, show_default=True,
              help="Bootloader baud rate (AVR; Arduino Uno optiboot: 115200).")
@click.option("--chip", default=None, help="Cortex-M: pyocd target name [default: stm32f401re] "
                                           "or OpenOCD target/<CHIP>.cfg [default: the "
                                           "board/st_nucleo_f4.cfg script].")
@click.option("--avrdude-programmer", default="arduino", show_default=True,
              help="avrdude -c programmer (arduino = STK500v1 serial bootloader).")
@click.option("--openocd-config", default=None,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="OpenOCD board configuration file (replaces --chip).")
@click.option("--dry-run", is_flag=True, help="Print what would be done, do not flash.")
@handle_errors
def flash_command(out_dir, port, programmer, baud, chip, avrdude_programmer, openocd_config,
                  dry_run):
    """Flash the firmware built in OUT_DIR (by 'sensorbudget firmware --build') onto a board."""
    from sensorbudget.firmware_gen.flash import flash, flash_plan

    options = dict(port=port, programmer=programmer, baud=baud, chip=chip,
                   avrdude_programmer=avrdude_programmer, openocd_config=openocd_config)
    plan = flash_plan(out_dir, **options)
    what = shlex.join(plan.argv) if plan.argv else f"cp {plan.source} {plan.destination}"
    if dry_run:
        click.echo(f"would run: {what}")
        return
    click.echo(f"{plan.message}: {what}")
    flash(out_dir, **options)
    click.echo("done")


def input_summary(plan) -> str:
    """What the generated code reads: the feature vector, or the extractors over channels."""
    if plan.input_kind == "features":
        return f"input: the {plan.k} selected features (one prediction per feature vector)"
    if getattr(plan, "groups", None):       # multi-rate (firmware_gen.multirate)
        return plan.summary
    return (f"{len(plan.extractors)} extractors on {len(plan.channels)} channels "
            f"({', '.join(plan.channels)}), window {plan.window}, hop {plan.hop}")


def echo_bounds(manifest: dict) -> None:
    """The fixed-point error bounds of a firmware or library manifest (nothing for float32)."""
    if manifest.get("stream_error_bound") is not None:
        click.echo(f"fixed-point error bound ({manifest['numeric']}): |score - float model| <= "
                   f"{manifest['error_bound']:.2g} for features in the training ranges, <= "
                   f"{manifest['stream_error_bound']:.2g} from samples within the full scales "
                   f"(Q15 samples and integer extractors included)")


def echo_full_scales(plan, full_scale) -> None:
    """Fixed point: the Q15 full scale of every channel, and notes on the rounding of
    ``--full-scale`` values (nothing for float32)."""
    if plan.full_scale is None:
        return
    click.echo("Q15 sample full scales: " + ", ".join(
        f"{c}={v:g}" for c, v in zip(plan.channels, plan.full_scale)))
    for note in rounding_notes(full_scale, plan.channels):
        click.echo(note)
