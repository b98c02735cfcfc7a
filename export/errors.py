"""The export package's single exception."""


class ExportError(ValueError):
    """Base error of :mod:`export`: a bundle, option or model that cannot be exported or run.

    Messages name the offending value and the limit it broke, on one line.
    """
