"""REASONS (Saxena et al.): sentence-level citation attribution.

*direct*: given a cited paper's title, name its authors. *indirect*: given the citing paper's title
and one sentence of its related work, name the cited paper's title. Both allow "pass". The prompts
(``prompts``) follow the paper and its public code word for word where they can, so numbers stay
comparable. Each task's rules are in its own module (``judge_direct``, ``judge_indirect``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from pytest_citebench.api import (
    Aggregate,
    Attempt,
    Generate,
    Hint,
    ItemScore,
    Message,
    NamedTemplate,
    Records,
    Sample,
    ScoredStage,
    Stage,
    Stat,
    Task,
)
from pytest_citebench.metrics.text import same_title
from pytest_citebench.papers.reasons.echoes import repeats_the_prompt
from pytest_citebench.papers.reasons.judge_direct import judge_direct
from pytest_citebench.papers.reasons.judge_indirect import (
    corpus_title_tails,
    corpus_titles,
    judge_indirect,
)
from pytest_citebench.papers.reasons.judgement import Judgement
from pytest_citebench.papers.reasons.kinds import kind_of
from pytest_citebench.papers.reasons.prompts import (
    DIRECT_ESCALATION,
    DIRECT_SYSTEM,
    DIRECT_USER,
    INDIRECT_ESCALATION,
    INDIRECT_SYSTEM,
)
from pytest_citebench.papers.reasons.ranks import cited_by_rank, shown_papers
from pytest_citebench.papers.reasons.readings import judge_reply
from pytest_citebench.papers.reasons.specs import REASONS_METRICS, REASONS_SET_METRICS
from pytest_citebench.papers.reasons.stages import (
    EXAMPLE,
    NOT_READ,
    REASONS_FIELDS,
    _not_read,
    _other_script,
    ask,
    same_authors,
    stage,
    text_metrics,
    with_shown,
)
from pytest_citebench.parsing import clean_authors, clean_title, is_abstention
from pytest_citebench.parsing.reply import answer_after_reasoning

PAPER = "REASONS: Saxena et al., Attribution in Scientific Literature: New Benchmark and Methods"

#: The version of the REASONS scoring rules: bump it with any rule change that would give the same
#: raw answer another outcome or metric (other papers' baselines stay comparable). 5: every
#: hallucinated record carries its kind of wrong citation, with the evidence in its reason. 6:
#: the layouts SmolLM2 writes under RAG (a second paragraph of names, a named thing listed as an
#: author, a retrieved paper's system name quoted) and an abstract quoted back as a title. 7: a
#: reply under RAG that cites the retrieved papers by number alone ("[3] [1]") names the papers
#: shown under those numbers (``ranks``). 8: the styles two held-out rounds of real answers
#: showed (scorer 7 agreed with 71 of 100, scorer 8's first draft with 96 of the next 100): a
#: reply's envelope (a ``<think>`` block, ``<answer>`` tags, JSON; ``parsing.envelope``), an MLA
#: first author, a person known by the middle name, "Or" as a given name, a list then a
#: reference ("et al."), a version note after a title, a lead-in in any language, the answer
#: announced mid-sentence, a phrase of the given abstract quoted back, a second choice in a
#: bracketed aside, a given name with a letter left out (a third round: 92 of 95 before these
#: two), prose quoting the citing title before its answer, a possessive, a CJK lead-in (a fourth:
#: 85 of 90 before); and the record's answer is the text the verdict judged (``ItemScore.answer``).
#: 9 (issue 42): a reply in a format is read a second time by its structure (``parsing.structure``:
#: Markdown, HTML, LaTeX, JSON/YAML/TOML/XML/Python, RIS, SQL, logfmt, Turtle, templates, CSV, a
#: letter's frame, a chat's address) and the two readings settled (``readings``); prose naming
#: every gold author is a list; labels read by where they stand (the foreign-label word list
#: gone); a supplement's gold named by its paper; a second surname left out, two letters swapped.
#: 10 (issue 42, rounds 9-10): before a shape decides, the gold is looked for in the whole reply
#: (``gold_match``): a missed right answer becomes *correct*; nothing becomes *hallucinated*.
SCORER_VERSION = "10"


_STAGE_GIVEN = {"abstract": "cited_abstract", "authors": "cited_authors"}


class _Reasons(Task):
    """Shared by the REASONS tasks: solve, score and the abstention rule. :class:`Direct` and
    :class:`Indirect` say what is asked, what the gold is and how an answer is judged."""

    name: str
    #: The first stage's name: "direct" (title -> authors) or "indirect" (sentence -> title).
    kind: str
    paper = PAPER
    fields: Mapping[str, type | tuple[type, ...]] = REASONS_FIELDS
    metrics = REASONS_METRICS
    set_metric_specs = REASONS_SET_METRICS
    scorer_version = SCORER_VERSION
    example: Mapping[str, Any] | None = EXAMPLE
    # The offline baselines answer every REASONS task by searching the suite's corpus.
    uses_corpus = True
    #: The field the offline baselines search the corpus with, and what they answer with.
    query_field: str
    answers: Literal["title", "authors"]
    #: The follow-up turns an escalating task may add, by the metadata they give.
    escalation: Mapping[str, NamedTemplate]
    #: The fields of a JSON reply read first for this task's answer (``parsing.envelope``).
    answer_keys: tuple[str, ...] = ()

    def messages(self, item: Sample) -> list[Message]:
        raise NotImplementedError

    def expected(self, item: Sample) -> str:
        raise NotImplementedError

    def parse(self, name: str, raw: str) -> Stage:
        raise NotImplementedError

    def is_correct(self, item: Sample, answer: str) -> bool:
        raise NotImplementedError

    def prompt_texts(self, item: Sample) -> tuple[list[str], list[str]]:
        """(sources, instructions) of the first prompt: what an echo repeats."""
        raise NotImplementedError

    def judge_answer(
        self,
        item: Sample,
        raw: str,
        sources: list[str],
        instructions: list[str],
        corpus: str | None,
    ) -> Judgement:
        """The outcome of a reply that is not a 'pass'."""
        raise NotImplementedError

    def prompt_texts_of(self, item: Sample, stage_name: str) -> tuple[list[str], list[str]]:
        """(sources, instructions) of the prompt this stage answered: what an echo repeats.
        A later turn's conversation still holds what the earlier turns gave (sid's third turn,
        the authors, comes after the abstract), so each is a source from its turn on."""
        sources, instructions = self.prompt_texts(item)
        if stage_name not in _STAGE_GIVEN:
            return sources, instructions
        for step in self.escalation:
            if _STAGE_GIVEN[step] in item.fields:
                sources.append(item[_STAGE_GIVEN[step]])
            if step == stage_name:
                break
        instructions += [t.text for t in self.escalation.values()]
        return sources, instructions

    #: The last judgement made, with what it was made of: an escalating task judges its final
    #: stage to decide not to escalate, and ``score`` asks again at once (a judgement was ~380 us
    #: a call in the recording loop). One (key, value) tuple, read and replaced whole, so threads
    #: cannot mix two.
    _last: tuple[tuple[Sample, Stage, str | None], Judgement] | None = None

    def judge(self, item: Sample, stage: Stage, corpus: str | None) -> Judgement:
        """The outcome of one stage's raw answer (the rules: docs/outcomes.md); ``corpus`` is the
        suite's corpus file, whose titles are real papers."""
        last = self._last
        if last is not None:
            (seen_item, seen_stage, seen_corpus), verdict = last
            if seen_item is item and seen_stage is stage and seen_corpus == corpus:
                return verdict
        verdict = self._judge(item, stage, corpus)
        self._last = ((item, stage, corpus), verdict)
        return verdict

    def _judge(self, item: Sample, stage: Stage, corpus: str | None) -> Judgement:
        return judge_reply(self, item, stage, corpus)

    def judge_text(
        self,
        item: Sample,
        stage: Stage,
        text: str,
        sources: list[str],
        instructions: list[str],
        corpus: str | None,
    ) -> Judgement:
        """One reading's outcome: the rules of docs/outcomes.md on ``text``."""
        # A reply that reasons in paragraphs before its answer is judged by that answer (a
        # paragraph that repeats the prompt is no reasoning: a base model's echo stays one).
        raw = answer_after_reasoning(
            text, is_echo=lambda p: repeats_the_prompt(p, sources, instructions)
        )
        if is_abstention(raw):
            return Judgement("abstained", "the model wrote 'pass'", "pass")
        if _other_script(raw):
            return Judgement(
                "unanswered", "written in another script, no title or names in Latin", ""
            )
        verdict = self.judge_answer(item, raw, sources, instructions, corpus)
        if verdict.outcome != "unanswered" or not isinstance(stage, ScoredStage):
            return verdict
        # Numbers alone ("The answer is: [3] [1]") name the retrieved papers shown under them.
        cited = cited_by_rank(raw, shown_papers(stage.details))
        if cited is None:
            return verdict
        if not cited.found:
            return Judgement("unanswered", f"{cited.note()}: names no paper", "")
        read = self.judge_answer(item, cited.text(self.answers), sources, instructions, corpus)
        return replace(read, reason=f"{cited.note()}: {read.reason}")

    def hint(self, item: Sample, corpus: str | None, **extra: str) -> Hint:
        return Hint(self.kind, item[self.query_field], item.suite, corpus, extra, self.answers)

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        raw, shown = await ask(generate, self.messages(item), self.hint(item, suite_corpus))
        first = with_shown(self.parse(self.kind, raw), shown)
        return await self.looked_up(item, Attempt((first,), corpus=suite_corpus))

    async def looked_up(self, item: Sample, attempt: Attempt) -> Attempt:
        """The attempt with a live title lookup on its final stage, when the run asked for one
        (``--citebench-title-lookup live``) and the kind of a wrong title needs it."""
        from pytest_citebench.papers.reasons.judge_model import with_judge
        from pytest_citebench.papers.reasons.title_lookup import with_lookup

        return await with_judge(self, item, await with_lookup(self.judge, item, attempt))

    def restage(self, item: Sample, attempt: Attempt, corpus: str | None) -> Attempt:
        """Every recorded stage parsed again from its raw text (``rescore``); what a stage
        recorded beside it (a live title lookup) is kept: it was a request, not parsing."""
        stages = []
        for recorded in attempt.stages:
            parsed = self.parse(recorded.name, recorded.raw)
            if isinstance(recorded, ScoredStage) and recorded.details:
                parsed = ScoredStage(
                    parsed.name, parsed.raw, parsed.answer, parsed.abstained, recorded.details
                )
            stages.append(parsed)
        return Attempt(tuple(stages), corpus=corpus)

    def score(self, item: Sample, attempt: Attempt) -> ItemScore:
        """The rules' score, or the judge model's where its recorded verdict applies."""
        from pytest_citebench.papers.reasons.judge_model import judged

        return judged(self, item, attempt, self.score_by_rules(item, attempt))

    def score_by_rules(self, item: Sample, attempt: Attempt) -> ItemScore:
        """Scored from the final stage's *raw* text, so a rescore applies today's parser; pure:
        the corpus it reads is the one ``solve`` or ``restage`` put on the attempt."""
        expected = self.expected(item)
        final = attempt.final
        verdict = self.judge(item, final, attempt.corpus)
        metrics: dict[str, float] = {}
        if verdict.outcome in ("correct", "partial", "hallucinated"):
            metrics = text_metrics(expected, verdict.answer, exact=verdict.outcome == "correct")
        reason = verdict.reason
        if verdict.outcome == "unanswered" and _not_read(attempt.final.raw, reason):
            reason = f"{NOT_READ}: {reason} (the rules found no title or names in this style)"
        judged = self._judged_answer(verdict, final.answer)
        if verdict.outcome != "hallucinated":
            return ItemScore(verdict.outcome, expected, metrics, reason, answer=judged)
        # Which kind of wrong citation, told after the rules decided (kinds.py).
        details = final.details if isinstance(final, ScoredStage) else None
        found = kind_of(item, verdict, corpus=attempt.corpus, details=details, reply=final.raw)
        return ItemScore(
            verdict.outcome, expected, metrics, found.reason(reason), found.kind, answer=judged
        )

    def _judged_answer(self, verdict: Judgement, parsed: str) -> str | None:
        """The verdict's answer when it names something else than the stage's parse (the
        parse takes a reply's first reading, the rules the one they judged); None otherwise."""
        if verdict.outcome not in ("correct", "partial", "hallucinated") or not verdict.answer:
            return None
        return None if self.same_reading(verdict.answer, parsed) else verdict.answer

    def same_reading(self, a: str, b: str) -> bool:
        """Two readings of a reply that name the same thing."""
        raise NotImplementedError

    def set_metrics(self, records: Records) -> dict[str, Stat]:
        """``unread``: the share of scored replies whose reason says the rules could not read
        them (Wilson 95% CI)."""
        from pytest_citebench.metrics.stats import wilson_ci
        from pytest_citebench.papers.reasons.kinds import fabricated_unmeasured

        n = len(records)
        k = sum(str(r.get("reason", "")).startswith(NOT_READ) for r in records)
        lo, hi = wilson_ci(k, n)
        out = {"unread": Stat(k / n if n else float("nan"), lo, hi, n)}
        if fabricated_unmeasured(records):  # nothing looked up: 0 would be no measurement
            out["fabricated"] = Stat(float("nan"), float("nan"), float("nan"), n)
        return out

    def summary_lines(self, aggregates: Sequence[Aggregate], records: Records) -> list[str]:
        """One line per model whose replies the rules could not read, pooled over suites."""
        lines = []
        by_model: dict[str, list[int]] = {}
        for r in records:
            if r.get("task") == self.name and r.get("outcome") != "error":
                tally = by_model.setdefault(str(r["model"]), [0, 0])
                tally[0] += str(r.get("reason", "")).startswith(NOT_READ)
                tally[1] += 1
        for model, (k, n) in sorted(by_model.items()):
            if k:
                lines.append(
                    f"{model}: {k} of {n} replies ({100 * k / n:.1f}%) not read: the rules found "
                    "no title or names in their style or language (scored unanswered; "
                    "docs/outcomes.md)"
                )
        from pytest_citebench.papers.reasons.judge_report import judge_lines

        return lines + judge_lines(self.name, records)


