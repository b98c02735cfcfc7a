"""The firmware_gen package's single exception."""


class FirmwareGenError(ValueError):
    """A bundle, option or toolchain problem while generating, building or flashing firmware."""
