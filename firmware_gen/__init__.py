"""Generate, build and flash firmware for a bundle: streaming C99 extractors, the model kernel,
a framed serial protocol (PROTOCOL.md), and HALs for the host, real boards (Nucleo-64 STM32F4,
Arduino Uno) and emulation-only boards (QEMU MPS2); target profiles in ``profiles``.

>>> from firmware_gen import TARGETS, NUMERICS
>>> sorted(TARGETS), NUMERICS
(['arduino-uno', 'host', 'mps2-an385', 'mps2-an386', 'nucleo-f4'], ('float32', 'q15', 'q31'))
>>> from firmware_gen.targets import get_target
>>> [get_target(old).name for old in ("cortex-m4f", "cortex-m3", "avr")]
['mps2-an386', 'mps2-an385', 'arduino-uno']
"""

from .errors import FirmwareGenError
from .firmware import Firmware, generate_firmware
from .plan import NUMERICS, FirmwarePlan, make_plan
from .targets import TARGETS

__all__ = ["FirmwareGenError", "Firmware", "generate_firmware", "FirmwarePlan", "make_plan",
           "NUMERICS", "TARGETS"]
