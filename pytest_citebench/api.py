"""The seams between the core and a paper: what a task gets, what it returns, what it declares.

A paper (``pytest_citebench.papers.<name>`` or a third-party package) is a :class:`Paper` holding
its :class:`Task` objects and the optional parts the core asks it for: report sections, extra
pytest options, CLI subcommands, suite variants, offline answerers. The core names no paper; it
reaches every paper through these types and :mod:`pytest_citebench.registry`.

A task is three things (inspect_ai's shape): a prompt built from a :class:`Sample`, a ``solve``
that talks to a model through ``generate`` (one call for most tasks, an escalating conversation
for SID), and a pure ``score``. The records are frozen dataclasses so they cross an xdist
boundary as JSON. This module imports nothing from the rest of the package, so every layer can
depend on it without a circle.
"""

from __future__ import annotations

import math
import string
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pytest_citebench.metricspec import CORE_METRICS as CORE_METRICS
from pytest_citebench.metricspec import KIND_METRICS as KIND_METRICS
from pytest_citebench.metricspec import KINDS as KINDS
from pytest_citebench.metricspec import HallucinationKind as HallucinationKind
from pytest_citebench.metricspec import MetricSpec as MetricSpec

if TYPE_CHECKING:
    import pytest

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
#: The scorer version of a record that carries none (written before versions were stamped).
#: Each task declares its own current version (``Task.scorer_version``).
LEGACY_SCORER_VERSION = "1"

FieldType = type | tuple[type, ...]


# --------------------------------------------------------------------------- what a task reads


@dataclass(frozen=True)
class Sample:
    """One record of a suite; ``fields`` is the validated JSON object as written.

    Named ``Sample`` (inspect_ai's word) so it never reads as a ``pytest.Item``; ``line`` is the
    record's line in ``items.jsonl``, for errors a contributor can act on.
    """

    suite: str
    id: str
    fields: Mapping[str, Any]
    line: int

    def __getitem__(self, key: str) -> Any:
        return self.fields[key]


@dataclass(frozen=True)
class ToolCall:
    """One call of a tool a model made (``name``, its ``arguments`` as the raw JSON text the
    model wrote, which may be malformed), under the ``id`` the tool's result answers."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Message:
    """One chat turn, provider-neutral, so a task's prompt is the same for every model.

    A tool-using conversation also has an assistant turn's ``tool_calls`` and ``tool`` turns
    (a tool's result, answering the call ``tool_call_id``)."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to a model: its name, what it does, and its arguments' JSON schema."""

    name: str
    description: str
    parameters: Mapping[str, Any]

    def to_openai(self) -> dict[str, Any]:
        """The tool as the chat-completions ``tools`` list sends it."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }


@dataclass(frozen=True)
class Reply:
    """One assistant turn of a tool-using conversation: its text and the tools it called, with
    the tokens the provider counted (None: not counted)."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    tokens: int | None = None


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
    # What a corpus search answers with: the best paper's title, or (the query being a title)
    # its authors. The built-in baselines read it; a task's own ``offline_answer`` may ignore it.
    answer: Literal["title", "authors"] = "title"


class Generate(Protocol):
    """The model as a task sees it: messages in, raw text out (the hint goes to local models)."""

    def __call__(self, messages: Sequence[Message], *, hint: Hint) -> Awaitable[str]: ...


class Converse(Protocol):
    """The model as a tool-using task sees it: the conversation and the tools in, one assistant
    turn out (text and tool calls). The core's ``generate`` carries it as ``converse``."""

    def __call__(
        self, messages: Sequence[Message], *, hint: Hint, tools: Sequence[ToolSpec]
    ) -> Awaitable[Reply]: ...


def converse_of(generate: Generate) -> Converse | None:
    """The tool-using side of a task's ``generate``, or None where the caller offers none."""
    return getattr(generate, "converse", None)


@dataclass(frozen=True)
class NamedTemplate:
    """A prompt written once, referred to by name in reports and docs."""

    name: str
    text: str

    def render(self, **values: str) -> str:
        """Fill ``$name`` placeholders (braces need no escaping); a missing value raises."""
        return string.Template(self.text).substitute(values)


@dataclass(frozen=True)
class ShownPaper:
    """A paper a retrieval wrapper put in a prompt, under the number the model may cite it by.

    A model under RAG may answer "The answer is [2]": only the numbered list it was shown says
    which paper that is, and the list lives in the prompt the wrapper built, not in the task's.
    """

    rank: int
    title: str
    authors: str

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "title": self.title, "authors": self.authors}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ShownPaper:
        return cls(int(data["rank"]), str(data["title"]), str(data["authors"]))


