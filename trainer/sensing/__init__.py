"""From recordings to candidate features: what sensors and extractors a product can have.

- :mod:`~trainer.sensing.recordings`: sensor streams as recorded (CSV files or a folder);
- :mod:`~trainer.sensing.sensors`: ``sensors.toml``, the candidate sensors, costs and features;
  :mod:`~trainer.sensing.spec_values` its checked numbers and ``[[calibration]]`` entries;
- :mod:`~trainer.sensing.extractors`: the window statistics, with exact float32 / Q15
  definitions the generated C follows, and the registry of every kind;
- :mod:`~trainer.sensing.shape`, :mod:`~trainer.sensing.spectral`: shape statistics and
  preprocessing; the float32 FFT, band and spectrum statistics, autocorrelation;
- :mod:`~trainer.sensing.q15`: integer square roots and Q15 magnitudes;
- :mod:`~trainer.sensing.specs`: extractor arguments, preprocessing, band families, transforms;
- :mod:`~trainer.sensing.rates`: sensors at their own rates: alignment on each sensor's grid,
  windows in seconds, plain decimation for ``rates_hz``;
  :mod:`~trainer.sensing.sensor_files` one stream file per sensor joined into that table;
- :mod:`~trainer.sensing.feature_set`: recordings + ``sensors.toml`` -> the feature table;
  :mod:`~trainer.sensing.feature_checks` the checks of one read back from an NPZ;
  :mod:`~trainer.sensing.targets` its targets (labels, target columns);
- :mod:`~trainer.sensing.sensor_budget`: a feature table's sensors as the estimators' costs.
"""
