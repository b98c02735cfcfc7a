"""The console entry point (``sensorbudget``, ``python -m sensorbudget``): signal handlers
first, then the click group.

The handlers for SIGINT (Ctrl-C) and SIGTERM are installed before anything heavy is imported
(click, NumPy, scikit-learn: about 0.5 s of the start), so from then on an interrupt ends the
command with one line on stderr, ``Interrupted (SIGINT)``, and exit code 130 (SIGTERM: 143,
the shell's 128 + signal number), never a traceback:

- the first signal raises :class:`Interrupted`, a ``BaseException`` (so ``except Exception``
  does not swallow it): ``finally`` blocks and ``subprocess.run`` clean up as they unwind (a
  temporary folder is removed, a compiler or emulator child is killed);
- a second signal while unwinding, or one after the command has finished, exits at once (what
  an interrupted removal leaves carries a recognisable name and is removed by the next run:
  :mod:`trainer.bundle.manifest`).

This module imports nothing but the standard library's ``os``, ``signal`` and ``sys``.
"""

from __future__ import annotations

import os
import signal
import sys

#: exit code per signal: 128 + its number, as a shell reports a process it killed
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
_state = {"unwinding": False, "printed": False}


class Interrupted(BaseException):
    """Raised in the main thread by the first SIGINT or SIGTERM."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, RuntimeError, AttributeError):
            pass                             # closed, a broken pipe, or a reentrant call


def _exit(signum: int) -> None:
    """Print the one line and leave now (no interpreter shutdown, so no traceback from it).

    The handlers are set to SIG_IGN first: no handler runs after that (one pending from before
    is skipped), so a signal arriving while leaving can neither print a second line nor cut
    the first one off."""
    for other in EXIT_CODES:
        signal.signal(other, signal.SIG_IGN)
    if not _state["printed"]:
        _state["printed"] = True
        _flush()
        start = "\n" if os.isatty(2) else ""     # after a progress bar or the terminal's ^C
        try:
            os.write(2, f"{start}Interrupted ({signal.Signals(signum).name})\n".encode())
        except OSError:
            pass
    os._exit(EXIT_CODES[signum])


def _handler(signum, frame) -> None:
    if _state["unwinding"]:
        _exit(signum)
    _state["unwinding"] = True
    raise Interrupted(signum)


def install() -> None:
    """Install the handlers (main thread only; see the module notes)."""
    for signum in EXIT_CODES:
        signal.signal(signum, _handler)


def main() -> None:
    """Run the ``sensorbudget`` command line with the handlers installed first."""
    install()
    try:
        from .cli import main as cli

        cli(prog_name="sensorbudget")
    except Interrupted as exc:
        _exit(exc.signum)
    finally:
        _state["unwinding"] = True           # a signal from here on: one line, exit at once
