"""From recordings to candidate features: what sensors and extractors a product can have.

- :mod:`~sensorbudget.trainer.sensing.recordings`: sensor streams as recorded (CSV files or a folder);
- :mod:`~sensorbudget.trainer.sensing.sensors`: ``sensors.toml``, the candidate sensors, costs and features;
  :mod:`~sensorbudget.trainer.sensing.spec_values` its checked numbers and ``[[calibration]]`` entries;
- :mod:`~sensorbudget.trainer.sensing.extractors`: the window statistics, with exact float32 / Q15
  definitions the generated C follows, and the registry of every kind;
- :mod:`~sensorbudget.trainer.sensing.shape`, :mod:`~sensorbudget.trainer.sensing.spectral`: shape statistics and
  preprocessing; the float32 FFT, band and spectrum statistics, autocorrelation;
- :mod:`~sensorbudget.trainer.sensing.spectral_q15`: the power spectrum in integers on Q15 samples
  (scaled per stage like CMSIS-DSP's arm_rfft_q15);
- :mod:`~sensorbudget.trainer.sensing.q15`: integer square roots and Q15 magnitudes;
- :mod:`~sensorbudget.trainer.sensing.specs`: extractor arguments, preprocessing, band families, transforms;
- :mod:`~sensorbudget.trainer.sensing.rates`: sensors at their own rates: alignment on each sensor's grid,
  windows in seconds, plain decimation for ``rates_hz``;
  :mod:`~sensorbudget.trainer.sensing.sensor_files` one stream file per sensor joined into that table;
- :mod:`~sensorbudget.trainer.sensing.feature_set`: recordings + ``sensors.toml`` -> the feature table;
  :mod:`~sensorbudget.trainer.sensing.feature_checks` the checks of one read back from an NPZ;
  :mod:`~sensorbudget.trainer.sensing.targets` its targets (labels, target columns);
- :mod:`~sensorbudget.trainer.sensing.sensor_budget`: a feature table's sensors as the estimators' costs.
"""