class Indirect(_Reasons):
    """Sentence -> the cited paper's title (the paper's indirect query)."""

    name = "indirect"
    kind = "indirect"
    query_field = "sentence"
    answers = "title"
    escalation = INDIRECT_ESCALATION
    answer_keys = ("title", "paper_title", "cited_title")

    def messages(self, item: Sample) -> list[Message]:
        return [
            Message("system", INDIRECT_SYSTEM.render(citing_title=item["citing_title"])),
            Message("user", item["sentence"]),
        ]

    def expected(self, item: Sample) -> str:
        return str(item["cited_title"])

    def parse(self, name: str, raw: str) -> Stage:
        return stage(name, raw, clean_title, self.answer_keys)

    def is_correct(self, item: Sample, answer: str) -> bool:
        return same_title(answer, item["cited_title"])

    def same_reading(self, a: str, b: str) -> bool:
        return same_title(a, b)

    def prompt_texts(self, item: Sample) -> tuple[list[str], list[str]]:
        return [item["citing_title"], item["sentence"]], [INDIRECT_SYSTEM.text]

    def judge_answer(
        self,
        item: Sample,
        raw: str,
        sources: list[str],
        instructions: list[str],
        corpus: str | None,
    ) -> Judgement:
        return judge_indirect(item, raw, sources, instructions, corpus)


