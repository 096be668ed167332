"""The metrics a REASONS task declares: per item (the kinds of a wrong citation, the paper's and
the code's hallucination rates, F1, BLEU-4) and per set (the share of replies not read)."""

from __future__ import annotations

from collections.abc import Mapping

from pytest_citebench.metricspec import KIND_METRICS, MetricSpec

REASONS_METRICS: Mapping[str, MetricSpec] = {
    # The kinds of a hallucinated answer (kinds.py): shares of the scored items, as the core
    # declares them for every task that tells them apart.
    **KIND_METRICS,
    "hr_paper": MetricSpec(
        "hallucination rate, the paper's formula (answered items)",
        higher_is_better=False,
        label="HR paper %",
        paired_test="bootstrap",
        ranks_worst=True,
        key=True,
    ),
    "hr_code": MetricSpec(
        "hallucination rate, the REASONS code's |H-R|/|H| (answered items)",
        higher_is_better=False,
        label="HR code %",
        ranks_worst=True,
        charted=False,
    ),
    "f1": MetricSpec(
        "token-set F1 against the gold answer (answered items)",
        higher_is_better=True,
        label="F1 %",
        paired_test="bootstrap",
        ranks_worst=True,
        key=True,
    ),
    "bleu": MetricSpec(
        "BLEU-4, nltk, no smoothing (answered items)",
        higher_is_better=True,
        label="BLEU %",
        ranks_worst=True,
    ),
}

#: Replies the rules could not read: their share per model x suite x task, so a team sees when its
#: model's style or language is outside what the benchmark reads (docs/outcomes.md).
REASONS_SET_METRICS: Mapping[str, MetricSpec] = {
    "unread": MetricSpec(
        "share of replies the rules could not read (their style or language), scored unanswered",
        higher_is_better=False,
        label="unread %",
        charted=False,
    ),
}
