"""citation-guard (seed paper 002): verify cited sentences, re-attribute, flag with a
split-conformal threshold; plus the statistics that validate the verifier against gold.

Pure library, independent of pytest. Importing it loads no numpy, torch or model: those are
imported on first use so that plugin start-up and test collection stay fast and offline-safe.
"""

from pytest_citebench.guard.guard import (
    CitationRecord,
    CitedSentence,
    GuardResult,
    guard_answer,
    split_cited_sentences,
)
from pytest_citebench.guard.stats import (
    Interval,
    bootstrap_ci,
    cohen_kappa,
    conformal_k,
    conformal_threshold,
    conformal_trials,
    flag,
    gwet_ac1,
    matched_catch_frontier,
    naive_threshold,
    psa_nsa,
    recall_at_k,
    recall_specificity,
    roc_auc,
    wilson_interval,
)
from pytest_citebench.guard.verifiers import (
    Verifier,
    VerifierUnavailable,
    available_verifiers,
    get_verifier,
    register_verifier,
)

__all__ = [
    "CitationRecord",
    "CitedSentence",
    "GuardResult",
    "Interval",
    "Verifier",
    "VerifierUnavailable",
    "available_verifiers",
    "bootstrap_ci",
    "cohen_kappa",
    "conformal_k",
    "conformal_threshold",
    "conformal_trials",
    "flag",
    "get_verifier",
    "guard_answer",
    "gwet_ac1",
    "matched_catch_frontier",
    "naive_threshold",
    "psa_nsa",
    "recall_at_k",
    "recall_specificity",
    "register_verifier",
    "roc_auc",
    "split_cited_sentences",
    "wilson_interval",
]
