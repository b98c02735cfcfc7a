"""The trainer package's single exception hierarchy."""


class TrainerError(ValueError):
    """Base error of :mod:`trainer`: bad data, bad parameters or a bad bundle.

    Messages name the offending value and the limit it broke, on one line.
    """


class DataError(TrainerError):
    """A feature table could not be read or is not usable."""


class BundleError(TrainerError):
    """A model bundle is missing, corrupt, tampered with or of an unknown version."""


class OutputError(TrainerError):
    """An output path that must not be written: not a directory, or a folder the tool did not
    write."""


class TrainerWarning(UserWarning):
    """Base warning of :mod:`trainer`: a result that is likely optimistic or unprotected.

    The command line shows these as one ``Warning: ...`` line each."""


class BundleWarning(TrainerWarning):
    """A bundle loads but is not fully protected (an older format)."""
