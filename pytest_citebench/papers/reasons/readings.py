"""Two readings of one reply, settled into one outcome (issue 42).

The rules read a reply as text; a reply in a format (a document, Markdown, HTML, LaTeX, a letter)
is read a second time as its parser lays it out (``parsing.structure``). They agree on most
replies; where they differ, the outcome follows what each reading can see:

- **Match first.** A reading that finds the gold in the answer is right: the other one was
  misled by the wrapping (a greeting read as an author, a table's header row as the title), or
  by a title whose colon a document parser took for a key.
- **A document's parser is authoritative.** A reply wholly in a format (JSON, YAML, TOML, XML,
  Python, RIS, SQL, logfmt, Turtle, a wiki template, CSV, a program's assignments, a man page,
  Jira markup, an HTML fragment that starts with a tag, a LaTeX bibliography) has one reading,
  its grammar's: keys, tags and record codes are labels, never answers.
- **Markdown and letters keep the rules' verdict**, which were fitted on such replies, except
  where the rules found nothing to read (*unanswered*) or the layout shows a 'pass' under a
  label that the rules took for a title: the structure says what the answer is.
- **Hallucinated only on evidence.** Where the rules read nothing, a wrong title or person
  counts only from a span the structure *placed* (under a label, in a cell, in a document or a
  letter), never from lines of prose.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from pytest_citebench.metrics.text import normalize
from pytest_citebench.papers.reasons.authors import parse_authors
from pytest_citebench.papers.reasons.echoes import repeats_the_prompt
from pytest_citebench.papers.reasons.gold_match import names_the_gold_people, names_the_gold_title
from pytest_citebench.papers.reasons.judgement import Judgement
from pytest_citebench.papers.reasons.ranks import shown_papers
from pytest_citebench.parsing.envelope import unwrap
from pytest_citebench.parsing.structure import Reading, answer_reading, read_reply

if TYPE_CHECKING:
    from pytest_citebench.api import Sample, Stage


class ReadsReplies(Protocol):
    """What a REASONS task gives the readings: what it asks for and how one text is judged."""

    @property
    def answers(self) -> str: ...

    @property
    def answer_keys(self) -> tuple[str, ...]: ...

    def expected(self, item: Sample) -> str: ...

    def prompt_texts_of(self, item: Sample, stage_name: str) -> tuple[list[str], list[str]]: ...

    def judge_text(
        self,
        item: Sample,
        stage: Stage,
        text: str,
        sources: list[str],
        instructions: list[str],
        corpus: str | None,
    ) -> Judgement: ...


def judge_reply(task: ReadsReplies, item: Sample, stage: Stage, corpus: str | None) -> Judgement:
    """One stage's outcome: the rules' and the structure's readings settled (``read_reply``),
    then, where they found no right answer, the gold looked for in the whole reply
    (``gold_match``: match before extract, whatever the reply's shape)."""
    verdict = _read_reply(task, item, stage, corpus)
    if verdict.outcome not in ("hallucinated", "unanswered", "partial") or verdict.wrong_id:
        # Right, a 'pass', or wrong on evidence that is no reading: an identifier that names
        # another paper or none.
        return verdict
    sources, _instructions = task.prompt_texts_of(item, stage.name)
    shown = shown_papers(getattr(stage, "details", {}))
    text = unwrap(stage.raw, task.answer_keys).text
    gold = task.expected(item)
    if task.answers == "authors":
        if verdict.wrong_title:
            return verdict  # the names given as another paper's authors: wrong whoever they are
        # What retrieval showed is the prompt too: a reply may copy a list back.
        named = names_the_gold_people(text, gold, [*sources, *(p.authors for p in shown)])
        if named is not None:
            return Judgement(
                "correct",
                "every gold author named in full, nobody beside them (the gold matched in the "
                f"whole reply; {verdict.outcome} as read by its shape)",
                named,
            )
        return verdict
    said = verdict.wrong_title or verdict.answer
    citing = str(item.fields.get("citing_title", ""))
    titles = [p.title for p in shown]
    found = names_the_gold_title(text, gold, [citing, *sources], titles, said, corpus)
    if found is None:
        return verdict
    return Judgement(
        "correct",
        f"the gold title, matched in the whole reply ({verdict.outcome} as read by its shape)",
        found,
    )


def _read_reply(task: ReadsReplies, item: Sample, stage: Stage, corpus: str | None) -> Judgement:
    """The reply inside its envelope read by the rules, then (match before extract) the gold's
    people found in prose, then, for a reply in a format, its structure's reading, the two
    settled."""
    sources, instructions = task.prompt_texts_of(item, stage.name)
    # The answer inside its envelope (a <think> block before it, <answer> tags, JSON).
    unwrapped = unwrap(stage.raw, task.answer_keys)
    if unwrapped.envelope and not unwrapped.text.strip():
        return Judgement("unanswered", f"no answer: nothing in {unwrapped.envelope}", "")
    if stage.abstained:
        return Judgement("abstained", "the model wrote 'pass'", "pass")
    verdict = task.judge_text(item, stage, unwrapped.text, sources, instructions, corpus)
    structure = read_reply(unwrapped.text)
    if verdict.outcome == "unanswered" and task.answers == "authors" and structure is None:
        # Match before extract: prose that names every gold author in full is a list.
        gold = [p.text for p in parse_authors(task.expected(item)).persons]
        span = gold_people_span(unwrapped.text, gold)
        if span is not None:
            read = task.judge_text(item, stage, span, sources, instructions, corpus)
            if read.outcome != "unanswered":
                return replace(read, reason=f"{read.reason} (the gold's people, in prose)")
    if structure is None:
        return verdict
    # A reply in a format (a document, Markdown, HTML, LaTeX, a letter) is read a second time,
    # as its parser lays it out: the text under the label that names what was asked, or the
    # spans that can carry an answer (parsing.structure).
    reading = answer_reading(unwrapped.text, task.answers, task.answer_keys)
    if reading is None:
        return verdict
    # A line that says the prompt again (a Turtle reply's citing paper beside the cited one)
    # is no answer while another line is left.
    lines = reading.text.split("\n")
    kept = [x for x in lines if not repeats_the_prompt(x, sources, instructions)]
    text = "\n".join(kept) if kept and reading.document else reading.text
    read = task.judge_text(item, stage, text, sources, instructions, corpus)
    return settle(verdict, read, reading)


def settle(rules: Judgement, structure: Judgement, reading: Reading) -> Judgement:
    """The outcome of a reply read by the rules (``rules``) and by its structure."""
    kind = reading.kind
    if rules.outcome == structure.outcome:
        # The same outcome: a document's reason names what its parser read when the rules
        # judged something else (a comment or a key), not a longer span holding it.
        inside = normalize(structure.answer) in normalize(rules.answer)
        return _read_as(structure, kind) if reading.document and not inside else rules
    if rules.outcome == "correct":
        return rules
    if structure.outcome == "correct":
        return _read_as(structure, kind)
    if reading.document:
        return _read_as(structure, kind)
    if structure.outcome == "abstained":
        return _read_as(structure, kind)
    if rules.outcome == "unanswered":
        # Hallucinated only on evidence: prose lines the rules could not read stay unread
        # unless the structure placed the answer (under a label, in a cell, in a letter).
        if structure.outcome in ("hallucinated", "partial") and not reading.placed:
            return rules
        return _read_as(structure, kind)
    return rules


def _read_as(verdict: Judgement, kind: str) -> Judgement:
    return replace(verdict, reason=f"{verdict.reason} (read as {kind})")


def _folded(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def gold_people_span(text: str, gold_names: list[str]) -> str | None:
    """The stretch of ``text`` from the first gold author named to the last, when every gold
    author is named there in full (match before extract): prose that says "the authors are A, B
    and C" names a list the rules found no layout for. None when any gold author is missing."""
    if not gold_names:
        return None
    folded = _folded(text)
    if len(folded) != len(text):
        return None  # positions would not map back onto the text
    starts, ends = [], []
    for name in gold_names:
        at = folded.find(_folded(name))
        if at < 0:
            return None
        starts.append(at)
        ends.append(at + len(name))
    start, end = min(starts), max(ends)
    # The list goes on past the last gold author ("..., Linchao Bao, Ada Smith"), or began
    # before the first: the stretch is not the whole list.
    if _LIST_GOES_ON.match(text, end) or _LIST_BEGAN.search(text[:start]):
        return None
    return text[start:end]


_LIST_GOES_ON = re.compile(
    r"\s*(?:,|;|&|\band\b)\s*(?:and\s+)?(?:[A-Z]\.\s*)*[^\W\d_][\w'’-]*\s+[^\W\d_a-z]"
)
_LIST_BEGAN = re.compile(r"[^\W\d_][\w.'’-]*\s*(?:,|;|&)\s*$")
