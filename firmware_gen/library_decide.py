"""The C library's calibrated decisions for multi-label bundles: ``<name>_decide``.

``<name>_decide(scores, decisions)`` turns the scores of ``<name>_predict`` into 0/1 label
decisions with the thresholds of the library's model header (``<name>_model_thresholds``, or
``<name>_model_<q>_thresholds`` for Q15/Q31: :mod:`sensorbudget.export.c_decisions`): label j is on when
``scores[j] > threshold[j]``. The thresholds are the bundle's calibrated ones (``decision`` in
model.json, chosen on held-out scores), or 0 without them (the sign of the score). Fixed-point
scores are integers ``s * 2^-G``; the stored integer thresholds floor(threshold * 2^G) make the
integer comparison equal the real one (:func:`sensorbudget.export.c_decisions.integer_thresholds`).
"""

from __future__ import annotations

from sensorbudget.export import cgen
from sensorbudget.export.fixed_point import FORMATS

def has_decide(plan) -> bool:
    """Multi-label libraries have ``<name>_decide``."""
    return plan.task == "multilabel"


def thresholds_symbol(prefix: str, plan) -> str:
    """The model header's thresholds array (:func:`sensorbudget.export.c_decisions.decide_part`)."""
    return f"{prefix}_thresholds" if not plan.fixed else f"{prefix}_{plan.numeric}_thresholds"


def declarations(name: str, plan, decision: dict | None) -> list:
    """Prototype and comment in ``<name>.h`` ([] unless multi-label)."""
    if not has_decide(plan):
        return []
    N = name.upper()
    source = ("the bundle's calibrated thresholds (rule "
              + cgen.c_comment(str(decision.get("rule"))) + ")"
              if decision else "threshold 0 (the bundle has no calibrated thresholds)")
    return [f"/* Label decisions of scores from {name}_predict: decisions[j] = 1 when",
            f" * scores[j] > the threshold of label j ({N}_N_TARGETS values), with",
            f" * {source}. */",
            cgen.fit(f"{name}_status_t {name}_decide({cgen.JOIN}const {name}_score_t *scores,"
                     f"{cgen.BREAK}"
                     f"unsigned char *decisions);")[:-1]]


def template_values(prefix: str, plan) -> dict:
    """The values of ``<name>_decide`` in ``templates/library_api.c.j2``: ``decide`` (multi-label
    only), the score cast and the thresholds' symbol."""
    if not has_decide(plan):
        return {"decide": False}
    cast = f"({FORMATS[plan.numeric].acc_ctype})" if plan.fixed else ""
    return {"decide": True, "cast": cast, "th": thresholds_symbol(prefix, plan)}
