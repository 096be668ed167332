"""Where an agent fails: its trajectory (``Trace``, kept on the item's final stage) and the
numbers read from it, pure, so ``rescore`` recomputes them with no call.

Per item (in the record's ``metrics``, for every scored item, abstentions included):

* ``steps``: model turns taken; ``searches`` and ``reads``: the tool calls that ran;
* ``gold_shown``: a search showed the gold paper (its arXiv id, or its title for OpenAlex);
  the mean is the search's recall over the run;
* ``gold_read``: the gold was read;
* ``found_not_chosen``: the gold was shown and the answer is not correct;
* ``cited_unseen``: the paper cited (by id or title) was never shown by a search or a read:
  invented, or from memory;
* ``bad_calls``: tool calls that were malformed (arguments not a JSON object, a required one
  missing) or named no tool;
* ``unfinished``: the step or token limit ended the item before a citation.

Aggregated over every scored item of a model x suite x task as set metrics: a share with its
Wilson 95% CI, a mean of counts with its bootstrap CI; gateable like any metric.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_citebench.api import Records, Stat
from pytest_citebench.metrics.text import same_title
from pytest_citebench.metricspec import MetricSpec

#: The key of the trajectory in the final stage's details.
TRACE_KEY = "agent"
#: How an item ended.
ENDINGS = ("cite", "text", "steps", "tokens")


@dataclass
class Trace:
    """One item's trajectory: each tool call (what it showed), the turns and tokens spent, how it
    ended, and what was cited."""

    steps: int = 0
    tokens: int = 0
    ended: str = "steps"
    calls: list[dict[str, Any]] = field(default_factory=list)
    cited: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "steps": self.steps,
            "tokens": self.tokens,
            "ended": self.ended,
            "calls": self.calls,
            "cited": self.cited,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Trace:
        return cls(
            int(data.get("steps", 0)),
            int(data.get("tokens", 0)),
            str(data.get("ended", "steps")),
            [dict(c) for c in data.get("calls") or []],
            dict(data["cited"]) if data.get("cited") else None,
        )

    def shown(self) -> list[tuple[str, str]]:
        """(id, title) of every paper a search or a read showed, in order."""
        out = []
        for call in self.calls:
            if call.get("tool") == "search" and call.get("ok"):
                out += [(str(i), str(t)) for i, t in call.get("shown") or []]
            if call.get("tool") == "read" and call.get("ok"):
                out.append((str(call.get("id", "")), str(call.get("title", ""))))
        return out

    def summary(self) -> str:
        """One line for the item's reason: turns, tool calls, how it ended."""
        count = {t: sum(1 for c in self.calls if c.get("tool") == t) for t in ("search", "read")}
        bad = sum(1 for c in self.calls if c.get("bad"))
        words = [
            f"{self.steps} turn{'s' * (self.steps != 1)}",
            f"{count['search']} search{'es' * (count['search'] != 1)}",
            f"{count['read']} read{'s' * (count['read'] != 1)}",
        ]
        if bad:
            words.append(f"{bad} bad call{'s' * (bad != 1)}")
        ending = {
            "cite": "cited",
            "text": "answered in text",
            "steps": "step limit reached",
            "tokens": "token limit reached",
        }[self.ended if self.ended in ENDINGS else "steps"]
        return f"agent: {', '.join(words)}; {ending}"


def _is(paper: tuple[str, str], paper_id: str | None, title: str) -> bool:
    if paper_id and paper[0] == paper_id:
        return True
    return bool(title) and bool(paper[1]) and same_title(paper[1], title)


def agent_metrics(
    trace: Trace, *, gold_id: str | None, gold_title: str, correct: bool
) -> dict[str, float]:
    """The per-item numbers of one trajectory (see the module's docstring)."""
    searches = [c for c in trace.calls if c.get("tool") == "search" and c.get("ok")]
    reads = [c for c in trace.calls if c.get("tool") == "read" and c.get("ok")]
    shown = trace.shown()
    gold_shown = any(_is(p, gold_id, gold_title) for p in shown)
    gold_read = any(
        _is((str(c.get("id", "")), str(c.get("title", ""))), gold_id, gold_title) for c in reads
    )
    cited = trace.cited or {}
    cited_title = str(cited.get("title") or "")
    cited_id = cited.get("id")
    cited_something = bool(cited) and cited_title.strip().lower() not in ("", "pass")
    unseen = cited_something and not any(_is(p, cited_id, cited_title) for p in shown)
    return {
        "steps": float(trace.steps),
        "searches": float(len(searches)),
        "reads": float(len(reads)),
        "gold_shown": float(gold_shown),
        "gold_read": float(gold_read),
        "found_not_chosen": float(gold_shown and not correct),
        "cited_unseen": float(unseen),
        "bad_calls": float(sum(1 for c in trace.calls if c.get("bad"))),
        "unfinished": float(trace.ended in ("steps", "tokens")),
    }


def _share(doc: str, label: str, better: bool | None) -> MetricSpec:
    return MetricSpec(doc, higher_is_better=better, label=label, charted=False)


def _mean(doc: str, label: str, better: bool | None) -> MetricSpec:
    return MetricSpec(doc, higher_is_better=better, scale="number", label=label, charted=False)


AGENT_METRICS: Mapping[str, MetricSpec] = {
    "gold_shown": _share("share of items where a search showed the gold (recall)", "shown %", True),
    "gold_read": _share("share of items where the gold was read", "read %", True),
    "found_not_chosen": _share(
        "share of items where the gold was shown but the answer is not correct",
        "found-not-chosen %",
        False,
    ),
    "cited_unseen": _share(
        "share of items citing a paper no tool showed (invented, or from memory)",
        "cited unseen %",
        False,
    ),
    "unfinished": _share(
        "share of items the step or token limit ended before a citation", "unfinished %", False
    ),
    "steps": _mean("model turns per item", "steps", None),
    "searches": _mean("searches per item", "searches", None),
    "reads": _mean("reads per item", "reads", None),
    "bad_calls": _mean("malformed or unknown tool calls per item", "bad calls", False),
}


def agent_set_metrics(records: Records) -> dict[str, Stat]:
    """Each agent metric over every scored record that carries it: shares with Wilson CIs,
    means of counts with bootstrap CIs."""
    from pytest_citebench.metrics.stats import bootstrap_mean_ci, wilson_ci

    out = {}
    for name, spec in AGENT_METRICS.items():
        values = [float(r["metrics"][name]) for r in records if name in (r.get("metrics") or {})]
        if not values:
            out[name] = Stat(math.nan, math.nan, math.nan, 0)
            continue
        mean = sum(values) / len(values)
        if spec.scale == "share":
            lo, hi = wilson_ci(round(sum(values)), len(values))
        else:
            lo, hi = bootstrap_mean_ci(values)
        out[name] = Stat(mean, lo, hi, len(values))
    return out


def steps_histogram(records: Sequence[Mapping[str, Any]]) -> dict[int, int]:
    """Items per number of turns taken."""
    counts: dict[int, int] = {}
    for record in records:
        steps = (record.get("metrics") or {}).get("steps")
        if steps is not None:
            counts[int(steps)] = counts.get(int(steps), 0) + 1
    return dict(sorted(counts.items()))