# The list the calls made inside ``papers_shown`` fill. A context variable, not an argument: the
# model's interface stays "messages in, text out", and every model between a task and the
# retrieval wrapper passes the call on unchanged. The value is a list shared by reference, so a
# call run in another asyncio task or a thread (each copies the context) still fills it.
_SHOWN: ContextVar[list[ShownPaper] | None] = ContextVar("citebench_shown_papers", default=None)


@contextmanager
def papers_shown() -> Iterator[list[ShownPaper]]:
    """The papers a retrieval wrapper showed the model in the calls made inside this block.

    A task wraps one ``generate`` call in it, to judge a reply that cites by number; without a
    retrieval wrapper the list stays empty.
    """
    sink: list[ShownPaper] = []
    token = _SHOWN.set(sink)
    try:
        yield sink
    finally:
        _SHOWN.reset(token)


def show_papers(papers: Sequence[ShownPaper]) -> None:
    """Called by a retrieval wrapper with the numbered papers this call's prompt shows (the
    latest call's list replaces an earlier one's); a no-op when no task is collecting."""
    sink = _SHOWN.get()
    if sink is not None:
        sink[:] = papers


# --------------------------------------------------------------------------- what a task returns


@dataclass(frozen=True)
class Stage:
    """One model call of a task: its name, the raw text and what the parser made of it."""

    name: str
    raw: str
    answer: str
    abstained: bool


@dataclass(frozen=True)
class ScoredStage(Stage):
    """A stage plus what ``solve`` computed about it (similarities, DOI checks).

    Computing in ``solve`` keeps ``score`` cheap and lets the slow parts (an encoder, registry
    lookups) run off the engine's event loop. ``details`` is plain JSON: the runner ``asdict``s
    stages into the results file and across xdist workers, and ``rescore`` rebuilds them.
    """

    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Attempt:
    """Every stage of one item, in order; the last one is the answer that is scored.

    ``corpus`` is the suite's corpus file the attempt was made (or restaged) against, for a
    ``score`` that needs it (REASONS tells a real paper's title from prose by it): ``solve`` and
    ``restage`` get it from the core and put it here, so ``score`` stays a function of its
    arguments. None when the suite has none or the task does not read it.
    """

    stages: tuple[Stage, ...]
    corpus: str | None = None

    @property
    def final(self) -> Stage:
        """The stage that is scored and written as the item's answer."""
        return self.stages[-1]


@dataclass(frozen=True)
class ItemScore:
    """A task's verdict on one item."""

    outcome: Outcome
    expected: str
    metrics: Mapping[str, float]
    # One line a reader can check the outcome against ("names 2 of 3 gold authors, none
    # invented"); empty only for tasks that have nothing to add to the outcome itself.
    reason: str = ""
    # For a *hallucinated* item of a task that tells wrong citations apart (``KIND_METRICS``
    # among its metrics): which kind, its evidence said in ``reason``; None otherwise.
    kind: HallucinationKind | None = None
    # The answer the verdict was reached on, when it is not the final stage's parse (a reply
    # naming two titles, the second judged its answer): the record shows this one, so that its
    # answer and its reason name the same thing. None: the stage's parse is the answer.
    answer: str | None = None


def stage_dicts(attempt: Attempt) -> list[dict[str, Any]]:
    """The stages as the results file stores them."""
    return [asdict(stage) for stage in attempt.stages]


# --------------------------------------------------------------------------- metrics


# --------------------------------------------------------------------------- aggregates


