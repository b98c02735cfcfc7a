"""The examples' ``run.py`` scripts loaded as modules for their tests."""

from __future__ import annotations

import functools
import importlib.util
import sys

from tests.paths import EXAMPLES


@functools.cache
def load_run(example: str):
    """``examples/<example>/run.py`` as a module, registered in ``sys.modules`` (its
    dataclasses need their module there); loaded once per test session."""
    spec = importlib.util.spec_from_file_location(f"{example}_example",
                                                  EXAMPLES / example / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
