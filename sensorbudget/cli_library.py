"""``sensorbudget export c-library``: the model as a C library for the user's own firmware
(thin click layer over :func:`sensorbudget.firmware_gen.api.library`; registered under
``export`` by :mod:`.cli`)."""

from __future__ import annotations

from pathlib import Path

import click

from sensorbudget.export.cgen import DEFAULT_NAME, NUMERICS

from ._errors import handle_errors
from .cli_export import BUNDLE_ARG
from .cli_firmware import (echo_bounds, echo_fft, echo_full_scales, echo_moved,
                           fft_option, force_option, input_summary, parse_full_scale)


@click.command("c-library")
@click.argument("bundle_dir", type=BUNDLE_ARG)
@click.option("-o", "--output", "out_dir", required=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write (CMake, make, Arduino, PlatformIO and Zephyr library).")
@click.option("--numeric", type=click.Choice(NUMERICS), default="float32", show_default=True,
              help="Arithmetic: float32 samples and scores, or Q15 samples with a Q15/Q31 model.")
@click.option("--name", default=DEFAULT_NAME, show_default=True,
              help="Library name: prefix of the API (<name>_init, <name>_push_sample, "
                   "<name>_ready, <name>_predict; multi-label: <name>_decide) and the CMake "
                   "target.")
@click.option("--full-scale", multiple=True, callback=parse_full_scale, metavar="[CHANNEL=]VALUE",
              help="Q15 full scale of a channel's samples (q15/q31; repeatable; without "
                   "CHANNEL= for every channel). Default: the power of two above the "
                   "largest |sample| of the channel in the training recordings (stored in "
                   "the bundle).")
@fft_option
@force_option
@handle_errors
def c_library_command(bundle_dir, out_dir, numeric, name, full_scale, fft, force):
    """Write BUNDLE_DIR as a C library for your own firmware: the model header, the streaming
    extractors and a four-call API, with no protocol, no main and no malloc."""
    from sensorbudget.firmware_gen.api import library

    lib = library(bundle_dir, numeric=numeric, name=name, full_scale=full_scale, fft=fft)
    echo_moved(out_dir, lib.save(out_dir, force=force))
    plan, m = lib.plan, lib.manifest
    click.echo(f"wrote {len(lib.files)} files to {out_dir}: library {name} ({numeric}), "
               f"{plan.k} features -> {plan.t} scores, {input_summary(plan)}, "
               f"{m['kernel']} kernel")
    if lib.task == "multilabel":
        click.echo(f"label decisions: {name}_decide(scores, decisions) with " + (
            f"the bundle's calibrated thresholds ({lib.decision_rule})" if lib.decision_rule
            else "threshold 0 (the bundle has no calibrated thresholds)"))
    click.echo(f"CMake: add_subdirectory({out_dir}) + target_link_libraries(app PRIVATE "
               f"{name}); make: include {out_dir / (name + '.mk')}; Arduino: examples/"
               f"{m['arduino_name']}; PlatformIO: library.json; Zephyr: zephyr/module.yml; "
               f"ESP-IDF: idf_component.yml")
    echo_full_scales(plan, full_scale)
    echo_fft(lib.manifest)
    echo_bounds(lib.manifest)
