"""The numeric format of generated model code: one typed noun for ``float32``, ``q15``, ``q31``.

:class:`Numeric` is a ``str`` enum, so a member equals its name (``Numeric.Q15 == "q15"``), is
written to JSON as that name and keys the same dictionaries; the JSON boundary needs no
conversion. ``Numeric.parse`` is the one check of a user's value.
"""

from __future__ import annotations

import enum

from .errors import ExportError
from .fixed_point import FORMATS, QFormat


class Numeric(str, enum.Enum):
    """float32, or the fixed-point Q15 / Q31 integers of :mod:`sensorbudget.export.fixed_point`."""

    FLOAT32 = "float32"
    Q15 = "q15"
    Q31 = "q31"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @classmethod
    def parse(cls, value) -> Numeric:
        """``value`` (a name or a member) as a member; one clear error otherwise."""
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise ExportError(f"numeric={value!r} is not one of {names}") from None

    @property
    def fixed(self) -> bool:
        """Integer (fixed-point) arithmetic."""
        return self is not Numeric.FLOAT32

    @property
    def qformat(self) -> QFormat | None:
        """The fixed-point format (widths and C types); None for float32."""
        return FORMATS.get(self.value)

    @property
    def ctype(self) -> str:
        """C type of the model's inputs, weights and scores."""
        return "float" if self.qformat is None else self.qformat.ctype


#: The names, in the order the CLI offers them.
NUMERICS = tuple(m.value for m in Numeric)
