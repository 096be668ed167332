"""Pure metric functions for the citation benchmarks.

Importing this package loads neither numpy, nltk nor pytest: those are imported on first use
inside the functions that need them, so the plugin stays cheap to load.

May import: retrieval (the packaged encoder the similarity metrics read).
"""

from pytest_citebench.metrics.attribution import bleu4, token_f1
from pytest_citebench.metrics.hallucination import (
    accuracy,
    hr_code,
    hr_paper,
    mean,
    pass_percentage,
)
from pytest_citebench.metrics.stats import bootstrap_mean_ci, wilson_ci
from pytest_citebench.metrics.text import normalize, tokenize

__all__ = [
    "accuracy",
    "bleu4",
    "bootstrap_mean_ci",
    "hr_code",
    "hr_paper",
    "mean",
    "normalize",
    "pass_percentage",
    "token_f1",
    "tokenize",
    "wilson_ci",
]
