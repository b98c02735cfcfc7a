"""``python -m sensorbudget``."""

from .cli import main

main()
