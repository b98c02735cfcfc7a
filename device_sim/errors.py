"""The device_sim package's single exception hierarchy."""


class DeviceError(IOError):
    """Base error of :mod:`device_sim`: a device, link or replay problem."""


class DeviceTimeout(DeviceError):
    """The device did not answer within the timeout (after all retries)."""
