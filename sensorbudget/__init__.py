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

# The Python API (issue 27): the pipeline's functions and typed results live in the library
# packages and are re-exported here on first use (PEP 562), so that ``import sensorbudget`` (the
# console entry point, before its signal handlers) loads nothing heavy.
_API = {
    **dict.fromkeys(("features", "train", "evaluate", "predict", "Dataset", "Bundle",
                     "Evaluation", "Predictions", "Task"), "sensorbudget.trainer.api"),
    "Numeric": "sensorbudget.export.numeric",
    "Board": "sensorbudget.firmware_gen.boards",
    **dict.fromkeys(("firmware", "Firmware", "library", "CLibrary", "onnx_model", "c_header"),
                    "sensorbudget.firmware_gen.api"),
    **dict.fromkeys(("simulate", "report", "load", "compare", "calibrate", "Simulation",
                     "Report", "Comparison"), "sensorbudget.device_sim.api"),
}
__all__ = ["__version__", *_API]


def __getattr__(name):
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted([*globals(), *_API])