def _num(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


@dataclass(frozen=True)
class Stat:
    """A number with its confidence interval and the count behind it (NaN when undefined)."""

    value: float
    lo: float
    hi: float
    n: int

    def to_json(self) -> dict[str, Any]:
        """NaN becomes null (JSON has no NaN); values are rounded to keep result diffs stable."""
        return {"value": _num(self.value), "ci": [_num(self.lo), _num(self.hi)], "n": self.n}


@dataclass(frozen=True)
class Aggregate:
    """Every metric of one (model, suite, task), optionally of one final stage of it."""

    model: str
    suite: str
    task: str
    counts: Mapping[str, int]
    metrics: Mapping[str, Stat] = field(default_factory=dict)
    # Set for the per-final-stage breakdown of escalating tasks; None for the task as a whole.
    stage: str | None = None
    label: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What identifies the aggregate; ``""`` for the stage, so whole-task keys sort first."""
        return (self.model, self.suite, self.task, self.stage or "")

    def to_record(self) -> dict[str, Any]:
        """The results-file line (``type: aggregate``); ``stage`` and ``label`` only when set."""
        record: dict[str, Any] = {
            "type": "aggregate",
            "model": self.model,
            "suite": self.suite,
            "task": self.task,
            "counts": dict(self.counts),
            "metrics": {k: v.to_json() for k, v in self.metrics.items()},
        }
        if self.stage is not None:
            record["stage"] = self.stage
        if self.label:
            record["label"] = self.label
        return record


#: What a paper's report hook reads: the item records (dicts, as in the results file) and the
#: aggregates the core computed from them.
Records = Sequence[Mapping[str, Any]]


# --------------------------------------------------------------------------- report sections


@dataclass(frozen=True)
class Chart:
    """A chart the core draws (``reports.svg``) in the HTML report; Markdown leaves it out.

    ``kind`` picks the drawing function and ``data`` holds its arguments by name, so a paper
    describes a chart without writing SVG:

    - ``grouped_bars``: ``title``, ``categories``, ``series``, ``values`` ((category, series) ->
      (value, lo, hi), shares 0-1);
    - ``stacked_bars``: ``title``, ``bars`` ((label, counts)), ``parts`` ((name, colour));
    - ``line_chart``: ``title``, ``x_label``, ``xs``, ``lines`` ((name, ys, dash pattern)).
    """

    kind: Literal["grouped_bars", "stacked_bars", "line_chart"]
    data: Mapping[str, Any]


@dataclass(frozen=True)
class Section:
    """A paper's own view of a run (a table from the paper, say), shown by every report.

    The core renders it once per format: the terminal summary, Markdown and HTML all draw
    ``headers``/``rows`` with the same table helper; ``charts`` appear in HTML only.
    ``numeric_from`` is the first right-aligned column.
    """

    key: str
    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""
    charts: tuple[Chart, ...] = ()
    numeric_from: int = 0
    # Shown in the terminal summary too (a wide or chart-only section may prefer HTML only).
    terminal: bool = True


# --------------------------------------------------------------------------- the task


class Search(Protocol):
    """The built-in retrieval baseline's search, offered to a task's own offline answerer."""

    def __call__(self, query: str, k: int) -> Sequence[Any]: ...


_NO_METRICS: Mapping[str, MetricSpec] = MappingProxyType({})


class Task:
    """A task: subclass it, set the four class attributes, implement ``solve`` and ``score``.

    Every other member has a default that means "nothing special", so a minimal task is a dozen
    lines, and mypy checks every override against the signatures here.
    """

    #: Plain name (letters, digits, ``.-_``): it is in test ids, gates, cassette paths and reports.
    name: str
    #: The paper's citation line, shown in reports.
    paper: str
    #: Fields every sample of a suite running this task must have, with their JSON types.
    fields: Mapping[str, FieldType]
    #: Per-item numbers, declared (name -> what it means and how to read it); aggregated as
    #: means over answered items.
    metrics: Mapping[str, MetricSpec] = _NO_METRICS
    #: The version of this task's scoring rules. Bump it whenever a rule changes what an outcome
    #: or a metric would be for the same raw answer: records carry it, and a baseline scored
    #: under another version of *this task's* rules is not compared (rescore it: ``python -m
    #: pytest_citebench rescore RESULTS``); other tasks' baselines stay comparable.
    scorer_version: str = LEGACY_SCORER_VERSION
    #: Shown beside the task in every report (e.g. that a protocol is an oracle).
    label: str = ""
    #: Stage names of an escalating task; with more than one, aggregates also go per final stage.
    stages: tuple[str, ...] = ()
    #: False for tasks judged only by their set metrics (verify, calibrate, reattribute), whose
    #: correct/hallucinated split is no citation verdict: reports leave their outcome shares out.
    outcome_shares: bool = True
    #: Metrics of the whole group that are not means of per-item numbers, declared like
    #: ``metrics``; ``set_metrics`` computes them.
    set_metric_specs: Mapping[str, MetricSpec] = _NO_METRICS
    #: One sample for ``new-suite`` to write into a fresh suite; fields it lacks get placeholders.
    example: Mapping[str, Any] | None = None
    #: The suite needs a ``corpus.jsonl``: the built-in baselines (or the task itself) search it.
    uses_corpus: bool = False

    def makes_requests(self) -> bool:
        """Whether this run's settings make the task send HTTP requests of its own (a live
        search): its items then get a cassette whatever the model, so they replay offline."""
        return False

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        """Ask the model (once, or escalating) and parse what it said."""
        raise NotImplementedError

    def score(self, item: Sample, attempt: Attempt) -> ItemScore:
        """The verdict on one attempt: pure, so ``rescore`` can re-run it on stored answers.
        What it needs beyond the sample rides on the attempt (``Attempt.corpus``)."""
        raise NotImplementedError

    def restage(self, item: Sample, attempt: Attempt, corpus: str | None) -> Attempt:
        """Re-derive parsed stages from stored raw text under today's parser (``rescore``)."""
        return attempt

    def declared_metrics(self) -> dict[str, MetricSpec]:
        """Every metric of this task's aggregates, in report order: the core's outcome metrics,
        then the per-item ones, then the set metrics."""
        return {**CORE_METRICS, **self.metrics, **self.set_metric_specs}

    def set_metrics(self, records: Records) -> dict[str, Stat]:
        """Metrics of a whole (model, suite, task) group, named in ``set_metric_specs``."""
        return {}

    def summary_lines(self, aggregates: Sequence[Aggregate], records: Records) -> list[str]:
        """Extra lines for the terminal summary, printed once under the task's own heading."""
        return []

    def offline_answer(
        self, kind: str, hint: Hint, options: Mapping[str, Any], search: Search
    ) -> str | None:
        """How the built-in ``citebench/<kind>`` baseline answers this task, or None to let it
        answer the core way (a corpus search for the cited paper's title or authors)."""
        return None


