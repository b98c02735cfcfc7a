"""sensorbudget: from multi-sensor recordings to a budgeted model and its firmware.

One namespace: ``sensorbudget.trainer``, ``sensorbudget.export``, ``sensorbudget.firmware_gen``
and ``sensorbudget.device_sim``. The installed wheel holds them inside this package (the
repository keeps them in the top-level folders the design fixes, mapped with setuptools'
``package-dir``); run from a source checkout, the checkout's root is searched for them too.
"""

import os as _os

__version__ = "0.1.0"

_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if (not _os.path.isdir(_os.path.join(__path__[0], "trainer"))
        and _os.path.isfile(_os.path.join(_root, "trainer", "__init__.py"))):
    __path__.append(_root)          # a source checkout: sensorbudget.trainer is <root>/trainer
