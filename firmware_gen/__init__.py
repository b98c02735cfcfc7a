"""Generate, build and flash firmware for a bundle: streaming C99 extractors, the model kernel,
a framed serial protocol (PROTOCOL.md), and HALs for host, Cortex-M (QEMU MPS2) and AVR.

>>> from firmware_gen import TARGETS, NUMERICS
>>> sorted(TARGETS), NUMERICS
(['avr', 'cortex-m3', 'cortex-m4f', 'host'], ('float32', 'q15', 'q31'))
"""

from .errors import FirmwareGenError
from .firmware import Firmware, generate_firmware
from .plan import NUMERICS, FirmwarePlan, make_plan
from .targets import TARGETS

__all__ = ["FirmwareGenError", "Firmware", "generate_firmware", "FirmwarePlan", "make_plan",
           "NUMERICS", "TARGETS"]
