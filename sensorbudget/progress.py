"""A progress bar on stderr with elapsed time and an estimate of the time left.

Driven by ``bar(done, total)`` callbacks (what the library's ``progress=`` hooks call). Quiet
when the stream is not a terminal, unless ``enabled=True`` (the commands' ``--progress``).
The clock is injected, so tests can drive it without waiting.
"""

from __future__ import annotations

import sys
import time


def clock_text(seconds: float) -> str:
    """m:ss (h:mm:ss from an hour on)."""
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def rate_text(per_second: float) -> str:
    """A rate with 3 significant digits and a k/M suffix: 950, 12.3k, 1.25M."""
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if per_second >= scale:
            return f"{per_second / scale:.3g}{suffix}"
    return f"{per_second:.3g}"


class ProgressBar:
    """``label [#####.....] done/total pct rate/s elapsed m:ss ETA m:ss`` redrawn in place.

    The rate is done / elapsed (units of ``done`` per second since the first call) and the
    estimate elapsed * (total - done) / done (the rate so far). Redrawn at most every
    ``min_interval`` seconds and at the end, when the line is closed with a newline.
    """

    def __init__(self, label: str, *, enabled=None, stream=None, clock=time.monotonic,
                 width: int = 24, min_interval: float = 0.2):
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", lambda: False)
        self.enabled = bool(isatty()) if enabled is None else bool(enabled)
        self.label, self.clock, self.width, self.min_interval = label, clock, width, min_interval
        self.start = None
        self.last_draw = None
        self.closed = False

    def line(self, done: int, total: int) -> str:
        elapsed = self.clock() - self.start
        frac = min(1.0, done / total) if total else 1.0
        fill = int(round(frac * self.width))
        eta = clock_text(elapsed * (total - done) / done) if 0 < done < total else (
            "0:00" if done >= total else "?")
        rate = f" {rate_text(done / elapsed)}/s" if done and elapsed > 0 else ""
        return (f"{self.label} [{'#' * fill}{'.' * (self.width - fill)}] {done}/{total} "
                f"{100 * frac:3.0f}%{rate} elapsed {clock_text(elapsed)} ETA {eta}")

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or self.closed:
            return
        now = self.clock()
        if self.start is None:
            self.start = now
        finished = total and done >= total
        if (not finished and self.last_draw is not None
                and now - self.last_draw < self.min_interval):
            return
        self.last_draw = now
        self.stream.write("\r" + self.line(done, total) + ("\n" if finished else ""))
        self.stream.flush()
        self.closed = bool(finished)

    def close(self) -> None:
        """End the line if the bar was drawn but never reached its total."""
        if self.enabled and self.last_draw is not None and not self.closed:
            self.stream.write("\n")
            self.stream.flush()
        self.closed = True