class Direct(_Reasons):
    """Cited title -> its authors (the paper's direct query)."""

    name = "direct"
    kind = "direct"
    query_field = "cited_title"
    answers = "authors"
    escalation = DIRECT_ESCALATION
    answer_keys = ("authors", "author_names")

    def messages(self, item: Sample) -> list[Message]:
        return [
            Message("system", DIRECT_SYSTEM.render(cited_title=item["cited_title"])),
            Message("user", DIRECT_USER.render()),
        ]

    def expected(self, item: Sample) -> str:
        return str(item["cited_authors"])

    def parse(self, name: str, raw: str) -> Stage:
        return stage(name, raw, clean_authors, self.answer_keys)

    def is_correct(self, item: Sample, answer: str) -> bool:
        return same_authors(answer, item["cited_authors"])

    def same_reading(self, a: str, b: str) -> bool:
        return same_authors(a, b) and same_authors(b, a)

    def prompt_texts(self, item: Sample) -> tuple[list[str], list[str]]:
        return [item["cited_title"]], [DIRECT_SYSTEM.text, DIRECT_USER.text]

    def judge_answer(
        self,
        item: Sample,
        raw: str,
        sources: list[str],
        instructions: list[str],
        corpus: str | None,
    ) -> Judgement:
        # The corpus tells a title written beside the names (another paper's?) apart.
        return judge_direct(
            item, raw, sources, instructions, corpus_titles(corpus), corpus_title_tails(corpus)
        )


