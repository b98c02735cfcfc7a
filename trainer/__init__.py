"""Budgeted multi-target feature selection with greedy regularized least squares (greedy RLS)."""

from .errors import BundleError, DataError, TrainerError
from .estimators import GreedyRLS, GreedyRLSClassifier
from .ranking import GreedyRankRLS

__all__ = ["GreedyRLS", "GreedyRLSClassifier", "GreedyRankRLS", "TrainerError", "DataError",
           "BundleError"]
