"""Budgeted multi-target feature selection with greedy regularized least squares (greedy RLS)."""

from .errors import BundleError, DataError, TrainerError
from .estimators import GreedyRLS, GreedyRLSClassifier

__all__ = ["GreedyRLS", "GreedyRLSClassifier", "TrainerError", "DataError", "BundleError"]
