"""sensorbudget: from multi-sensor recordings to a budgeted model and its firmware."""

__version__ = "0.1.0"
