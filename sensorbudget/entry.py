"""The console entry point (``sensorbudget``, ``python -m sensorbudget``): signal handlers
first, then the click group.

The handlers for SIGINT (Ctrl-C) and SIGTERM are installed before anything heavy is imported
(click, NumPy, scikit-learn: about 0.5 s of the start), so from then on an interrupt ends the
command with one line on stderr, ``Interrupted (SIGINT)``, and exit code 130 (SIGTERM: 143,
the shell's 128 + signal number), never a traceback:

- the first signal raises :class:`Interrupted`, a ``BaseException`` (so ``except Exception``
  does not swallow it): ``finally`` blocks and ``subprocess.run`` clean up as they unwind (a
  temporary folder is removed, a compiler or emulator child is killed); raised where Python
  cannot pass an exception on (a ``__del__`` run by the garbage collector), it is raised again
  (:func:`_unraisable`) instead of being printed as 'Exception ignored' and forgotten;
  caught and dropped on its way up (a library's ``except BaseException``), or turned into
  another exception (Python 3.11 wraps one raised in a ``__set_name__`` during an import in a
  ``RuntimeError``), the command ends with the one line and 130/143 all the same;
- a second signal while unwinding, or one after the command has finished, exits at once (what
  an interrupted removal leaves carries a recognisable name and is removed by the next run:
  :mod:`sensorbudget.trainer.bundle.manifest`);
- once the command has finished, the interpreter's own exit runs (joining threads, the exit
  functions: Python code, so a signal there is the one line too), and the last exit function
  flushes the output and ends the process with the command's exit code. The interpreter's
  teardown after that (freeing modules, resetting the signal handlers to the defaults) is
  skipped: a signal in it was either never acted on (no Python code left to run the handler:
  exit 0, no line) or, once the defaults were back, killed the process without a line.

This module imports nothing but the standard library's ``atexit``, ``os``, ``signal`` and
``sys``.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys

#: exit code per signal: 128 + its number, as a shell reports a process it killed
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
_state = {"unwinding": False, "printed": False, "code": None, "pending": None,
          "signum": None}


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


def _in_set_name(frame) -> bool:
    """``frame`` runs inside a ``__set_name__`` (a class being defined): Python 3.11 turns an
    exception raised there into ``RuntimeError``, which ``except Exception`` around an import
    then swallows."""
    while frame is not None:
        if frame.f_code.co_name == "__set_name__":
            return True
        frame = frame.f_back
    return False


def _defer(signum) -> None:
    """Raise the interrupt a millisecond later (a SIGALRM), in the command's own code."""
    _state["unwinding"], _state["pending"] = False, signum
    signal.signal(signal.SIGALRM, _raise_pending)
    signal.setitimer(signal.ITIMER_REAL, 0.001)


def _handler(signum, frame) -> None:
    if _state["unwinding"]:
        _exit(signum)
    if hasattr(signal, "setitimer") and _in_set_name(frame):
        _defer(signum)
        return
    _state["unwinding"], _state["signum"] = True, signum
    raise Interrupted(signum)


def _raise_pending(alarm, frame) -> None:
    signum, _state["pending"] = _state["pending"], None
    if signum is not None:
        _handler(signum, frame)


def _unraisable(hook) -> None:
    """``sys.unraisablehook``: an :class:`Interrupted` raised where Python cannot pass it on
    (a ``__del__`` run by the garbage collector, a weakref or ctypes callback) would be printed
    as 'Exception ignored' and the command would go on as if no signal had come; instead it is
    raised again a millisecond later (a SIGALRM), in the command's own code."""
    if (isinstance(hook.exc_value, Interrupted) and not _state["printed"]
            and hasattr(signal, "setitimer")):
        _defer(hook.exc_value.signum)
        return
    _state["hook"](hook)


def install() -> None:
    """Install the handlers (main thread only; see the module notes)."""
    for signum in EXIT_CODES:
        signal.signal(signum, _handler)
    if sys.unraisablehook is not _unraisable:
        _state["hook"], sys.unraisablehook = sys.unraisablehook, _unraisable


def _leave() -> None:
    """The last exit function (registered first): flush, then end with the command's exit code
    without the interpreter's teardown (see the module notes). Only after :func:`main` saw the
    command end with an exit code; an uncaught exception (its traceback already printed) takes
    the interpreter's usual way out."""
    code = _state["code"]
    if code is None:
        return
    _flush()
    if hasattr(signal, "pthread_sigmask"):
        # from here a signal stays pending instead of arriving inside os._exit (where no Python
        # code is left to act on it); one that came before the mask is acted on now
        signal.pthread_sigmask(signal.SIG_BLOCK, set(EXIT_CODES))
        pending = signal.sigpending() & set(EXIT_CODES)
        if pending:
            _exit(min(pending))
    os._exit(code)


def main() -> None:
    """Run the ``sensorbudget`` command line with the handlers installed first.

    The handlers are installed inside the ``try``: a signal that lands the moment after the
    first one is set (a loaded machine can hold the process right there) raises
    :class:`Interrupted` where it is caught, not above it as a traceback."""
    try:
        install()
        atexit.register(_leave)              # before any other: so it runs last
        from .text_out import PrintableStream

        if sys.stdout is not None and not isinstance(sys.stdout, PrintableStream):
            sys.stdout = PrintableStream(sys.stdout)       # names from users' files and paths
        from .cli import main as cli

        cli(prog_name="sensorbudget")
    except Interrupted as exc:
        _exit(exc.signum)
    except SystemExit as exc:
        if _state["unwinding"]:              # the Interrupted was swallowed on its way up
            _exit(_state["signum"])
        if exc.code is None or isinstance(exc.code, int):
            _state["code"] = 0 if exc.code is None else exc.code & 0xFF
        raise
    except BaseException:
        if _state["unwinding"]:              # the Interrupted came back as another exception:
            _exit(_state["signum"])          # wrapped by Python (3.11: RuntimeError from a
        raise                                # __set_name__ it hit) or by a library
    finally:
        _state["unwinding"] = True           # a signal from here on: one line, exit at once
