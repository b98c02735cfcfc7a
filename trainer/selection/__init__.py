"""Greedy RLS selection: the one greedy loop and the closed-form math it runs on.

- :mod:`~sensorbudget.trainer.selection.loop`: the one greedy selection loop, preprocessing, the choice of
  lambda by the criterion, path records; :mod:`~sensorbudget.trainer.selection.lam_search`: the default
  lambda search along the path (and the exhaustive grid);
- :mod:`~sensorbudget.trainer.selection.costs`: the cost model (extractors, transforms, sensors, budgets) as a
  plan of moves; :mod:`~sensorbudget.trainer.selection.cost_params`: its parameter checks;
  :mod:`~sensorbudget.trainer.selection.rate_closure`: a sensor with listed rates paid at the
  rate the device reads it;
- :mod:`~sensorbudget.trainer.selection.caches`: the caches of one run in blocks of rows x targets;
- :mod:`~sensorbudget.trainer.selection.rls_math` (LOO), :mod:`~sensorbudget.trainer.selection.group_math` (rank-m moves),
  :mod:`~sensorbudget.trainer.selection.holdout_math` and :mod:`~sensorbudget.trainer.selection.holdout_blocks`
  (leave-group-out), :mod:`~sensorbudget.trainer.selection.batched` (small batched algebra): the step math
  as pure numpy functions, each docstring stating its identity (derivations: docs/method.md);
  :mod:`~sensorbudget.trainer.selection.blas_rows` (scratch arrays, in-place rank-one update) and
  :mod:`~sensorbudget.trainer.selection.lam_curve` (ridge on fixed columns, its LOO SSE for all lambdas)
  hold parts of rls_math, which re-exports them;
- :mod:`~sensorbudget.trainer.selection.validation`: parameter and input checks of the estimators
  (constant targets, budgets beyond a fold's rows: ``check_targets``, ``check_budget``);
- :mod:`~sensorbudget.trainer.selection.refit`: ridge refitted on a chosen feature set;
- :mod:`~sensorbudget.trainer.selection.heldout`: held-out (LOO / leave-group-out) predictions of a fixed
  model in closed form, the intercept refitted per fold;
- :mod:`~sensorbudget.trainer.selection.fitted`: the estimators' fitted attributes from their runs.
"""
