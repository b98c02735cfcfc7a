"""``python -m sensorbudget`` (the same entry point as the console script)."""

from .entry import main

main()
