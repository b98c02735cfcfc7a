"""Generate, build and flash firmware for a bundle: streaming C99 extractors, the model kernel,
a framed serial protocol (PROTOCOL.md), and HALs for the host, real boards (Nucleo-64 STM32F4,
Arduino Uno) and emulation-only boards (QEMU MPS2); and the model as a C library.

- :mod:`~sensorbudget.firmware_gen.plan`: what a firmware computes, read off a bundle;
  :mod:`~sensorbudget.firmware_gen.reference`: the same in numpy, bit for bit (the oracle of the C code).
- Streaming extractors (``<name>_stream.c``): :mod:`~sensorbudget.firmware_gen.extractors_c` (the file),
  :mod:`~sensorbudget.firmware_gen.passes_c` (the window pass), :mod:`~sensorbudget.firmware_gen.q15_c` (integer roots,
  magnitude cache), :mod:`~sensorbudget.firmware_gen.series_c` (per-channel linear copy and preprocessing),
  :mod:`~sensorbudget.firmware_gen.shape_c` (shape routines), :mod:`~sensorbudget.firmware_gen.fft_c` (power spectrum),
  :mod:`~sensorbudget.firmware_gen.fft_q15_c` (the Q15 power spectrum; the stream's with fft="q15").
- Model kernel (``<name>_kernel.h``): :mod:`~sensorbudget.firmware_gen.kernel_c`,
  :mod:`~sensorbudget.firmware_gen.kernel_q15`.
- :mod:`~sensorbudget.firmware_gen.firmware` assembles a firmware tree (``main.c``, HAL and protocol from
  ``templates/``; :mod:`~sensorbudget.firmware_gen.firmware_main`: ``main.c`` and the result,
  :mod:`~sensorbudget.firmware_gen.firmware_multirate`: the tree of a multi-rate bundle); :mod:`~sensorbudget.firmware_gen.boards`: the board registry (part, limits, power
  with sources, toolchain, HAL, emulator, flashing, measuring backends);
  :mod:`~sensorbudget.firmware_gen.targets` and :mod:`~sensorbudget.firmware_gen.profiles`: targets,
  Makefiles and the printed profiles; :mod:`~sensorbudget.firmware_gen.build` compiles and measures;
  :mod:`~sensorbudget.firmware_gen.flash` puts an image on its board.
- The C library (``sensorbudget export c-library``): :mod:`~sensorbudget.firmware_gen.library` (API),
  :mod:`~sensorbudget.firmware_gen.library_build` (CMake, make, Arduino, PlatformIO, Zephyr files),
  :mod:`~sensorbudget.firmware_gen.library_arduino` (the example sketch), :mod:`~sensorbudget.firmware_gen.library_decide`
  (``<name>_decide``), :mod:`~sensorbudget.firmware_gen.library_wrap` (line lengths of the build files),
  :mod:`~sensorbudget.firmware_gen.library_macros` (score macros and quantiser tables both APIs share).
- Sensors at their own rates (issue 30): :mod:`~sensorbudget.firmware_gen.multirate` (the plan: one
  single-rate group per sensor and rate), :mod:`~sensorbudget.firmware_gen.multirate_c` (the groups'
  streams and ``<name>_multirate.c``, the per-sensor push),
  :mod:`~sensorbudget.firmware_gen.multirate_reference` (its numpy oracle),
  :mod:`~sensorbudget.firmware_gen.multirate_library` (the library's
  ``<name>_push_<sensor>`` API), :mod:`~sensorbudget.firmware_gen.multirate_memory` (RAM and flash).
- :mod:`~sensorbudget.firmware_gen.api`: the typed Python API (``firmware`` -> ``Firmware``,
  ``library`` -> ``CLibrary``, ``onnx_model``, ``c_header``), what the commands call.

>>> from sensorbudget.firmware_gen import TARGETS, NUMERICS
>>> sorted(TARGETS), NUMERICS  # the boards of the registry (firmware_gen.boards)
(['arduino-uno', 'ch32v003', 'hifive1', 'host', 'mps2-an385', 'mps2-an386', 'nucleo-f4'], ('float32', 'q15', 'q31'))
>>> from sensorbudget.firmware_gen.targets import get_target
>>> [get_target(old).name for old in ("cortex-m4f", "cortex-m3", "avr")]
['mps2-an386', 'mps2-an385', 'arduino-uno']
"""

from .errors import FirmwareGenError
from .firmware import Firmware, generate_firmware
from .plan import NUMERICS, FirmwarePlan, make_plan
from .targets import TARGETS

__all__ = ["FirmwareGenError", "Firmware", "generate_firmware", "FirmwarePlan", "make_plan",
           "NUMERICS", "TARGETS"]
