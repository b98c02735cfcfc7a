"""Turn library errors into one-line click errors (exit code 2, no traceback)."""

from __future__ import annotations

import functools

import click


class CliError(click.UsageError):
    """A usage/data error shown as ``Error: <message>`` with exit code 2 (no usage banner)."""

    def show(self, file=None):
        click.echo(f"Error: {self.format_message()}", err=True, file=file)


def library_errors():
    """The base error classes of every sensorbudget package (imported lazily)."""
    from trainer.errors import TrainerError
    classes = [TrainerError]
    for mod, name in (("export.errors", "ExportError"), ("firmware_gen.errors", "FirmwareGenError"),
                      ("device_sim.errors", "DeviceError")):
        try:
            module = __import__(mod, fromlist=[name])
            classes.append(getattr(module, name))
        except (ImportError, AttributeError):
            pass
    return tuple(classes)


def handle_errors(func):
    """Decorator: library errors and OSErrors become :class:`CliError` (exit 2, one line)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except library_errors() as exc:
            raise CliError(" ".join(str(exc).split())) from None
        except OSError as exc:
            where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
            raise CliError(f"{exc.strerror or exc}{where}") from None

    return wrapper
