"""Turn library errors into one-line click errors (exit code 2, no traceback).

Every error the command line shows is one ``Error: ...`` line on stderr with exit code 2: the
library's errors and OSErrors (:func:`handle_errors`) and click's own usage errors for a bad
option value or a missing argument (:class:`OneLineGroup`, without the usage banner above
them). Warnings are ``Warning: ...`` lines; a warning from outside the library (numpy's
``RuntimeWarning``) is held back and shown only when the command succeeds, so that nothing
precedes an ``Error:`` line. Names in these lines are shown with their control characters
escaped (:func:`sensorbudget.text_out.printable`).
"""

from __future__ import annotations

import functools
import warnings

import click

from .text_out import printable


class CliError(click.UsageError):
    """A usage/data error shown as ``Error: <message>`` with exit code 2 (no usage banner)."""

    def show(self, file=None):
        click.echo(f"Error: {printable(self.format_message(), keep_newlines=False)}", err=True,
                   file=file)


class OneLineGroup(click.Group):
    """A click group whose usage errors (a bad option value such as ``--budget 1e3``, an
    unknown option, a missing argument) are one ``Error: ...`` line, exit code 2, naming the
    command's ``--help`` instead of printing the usage banner above the error."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            raise _one_line(exc) from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise _one_line(exc) from None


def _one_line(exc: click.UsageError) -> click.UsageError:
    """``exc`` as a :class:`CliError` (the group's own "no command given" help is kept)."""
    if isinstance(exc, (CliError, click.exceptions.NoArgsIsHelpError)):
        return exc
    where = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
    return CliError(" ".join(exc.format_message().split()).rstrip(".") + where)


def library_errors():
    """The base error classes of every sensorbudget package (imported lazily)."""
    from sensorbudget.trainer.errors import TrainerError
    classes = [TrainerError]
    for mod, name in (("sensorbudget.export.errors", "ExportError"),
                      ("sensorbudget.firmware_gen.errors", "FirmwareGenError"),
                      ("sensorbudget.device_sim.errors", "DeviceError")):
        try:
            module = __import__(mod, fromlist=[name])
            classes.append(getattr(module, name))
        except (ImportError, AttributeError):
            pass
    return tuple(classes)


def _warning_line(message, category) -> str:
    """One ``Warning: ...`` line: the library's own warnings (:class:`TrainerWarning` and
    subclasses) by their text, any other warning with its category."""
    from sensorbudget.trainer.errors import TrainerWarning

    text = " ".join(str(message).split())
    if not issubclass(category, TrainerWarning):
        text = f"{category.__name__}: {text}"
    return f"Warning: {printable(text, keep_newlines=False)}"


def handle_errors(func):
    """Decorator: library errors and OSErrors become :class:`CliError` (exit 2, one line);
    the library's warnings are shown as ``Warning: ...`` lines as they come, other warnings
    (numpy's ``RuntimeWarning``) after the command succeeds and not at all when it fails."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from sensorbudget.trainer.errors import TrainerWarning

        held = []

        def show(message, category, filename, lineno, file=None, line=None):
            text = _warning_line(message, category)
            if issubclass(category, TrainerWarning):
                click.echo(text, err=True)
            elif text not in held:
                held.append(text)

        try:
            with warnings.catch_warnings():
                warnings.showwarning = show
                result = func(*args, **kwargs)
        except library_errors() as exc:
            raise CliError(" ".join(str(exc).split())) from None
        except OSError as exc:
            where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
            raise CliError(f"{exc.strerror or exc}{where}") from None
        for text in held:
            click.echo(text, err=True)
        return result

    return wrapper
