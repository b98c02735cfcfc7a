"""``sensorbudget export``: write a bundle as an ONNX model or a C header (thin click layer;
``export c-library`` is in :mod:`.cli_library`)."""

from __future__ import annotations

import click

from sensorbudget.export.cgen import DEFAULT_NAME, NUMERICS

from ._errors import handle_errors

BUNDLE_ARG = click.Path(exists=True, file_okay=False, dir_okay=True)
OUTPUT_OPT = click.Path(dir_okay=False, writable=True)


@click.group("export")
def export_group():
    """Export a bundle as deployable model files (ONNX, C header)."""


@export_group.command("onnx")
@click.argument("bundle_dir", type=BUNDLE_ARG)
@click.option("-o", "--output", required=True, type=OUTPUT_OPT, help="ONNX file to write.")
@click.option("--inputs", type=click.Choice(("all", "selected")), default="all", show_default=True,
              help="Model input: the full candidate feature vector, or only the selected "
                   "features in selection order (what a device computes).")
@click.option("--dtype", type=click.Choice(("float32", "float64")), default="float32",
              show_default=True, help="Element type of the input, weights and scores.")
@click.option("--opset", type=int, default=13, show_default=True,
              help="Highest ai.onnx opset the model may use (13 runs on older runtimes).")
@handle_errors
def onnx_command(bundle_dir, output, inputs, dtype, opset):
    """Write BUNDLE_DIR as an ONNX model with its required extractors and sensors as metadata."""
    from sensorbudget.firmware_gen.api import onnx_model

    model = onnx_model(bundle_dir, inputs=inputs, dtype=dtype, opset=opset)
    model.save(output)
    click.echo(f"wrote {output} ({len(model.data)} bytes): ONNX opset {model.opset}, "
               f"{dtype}, input features[N, {model.width}] ({inputs}), outputs "
               f"{', '.join(model.outputs)}")


@export_group.command("c-header")
@click.argument("bundle_dir", type=BUNDLE_ARG)
@click.option("-o", "--output", required=True, type=OUTPUT_OPT, help="C header file to write.")
@click.option("--name", default=DEFAULT_NAME, show_default=True,
              help="Prefix of every C symbol (<name>_predict, <NAME>_N_FEATURES).")
@click.option("--numeric", type=click.Choice(NUMERICS), default="float32",
              show_default=True, help="Arithmetic: float32, or fixed point with int16/int32 "
                                      "inputs and weights.")
@handle_errors
def c_header_command(bundle_dir, output, name, numeric):
    """Write BUNDLE_DIR as a self-contained C99 header (static weights, predict functions)."""
    from sensorbudget.firmware_gen.api import c_header

    made = c_header(bundle_dir, name=name, numeric=numeric)
    made.save(output)
    header = made.header
    click.echo(f"wrote {output}: {name}_predict{'' if header.fixed is None else '_' + numeric}, "
               f"{numeric}, {made.n_features} features, {made.n_targets} targets")
    if header.fixed is not None:
        fx = header.fixed
        click.echo(f"fixed-point error bound ({numeric}): |score - float model| <= "
                   f"{header.error_bound:.2g} over the training input ranges (|score| up to "
                   f"{fx.score_max:.3g}; score = score_q * 2^-{fx.score_frac_bits})")
