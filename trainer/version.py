"""The installed sensorbudget version, as generated files and bundles record it.

Read from the package metadata (``importlib.metadata``), so that the lower packages (export,
firmware_gen) need not import the command-line package ``sensorbudget`` for it.
"""

from __future__ import annotations

from importlib import metadata


def package_version() -> str:
    """``sensorbudget``'s installed version ("0+unknown" when run from an uninstalled tree)."""
    try:
        return metadata.version("sensorbudget")
    except metadata.PackageNotFoundError:
        return "0+unknown"
