"""Honest numbers: nested cross-validation of selection methods against baselines.

- :mod:`~trainer.evaluation.protocol`: folds, the outer loop, results;
- :mod:`~trainer.evaluation.methods`: budgets, the shared setup and the compared methods
  (greedy joint / separate, the multi-task lasso, greedy RankRLS);
- :mod:`~trainer.evaluation.baselines`: the multi-task lasso searched to a feature budget;
- :mod:`~trainer.evaluation.metrics`, :mod:`~trainer.evaluation.ranking_metrics`: measures;
- :mod:`~trainer.evaluation.report`: tables, Wilcoxon tests, curves and the report folder.
"""
