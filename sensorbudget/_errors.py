"""Turn library errors into one-line click errors (exit code 2, no traceback)."""

from __future__ import annotations

import functools
import warnings

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


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """The library's own warnings (:class:`trainer.errors.TrainerWarning` and subclasses) as
    one ``Warning: ...`` line on stderr; any other warning as Python shows it."""
    from trainer.errors import TrainerWarning

    if issubclass(category, TrainerWarning):
        click.echo(f"Warning: {' '.join(str(message).split())}", err=True)
    else:
        click.echo(warnings.formatwarning(message, category, filename, lineno, line).rstrip(),
                   err=True)


def handle_errors(func):
    """Decorator: library errors and OSErrors become :class:`CliError` (exit 2, one line);
    the library's warnings are shown as ``Warning: ...`` lines."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _show_warning
                return func(*args, **kwargs)
        except library_errors() as exc:
            raise CliError(" ".join(str(exc).split())) from None
        except OSError as exc:
            where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
            raise CliError(f"{exc.strerror or exc}{where}") from None

    return wrapper
