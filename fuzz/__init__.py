"""Coverage-guided fuzz targets for sensorbudget (see fuzz/README.md).

Python targets (atheris): ``python -m fuzz.py_<name> [libFuzzer flags] [corpus dirs]``.
C targets (clang libFuzzer + ASan + UBSan): built by :mod:`fuzz.c_targets`.
``python -m fuzz.smoke`` runs every target briefly (``make fuzz-smoke``).
"""
