"""Rows with missing values: which to drop, what dropping them costs, and when to refuse.

A table with missing values (NaN, inf, or a sentinel turned into NaN) is an error unless the
caller allows dropping rows (``drop_missing``): ``True`` allows up to
:data:`DEFAULT_MAX_DROP_FRACTION` of the rows, a number in (0, 1] allows up to that fraction.
Dropping more is refused with the counts, because a model trained on the few complete rows of a
mostly-missing column is rarely what was meant (leave such a column out instead: ``--ignore``).

:class:`MissingReport` says how many rows were read, how many were dropped, the fraction, and
for every column with a missing value the number of rows where it is missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import DataError

DEFAULT_MAX_DROP_FRACTION = 0.5


@dataclass(frozen=True)
class MissingReport:
    """What dropping rows with missing values did: ``rows`` read, ``dropped`` rows, and
    ``per_column`` {column: rows where it is missing} (columns in table order, zeros left out).
    """

    rows: int = 0
    dropped: int = 0
    per_column: dict = field(default_factory=dict)

    @property
    def fraction(self) -> float:
        """dropped / rows (0 for an empty table)."""
        return self.dropped / self.rows if self.rows else 0.0

    def columns(self) -> str:
        """"missing per column: NMHC(GT) 914, CO(GT) 200" (empty without missing cells)."""
        if not self.per_column:
            return ""
        return "missing per column: " + ", ".join(
            f"{name} {count}" for name, count in self.per_column.items())

    def describe(self) -> str:
        """One line: "dropped 994 of 1142 rows (87.0 %) with missing values; missing per
        column: NMHC(GT) 914, CO(GT) 200"."""
        return "; ".join(filter(None, [
            f"dropped {self.dropped} of {self.rows} rows ({100 * self.fraction:.1f} %) with "
            f"missing values", self.columns()]))


def max_drop_fraction(drop_missing) -> float:
    """The largest fraction of rows ``drop_missing`` allows to drop: 0 for False/None,
    :data:`DEFAULT_MAX_DROP_FRACTION` for True, else the number itself (0 < f <= 1)."""
    if drop_missing is None or drop_missing is False:
        return 0.0
    if drop_missing is True:
        return DEFAULT_MAX_DROP_FRACTION
    value = float(drop_missing)
    if not 0.0 < value <= 1.0:
        raise DataError(f"the largest fraction of rows to drop is {value!r}; it must be in "
                        f"(0, 1]")
    return value


def missing_report(missing, bad_rows, names) -> MissingReport:
    """The report for the n x c boolean matrix ``missing`` (cell missing), the rows to drop
    ``bad_rows`` (n,) and the column ``names`` (c): per column the count of missing cells."""
    counts = np.asarray(missing, dtype=bool).sum(axis=0)
    per_column = {str(name): int(c) for name, c in zip(names, counts) if c}
    return MissingReport(rows=int(len(bad_rows)), dropped=int(np.sum(bad_rows)),
                         per_column=per_column)


def check_drop(report: MissingReport, drop_missing) -> None:
    """Raise :class:`DataError` when ``report``'s rows may not be dropped: rows are missing and
    dropping is off, or the dropped fraction is above the allowed one (naming both)."""
    if not report.dropped:
        return
    limit = max_drop_fraction(drop_missing)
    if report.fraction > limit and limit > 0:
        raise DataError(f"dropping the rows with missing values would drop {report.dropped} "
                        f"of {report.rows} rows ({100 * report.fraction:.1f} %), more than the "
                        f"largest fraction {limit:g} (--max-drop-fraction); "
                        f"{report.columns()}; leave mostly-missing columns out (--ignore) or "
                        f"raise --max-drop-fraction (up to 1)")
