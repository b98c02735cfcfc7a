"""The model bundle (``model.json`` + ``weights.npz``) and the project's output files.

- :mod:`~sensorbudget.trainer.bundle.model`: the bundle: contents from a fitted estimator, save, load, checks,
  upgrade (re-hash a bundle the user vouches for);
- :mod:`~sensorbudget.trainer.bundle.contents`: ``model.json`` from a fitted estimator (path, extractors, costs);
- :mod:`~sensorbudget.trainer.bundle.decision`: calibrated label thresholds and Platt probabilities;
- :mod:`~sensorbudget.trainer.bundle.recordings`: a bundle's selected features computed from recordings;
- :mod:`~sensorbudget.trainer.bundle.schema`: types of the ``model.json`` fields consumers read;
- :mod:`~sensorbudget.trainer.bundle.files`: canonical bytes (NPZ, JSON) and all-or-nothing writing of every
  output file or folder (modes kept when replacing);
- :mod:`~sensorbudget.trainer.bundle.manifest`: ownership of output folders (the manifest of the files each
  one holds, with their sha256) and the recognisable names of temporaries.
"""

from .files import json_default, json_text, npz_bytes, write_atomically, write_folder_atomically
from .model import (
                    FORMAT,
                    FORMAT_VERSION,
                    MODEL_FILE,
                    WEIGHTS_FILE,
                    Bundle,
                    bundle_contents,
                    check_bundle,
                    load_bundle,
                    save_bundle,
                    upgrade_bundle,
)

__all__ = ["Bundle", "load_bundle", "save_bundle", "upgrade_bundle", "bundle_contents",
           "check_bundle", "FORMAT",
           "FORMAT_VERSION", "MODEL_FILE", "WEIGHTS_FILE", "npz_bytes", "json_default",
           "json_text", "write_atomically", "write_folder_atomically"]