# --------------------------------------------------------------------------- the paper


#: An offline model of a paper's own (``citebench/<name>``): the hint and the model's options in,
#: the raw answer out.
AnswerFn = Callable[[Hint, dict[str, Any]], str]


@dataclass(frozen=True)
class ModelOption:
    """A parameter a built-in model (``citebench/<name>``) reads from its params
    (``--citebench-param NAME=VALUE``, ``[tool.citebench] params``, a profile's ``params``).

    Declared so the start of a run can check it (``models/options.py``): a value the model cannot
    use, or a name no model of the run reads, is one usage error listing the valid ones. Before,
    ``registry=regg`` silently turned a check off and ``now_year=abc`` failed every item.
    """

    name: str
    #: What a value must be, as the error says it ("a year: a whole number from 1000 to 9999").
    must_be: str
    #: Why a value cannot be used, or None when it can.
    problem: Callable[[Any], str | None]
    #: The built-in models that read it, by the name after ``citebench/``.
    models: tuple[str, ...]


@dataclass(frozen=True)
class Derived:
    """One sample of a derived suite: the new sample, or None with the reason it was skipped.

    ``original`` is the sample it came from: a skipped one still gets a (skipped) test named
    after it, so nothing drops out of a run silently.
    """

    item: Sample | None
    original: Sample
    reason: str = ""


@dataclass(frozen=True)
class Variant:
    """A derived suite (``<suite>+<name>``), e.g. an adversarial swap of one field.

    ``applies(samples)`` says whether a suite gets it; ``derive(samples, cache_dir)`` returns one
    :class:`Derived` per original sample, in order (it may cache expensive work under
    ``cache_dir``). The paper reads its own settings for it through ``Paper.configure``.
    """

    name: str
    applies: Callable[[Sequence[Sample]], bool]
    derive: Callable[[Sequence[Sample], Path], Sequence[Derived]]


def lazy(target: str) -> Callable[..., Any]:
    """``"package.module:function"`` as a callable that imports its module on first call.

    For a paper's commands and report sections: their modules (builders, trainers, numpy) stay
    out of the import that registering the paper costs every ``--citebench`` run.
    """
    module, _, attr = target.partition(":")

    def call(*args: Any, **kwargs: Any) -> Any:
        import importlib

        return getattr(importlib.import_module(module), attr)(*args, **kwargs)

    call.__qualname__ = call.__name__ = f"lazy({target})"
    return call


@dataclass(frozen=True)
class Command:
    """A ``python -m pytest_citebench <name>`` subcommand: ``main(argv) -> exit code``."""

    name: str
    help: str
    main: Callable[[list[str]], int]


@dataclass(frozen=True)
class Paper:
    """Everything the core needs from one paper; registered under the entry-point group
    ``pytest_citebench.tasks`` (``name = "package.module:PAPER"``)."""

    name: str
    title: str
    tasks: tuple[Task, ...]
    #: Report sections computed from a run (the paper's own tables), in every report format.
    sections: Callable[[Sequence[Aggregate], Records], list[Section]] | None = None
    #: ``python -m pytest_citebench`` subcommands (builders, importers, training).
    commands: tuple[Command, ...] = ()
    #: Adds the paper's pytest options (called from ``pytest_addoption`` with its own group).
    add_options: Callable[[pytest.OptionGroup], None] | None = None
    #: Reads those options once the run is configured.
    configure: Callable[[pytest.Config], None] | None = None
    #: Problems with the paper's settings (environment variables), reported at the run's start.
    environment_problems: Callable[[], list[str]] | None = None
    #: Derived suites, by name (``swap-title``).
    variants: tuple[Variant, ...] = ()
    #: Extra offline models (``citebench/<name>``), given the core's baselines to wrap.
    local_models: Callable[[Mapping[str, AnswerFn]], dict[str, AnswerFn]] | None = None
    #: The parameters the paper's offline answering reads, for the start-up check: its own
    #: models' and what its tasks' ``offline_answer`` reads when a core baseline answers them.
    model_options: tuple[ModelOption, ...] = ()

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks)
