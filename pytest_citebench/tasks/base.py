"""The seams every task shares: what goes to a model, what comes back, what a score is.

A task is three things (inspect_ai's shape): a prompt built from an item, a ``solve`` that talks to
a model through ``generate`` (one call for most tasks, an escalating conversation for SID), and a
pure ``score``. Everything here is a frozen dataclass so it can cross an xdist boundary as JSON.
"""

from __future__ import annotations

import string
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

from pytest_citebench.suites import Item

Outcome = Literal["correct", "partial", "abstained", "unanswered", "hallucinated", "error"]
#: Every outcome, best to worst for a reader: *correct*; *partial* (nothing invented but
#: incomplete); *abstained* (an explicit pass); *unanswered* (a reply that names no citation:
#: empty, an echo of the prompt, a template placeholder, prose with no title-, name- or DOI-like
#: span); *hallucinated* (at least one citation element invented or wrong); *error*. Only
#: *hallucinated* says the model invented something; it is never given to output naming nothing.
#: The rules per task, with examples, are in docs/outcomes.md.
OUTCOMES: tuple[Outcome, ...] = (
    "correct",
    "partial",
    "abstained",
    "unanswered",
    "hallucinated",
    "error",
)
#: Bumped whenever a scoring rule changes what an outcome or a metric would be for the same raw
#: answer. Records carry it; a baseline scored under another version is not compared (rescore
#: it: ``python -m pytest_citebench rescore RESULTS``). Records without it were scored by "1".
SCORER_VERSION = "3"
#: The scorer version of a record that carries none (written before versions were stamped).
LEGACY_SCORER_VERSION = "1"


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class Hint:
    """The structured query behind a prompt.

    Remote models never see it (they get only the messages); the built-in retrieval baselines use
    it instead of parsing their own prompt back apart.
    """

    task: str
    query: str
    suite: str
    corpus: str | None = None
    extra: Mapping[str, str] = field(default_factory=dict)


class Generate(Protocol):
    def __call__(self, messages: Sequence[Message], *, hint: Hint) -> Awaitable[str]: ...


@dataclass(frozen=True)
class Stage:
    """One model call of a task: its name, the raw text and what the parser made of it."""

    name: str
    raw: str
    answer: str
    abstained: bool


@dataclass(frozen=True)
class Attempt:
    stages: tuple[Stage, ...]

    @property
    def final(self) -> Stage:
        return self.stages[-1]


@dataclass(frozen=True)
class ItemScore:
    outcome: Outcome
    expected: str
    metrics: Mapping[str, float]
    # One line a reader can check the outcome against ("names 2 of 3 gold authors, none
    # invented"); empty only for tasks that have nothing to add to the outcome itself.
    reason: str = ""


@dataclass(frozen=True)
class NamedTemplate:
    """A prompt written once, referred to by name in reports and docs."""

    name: str
    text: str

    def render(self, **values: str) -> str:
        return string.Template(self.text).substitute(values)


class Task(Protocol):
    """What every task provides. Optional extras, looked up with ``getattr``:

    - ``label: str``: shown beside the task in every report (e.g. that a protocol is an oracle).
    - ``stages: tuple[str, ...]``: stage names of an escalating task; with more than one, the
      aggregates are also reported per final stage.
    - ``set_metrics(records) -> dict[str, Stat]`` with ``set_metric_docs``: metrics of the whole
      group that are not means of per-item numbers (agreement, ROC-AUC, DOI shares).
    - ``summary_lines(aggregates, records) -> list[str]``: extra lines for the terminal summary
      (e.g. a calibration table), printed once per task under its own heading.
    - ``outcome_shares: bool`` (default True): False for tasks judged only by their set metrics
      (verify, calibrate, reattribute), whose correct/hallucinated split is no citation verdict;
      the headline, heatmaps, charts and worst answers then leave their outcome shares out.
    """

    name: str
    paper: str
    fields: Mapping[str, type | tuple[type, ...]]
    # Per-item numbers (name -> what it means); aggregated as means over answered items.
    metrics: Mapping[str, str]

    async def solve(
        self, item: Item, generate: Generate, *, suite_corpus: str | None
    ) -> Attempt: ...

    def score(self, item: Item, attempt: Attempt) -> ItemScore: ...


def stage_dicts(attempt: Attempt) -> list[dict[str, Any]]:
    return [asdict(stage) for stage in attempt.stages]
