"""Honest numbers: nested cross-validation of selection methods against baselines.

- :mod:`~trainer.evaluation.protocol`: the outer loop, checks before the first fit, results;
- :mod:`~trainer.evaluation.folds`: grouped, blocked (time, with a gap) and shuffled folds;
- :mod:`~trainer.evaluation.calibration`: label thresholds and Platt scaling on held-out scores;
- :mod:`~trainer.evaluation.methods`: budgets, the shared setup and the compared methods
  (greedy joint / separate, the multi-task lasso, greedy RankRLS);
- :mod:`~trainer.evaluation.baselines`: the multi-task lasso searched to a feature budget;
- :mod:`~trainer.evaluation.metrics`, :mod:`~trainer.evaluation.ranking_metrics`: measures;
- :mod:`~trainer.evaluation.report`: tables, Wilcoxon tests, curves and the report folder.
"""