class Escalating(_Reasons):
    """Ask; if the model abstains, ask again in the same conversation with more metadata.

    Mixed into :class:`Direct` or :class:`Indirect` (``EscalatingDirect``, ``EscalatingIndirect``),
    which say what is asked and judged. Deployable by default: only an abstention escalates.
    ``oracle=True`` is the paper's protocol, which also escalates a wrong answer, judged against
    the gold; that peeks at the answer key, so it is its own task name and is labelled in every
    report.
    """

    def __init__(self, name: str, steps: tuple[str, ...], *, oracle: bool) -> None:
        self.name = name
        self.steps = steps
        self.oracle = oracle
        self.stages = (self.kind, *steps)
        self.fields = {**REASONS_FIELDS, **{f"cited_{s}": str for s in steps}}
        if oracle:
            self.label = (
                "oracle protocol: escalates wrong answers too, judged against the gold "
                "(the paper's rule); not achievable in deployment"
            )

    def _escalate(self, item: Sample, current: Stage, corpus: str | None) -> bool:
        """Deployable: escalate what names nothing (a pass or an unanswered reply); the oracle
        also escalates every answer that is not correct."""
        outcome = self.judge(item, current, corpus).outcome
        if outcome in ("abstained", "unanswered"):
            return True
        return self.oracle and outcome != "correct"

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        messages = self.messages(item)
        raw, shown = await ask(generate, messages, self.hint(item, suite_corpus))
        stages = [with_shown(self.parse(self.kind, raw), shown)]
        given: dict[str, str] = {}
        for step in self.steps:
            if not self._escalate(item, stages[-1], suite_corpus):
                break
            template = self.escalation[step]
            given[step] = item[f"cited_{step}"]
            messages = [
                *messages,
                Message("assistant", stages[-1].raw),
                Message("user", template.render(value=given[step])),
            ]
            raw, shown = await ask(generate, messages, self.hint(item, suite_corpus, **given))
            stages.append(with_shown(self.parse(step, raw), shown))
        return await self.looked_up(item, Attempt(tuple(stages), corpus=suite_corpus))


class EscalatingDirect(Escalating, Direct):
    """Direct, escalating with the cited paper's abstract (the paper's direct + metadata)."""


class EscalatingIndirect(Escalating, Indirect):
    """Indirect, escalating with the abstract then the authors (the paper's SID)."""


TASKS = (
    Indirect(),
    Direct(),
    EscalatingDirect("direct_metadata", ("abstract",), oracle=False),
    EscalatingDirect("direct_metadata_oracle", ("abstract",), oracle=True),
    EscalatingIndirect("sid", ("abstract", "authors"), oracle=False),
    EscalatingIndirect("sid_oracle", ("abstract", "authors"), oracle=True),
)
