"""Honest numbers: nested cross-validation of selection methods against baselines.

- :mod:`~sensorbudget.trainer.evaluation.protocol`: the outer loop, checks before the first fit, results;
- :mod:`~sensorbudget.trainer.evaluation.folds`: grouped, blocked (time, with a gap) and shuffled folds;
- :mod:`~sensorbudget.trainer.evaluation.calibration`: label thresholds and Platt scaling on held-out scores;
- :mod:`~sensorbudget.trainer.evaluation.methods`: budgets, the shared setup and the compared methods
  (greedy joint / separate, the multi-task lasso, greedy RankRLS);
- :mod:`~sensorbudget.trainer.evaluation.baselines`: the multi-task lasso searched to a feature budget;
- :mod:`~sensorbudget.trainer.evaluation.metrics`, :mod:`~sensorbudget.trainer.evaluation.ranking_metrics`: measures;
- :mod:`~sensorbudget.trainer.evaluation.report`: tables, Wilcoxon tests, curves and the report folder.
"""
