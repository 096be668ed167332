"""REASONS (Saxena et al.): sentence-level citation attribution.

*direct*: given a cited paper's title, name its authors. *indirect*: given the citing paper's title
and one sentence of its related work, name the cited paper's title. Both allow "pass". The prompts
follow the paper and its public code word for word where they can, so numbers stay comparable.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pytest_citebench.api import (
    Attempt,
    Generate,
    Hint,
    ItemScore,
    Message,
    MetricSpec,
    NamedTemplate,
    Outcome,
    Sample,
    Stage,
    Task,
)
from pytest_citebench.metrics.attribution import bleu4, token_f1
from pytest_citebench.metrics.hallucination import hr_code, hr_paper
from pytest_citebench.metrics.text import normalize, same_title, spelling_key
from pytest_citebench.papers.reasons.authors import compare_authors, parse_authors
from pytest_citebench.parsing import (
    ARXIV_ID,
    clean_authors,
    clean_title,
    final_text,
    has_letters,
    is_abstention,
    is_non_answer,
    is_placeholder,
    looks_like_prose,
    not_a_title,
    quoted_spans,
    reads_as_sentence,
    reads_as_title_case,
    strip_restatement,
    title_candidates,
    title_quotes,
)
from pytest_citebench.parsing import find_title as _find_title

PAPER = "REASONS: Saxena et al., Attribution in Scientific Literature: New Benchmark and Methods"

INDIRECT_SYSTEM = NamedTemplate(
    "reasons.indirect.system",
    'I have taken a sentence from the research paper titled "$citing_title", give me the title '
    "of the possible research paper that this sentence is citing to. If you are not able to come "
    "up with the paper title write 'pass'. Don't write anything else.",
)
DIRECT_SYSTEM = NamedTemplate(
    "reasons.direct.system", 'Who were the authors of the research paper "$cited_title"'
)
DIRECT_USER = NamedTemplate(
    "reasons.direct.user",
    "list only author names, formatted as <first name><last name>, separated by comma. Do not "
    "mention the paper in the title, also if you don't know write 'pass'.",
)

#: The version of the REASONS scoring rules: bump it with any rule change that would give the same
#: raw answer another outcome or metric (other papers' baselines stay comparable).
SCORER_VERSION = "4"

REASONS_METRICS: Mapping[str, MetricSpec] = {
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

REASONS_FIELDS: Mapping[str, type | tuple[type, ...]] = {
    "citing_title": str,
    "sentence": str,
    "cited_title": str,
    "cited_authors": str,
}

#: The sample ``new-suite`` writes for every REASONS task (one item serves all six, so it carries
#: the escalations' abstract and the retrieval ids too); a real paper, so bm25 can answer it.
EXAMPLE: Mapping[str, Any] = {
    "citing_title": "An Example Survey of Sequence Models",
    "sentence": "a network architecture based solely on attention mechanisms, dispensing with "
    "recurrence and convolutions",
    "cited_title": "Attention Is All You Need",
    "cited_authors": "Ashish Vaswani, Noam Shazeer, Niki Parmar, Jakob Uszkoreit, Llion Jones, "
    "Aidan N. Gomez, Lukasz Kaiser, Illia Polosukhin",
    "cited_abstract": "We propose the Transformer, a network architecture based solely on "
    "attention mechanisms, dispensing with recurrence and convolutions entirely, for machine "
    "translation.",
    "cited_arxiv_id": "1706.03762",
    "cited_doi": "10.48550/arXiv.1706.03762",
}


def text_metrics(expected: str, answer: str, *, exact: bool | None = None) -> dict[str, float]:
    """The paper's four per-answer numbers; only for answers that name something (correct,
    partial, hallucinated), never for an empty parse: an empty answer would read as "nothing
    invented" (hr_code 0) beside "all wrong" (hr_paper 1)."""
    if not has_letters(answer):
        return {}
    return {
        "bleu": bleu4(expected, answer),
        "f1": token_f1(expected, answer),
        "hr_paper": hr_paper(expected, answer, exact=exact),
        "hr_code": hr_code(expected, answer),
    }


@dataclass(frozen=True)
class Judgement:
    """What a stage's answer is under the taxonomy, and the text the metrics are computed on."""

    outcome: Outcome
    reason: str
    answer: str


def _short(text: str, limit: int = 80) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _runs_of(text: str, instructions: Sequence[str], n: int = 8) -> bool:
    """The text repeats a run of ``n`` consecutive words of the instructions."""
    tokens = normalize(text).split()
    for i in instructions:
        inst = normalize(i).split()
        grams = {tuple(inst[k : k + n]) for k in range(len(inst) - n + 1)}
        if any(tuple(tokens[k : k + n]) in grams for k in range(len(tokens) - n + 1)):
            return True
    return False


def _echoes(text: str, sources: Sequence[str], instructions: Sequence[str]) -> bool:
    """The answer repeats the prompt: a source text whole (the citing title, the sentence,
    the cited title of a direct prompt), most of one, or a run of the instructions."""
    t = normalize(text)
    if not t:
        return False
    words = len(t.split())
    for source in sources:
        ns = normalize(source)
        if not ns:
            continue
        if t == ns or (ns in t and len(ns.split()) >= 3):
            return True
        if t in ns and words >= max(3, 0.6 * len(ns.split())):
            return True
    if any(t in normalize(i) and words >= 3 for i in instructions):
        return True
    # The sentence run together ("Thiswasfollowedbytheemergenceof..."): the same letters.
    joined = "".join(t.split())
    run_together = max(len(w) for w in t.split()) >= 25
    if run_together and any(joined in "".join(normalize(s).split()) for s in sources):
        return True
    # Looser echoes of a base model: a run of eight instruction words, or a long reply made
    # (80%+) of the prompt's own words (the sentence repeated, looped or slightly altered).
    tokens = t.split()
    if _runs_of(text, instructions):
        return True
    # A title the sentence itself mentions (a reference string citing another paper) is a
    # wrong attribution when named alone; it is an echo when the reply reproduces most of the
    # sentence, loops over it, or is prose.
    for source in sources:
        source_words = set(normalize(source).split())
        if words < 8 or not source_words:
            continue
        if sum(w in source_words for w in tokens) < 0.8 * words:
            continue
        covers = len(set(tokens) & source_words) >= 0.75 * len(source_words)
        loops = words >= 2 * len(set(tokens))
        if covers or loops or looks_like_prose(text):
            return True
    return False


def same_authors(answer: str, gold: str) -> bool:
    """The same set of people, in any order, spelling or initialling."""
    persons = parse_authors(answer).persons
    gold_persons = parse_authors(gold).persons
    verdict = compare_authors(persons, gold_persons)
    return bool(gold_persons) and not verdict.invented and verdict.matched == len(gold_persons)


def stage(name: str, raw: str, clean: object) -> Stage:
    """A stage from raw text: "pass" when the model abstained, else the cleaned answer."""
    abstained = is_abstention(raw)
    answer = "pass" if abstained else clean(raw)  # type: ignore[operator]
    return Stage(name=name, raw=raw, answer=answer, abstained=abstained)


_STAGE_GIVEN = {"abstract": "cited_abstract", "authors": "cited_authors"}


class _Reasons(Task):
    """Shared by the REASONS tasks: what the gold is, how an answer is cleaned and compared."""

    name: str
    kind: str  # "direct" (title -> authors) or "indirect" (sentence -> title)
    paper = PAPER
    fields: Mapping[str, type | tuple[type, ...]] = REASONS_FIELDS
    metrics = REASONS_METRICS
    scorer_version = SCORER_VERSION
    example: Mapping[str, Any] | None = EXAMPLE
    # The offline baselines answer every REASONS task by searching the suite's corpus.
    uses_corpus = True

    def messages(self, item: Sample) -> list[Message]:
        if self.kind == "direct":
            return [
                Message("system", DIRECT_SYSTEM.render(cited_title=item["cited_title"])),
                Message("user", DIRECT_USER.render()),
            ]
        return [
            Message("system", INDIRECT_SYSTEM.render(citing_title=item["citing_title"])),
            Message("user", item["sentence"]),
        ]

    def expected(self, item: Sample) -> str:
        return str(item["cited_authors"] if self.kind == "direct" else item["cited_title"])

    def parse(self, name: str, raw: str) -> Stage:
        return stage(name, raw, clean_authors if self.kind == "direct" else clean_title)

    def is_correct(self, item: Sample, answer: str) -> bool:
        if self.kind == "direct":
            return same_authors(answer, item["cited_authors"])
        return same_title(answer, item["cited_title"])

    def _prompt_texts(self, item: Sample, stage_name: str) -> tuple[list[str], list[str]]:
        """(sources, instructions) of the prompt this stage answered: what an echo repeats."""
        if self.kind == "direct":
            sources = [item["cited_title"]]
            instructions = [DIRECT_SYSTEM.text, DIRECT_USER.text]
        else:
            sources = [item["citing_title"], item["sentence"]]
            instructions = [INDIRECT_SYSTEM.text]
        if stage_name in _STAGE_GIVEN and _STAGE_GIVEN[stage_name] in item.fields:
            sources.append(item[_STAGE_GIVEN[stage_name]])
            instructions += [t.text for (kind, _), t in ESCALATION.items() if kind == self.kind]
        return sources, instructions

    def judge(self, item: Sample, stage: Stage) -> Judgement:
        """The outcome of one stage's raw answer (the rules: docs/outcomes.md)."""
        if stage.abstained or is_abstention(stage.raw):
            return Judgement("abstained", "the model wrote 'pass'", "pass")
        sources, instructions = self._prompt_texts(item, stage.name)
        if self.kind == "direct":
            direct = _judge_direct(item, stage.raw, sources, instructions)
            return _with_ids(direct, item, final_text(stage.raw))
        return _judge_indirect(item, stage.raw, sources, instructions)

    def hint(self, item: Sample, corpus: str | None, **extra: str) -> Hint:
        remember_corpus(item.suite, corpus)
        query = item["cited_title"] if self.kind == "direct" else item["sentence"]
        answer: Literal["title", "authors"] = "authors" if self.kind == "direct" else "title"
        return Hint(self.kind, query, item.suite, corpus, extra, answer)

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        raw = await generate(self.messages(item), hint=self.hint(item, suite_corpus))
        return Attempt((self.parse(self.kind, raw),))

    def restage(self, item: Sample, attempt: Attempt, corpus: str | None) -> Attempt:
        """Every recorded stage parsed again from its raw text (``rescore``)."""
        remember_corpus(item.suite, corpus)
        return Attempt(tuple(self.parse(s.name, s.raw) for s in attempt.stages))

    def score(self, item: Sample, attempt: Attempt) -> ItemScore:
        """Scored from the final stage's *raw* text, so a rescore applies today's parser."""
        final = attempt.final
        expected = self.expected(item)
        verdict = self.judge(item, final)
        metrics: dict[str, float] = {}
        if verdict.outcome in ("correct", "partial", "hallucinated"):
            metrics = text_metrics(expected, verdict.answer, exact=verdict.outcome == "correct")
        return ItemScore(verdict.outcome, expected, metrics, verdict.reason)


class Indirect(_Reasons):
    """Sentence -> the cited paper's title (the paper's indirect query)."""

    name = "indirect"
    kind = "indirect"


class Direct(_Reasons):
    """Cited title -> its authors (the paper's direct query)."""

    name = "direct"
    kind = "direct"


class Escalating(_Reasons):
    """Ask; if the model abstains, ask again in the same conversation with more metadata.

    Deployable by default: only an abstention escalates. ``oracle=True`` is the paper's protocol,
    which also escalates a wrong answer, judged against the gold; that peeks at the answer key,
    so it is its own task name and is labelled in every report.
    """

    def __init__(self, name: str, kind: str, steps: tuple[str, ...], *, oracle: bool) -> None:
        self.name = name
        self.kind = kind
        self.steps = steps
        self.oracle = oracle
        self.stages = (kind, *steps)
        self.fields = {**REASONS_FIELDS, **{f"cited_{s}": str for s in steps}}
        if oracle:
            self.label = (
                "oracle protocol: escalates wrong answers too, judged against the gold "
                "(the paper's rule); not achievable in deployment"
            )

    def _escalate(self, item: Sample, current: Stage) -> bool:
        """Deployable: escalate what names nothing (a pass or an unanswered reply); the oracle
        also escalates every answer that is not correct."""
        outcome = self.judge(item, current).outcome
        if outcome in ("abstained", "unanswered"):
            return True
        return self.oracle and outcome != "correct"

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        messages = self.messages(item)
        raw = await generate(messages, hint=self.hint(item, suite_corpus))
        stages = [self.parse(self.kind, raw)]
        given: dict[str, str] = {}
        for step in self.steps:
            if not self._escalate(item, stages[-1]):
                break
            template = ESCALATION[(self.kind, step)]
            given[step] = item[f"cited_{step}"]
            messages = [
                *messages,
                Message("assistant", stages[-1].raw),
                Message("user", template.render(value=given[step])),
            ]
            raw = await generate(messages, hint=self.hint(item, suite_corpus, **given))
            stages.append(self.parse(step, raw))
        return Attempt(tuple(stages))


# The follow-up turns, worded as the REASONS code words them.
ESCALATION = {
    ("direct", "abstract"): NamedTemplate(
        "reasons.direct.abstract",
        "let me give you some more context by providing the abstract of the research paper. $value",
    ),
    ("indirect", "abstract"): NamedTemplate(
        "reasons.sid.abstract",
        "let me give you some more context by providing the abstract of the research paper it is "
        "citing to. $value",
    ),
    ("indirect", "authors"): NamedTemplate(
        "reasons.sid.authors",
        "let me give you some more context by providing the author names of the research paper "
        "it is citing to. $value",
    ),
}


def _judge_direct(
    item: Sample, raw: str, sources: Sequence[str], instructions: Sequence[str]
) -> Judgement:
    # The names around the cited title: before it (a reference string), or after it ("<title>
    # by A, B", 'The research paper "<title>" was authored by Dr. A, a ...', '... are:\n- A').
    text = clean_authors(raw, item["cited_title"])
    title_words = tuple(normalize(item["cited_title"]).split())
    names = re.sub(r"(?:^|,\s*)<>(?=,|$)", "", text).strip(" ,")
    if not has_letters(names):
        if "<>" in text or is_placeholder(final_text(raw)):
            return Judgement("unanswered", f"template placeholder: {_short(final_text(raw))}", "")
        if title_words and _find_title(title_words, final_text(raw)):
            return Judgement("unanswered", "repeats the cited title, names no author", "")
        return Judgement("unanswered", "nothing name-like left after cleaning", "")
    if _echoes(names, sources, instructions):
        return Judgement("unanswered", f"echoes the prompt: {_short(names)}", "")
    parsed = parse_authors(text)
    if not parsed.persons:
        if "<>" in text:
            return Judgement("unanswered", f"template placeholder: {_short(final_text(raw))}", "")
        return Judgement("unanswered", f"no name-like span: {_short(names)}", "")
    gold = parse_authors(item["cited_authors"]).persons
    verdict = compare_authors(parsed.persons, gold)
    answer = ", ".join(p.text for p in parsed.persons) + (", et al." if parsed.et_al else "")
    if verdict.invented:
        shown = [
            name + (f" (repeated {n} times)" if n > 1 else "")
            for name, n in zip(verdict.invented, verdict.repeats or (1,) * 99, strict=False)
        ]
        names_shown = ", ".join(shown[:4]) + (", …" if len(shown) > 4 else "")
        return Judgement(
            "hallucinated",
            f"{len(verdict.invented)} author(s) not in the gold: {names_shown}",
            answer,
        )
    if verdict.matched == verdict.gold:
        return Judgement("correct", f"the same {verdict.gold} author(s) as the gold", answer)
    et_al = ' with "et al."' if parsed.et_al else ""
    return Judgement(
        "partial",
        f"names {verdict.matched} of {verdict.gold} gold authors{et_al}, none invented",
        answer,
    )


_CORPUS_FILES: dict[str, str] = {}


def remember_corpus(suite: str, corpus: str | None) -> None:
    """The suite's corpus file, noted when an item is solved or restaged (score has only the
    item), so the judge can tell a real paper's title from prose."""
    if corpus:
        _CORPUS_FILES[suite] = corpus


@functools.lru_cache(maxsize=64)
def _titles_of(path: str) -> frozenset[str]:
    from pytest_citebench.jsonl import read_objects

    titles = set()
    for record in read_objects(path):
        if isinstance(record.get("title"), str):
            titles.add(normalize(record["title"]))
    return frozenset(titles)


def corpus_titles(suite: str) -> frozenset[str]:
    """The normalized titles of the suite's corpus (empty when unknown), so a real paper's
    title is judged a wrong attribution, never prose."""
    path = _CORPUS_FILES.get(suite)
    try:
        return _titles_of(path) if path else frozenset()
    except (OSError, ValueError):
        return frozenset()  # the corpus is checked when the suite loads; here it only helps


_CONTENT = re.compile(r"[^\W\d_]{3,}")
_FUNCTION_TEXT = (
    "the and for with from into onto over under via using towards toward are was were its"
)
_FUNCTION = frozenset(_FUNCTION_TEXT.split())


def _content_words(text: str) -> list[str]:
    """Words of three letters or more, not function words, singular and in American spelling."""
    return [spelling_key(w) for w in _CONTENT.findall(normalize(text)) if w not in _FUNCTION]


def _is_citing_title(text: str, citing: str, sentence: str = "") -> bool:
    """The citing title copied back, whole or not: the same title; or a span of three content
    words or more, at least half of them from the citing title and four fifths from the citing
    title and the sentence (a model that copies the title stops at the prompt's line break,
    "Prediction and Power in Molecular Sensors: Uncertainty and Dissipation", or garbles it
    with the sentence's words, "Opti- mizes for Accelerating Iterative Machine Learning"). A
    new title built on a few of its words ("... : A Case Study on Data Refresher ...") is not."""
    if same_title(text, citing):
        return True
    words = _content_words(text)
    if len(words) < 3:
        return False
    citing_words = set(_content_words(citing))
    known = citing_words | set(_content_words(sentence))
    in_citing = sum(w in citing_words for w in words)
    not_citing = len(words) - in_citing
    new = sum(w not in known for w in words)
    if 2 * in_citing < len(words):
        return False
    # At most one word in five the citing title lacks, or two (a third at most) from the sentence.
    if not_citing <= 1 and 5 * not_citing <= len(words):
        return True
    # Garbled with the sentence's PDF text ("Opti- mizes for Accelerating ..."): a line-break
    # hyphen, every word from the prompt, at most two (a third) outside the citing title.
    garbled = re.search(r"[^\W\d_]-\s+[^\W\d_]", text) is not None
    return garbled and new == 0 and not_citing <= 2 and 3 * not_citing <= len(words)


def _identifiers(text: str, item: Sample) -> tuple[str | None, str]:
    """What the DOIs and arXiv ids given with an answer say, checked offline like ArxEval's:
    against the item's own record (its arXiv id, its DOI), then the run's recorded registry
    responses (``--citebench-doi-offline-dir``). ("wrong", why) when one names another paper or
    is recorded as not existing, (None, note) otherwise; a DOI nothing offline can confirm is
    "unverifiable", never correct by itself."""
    from pytest_citebench.doi.extract import extract_dois

    arxiv = str(item.fields.get("cited_arxiv_id") or "").split("v")[0]
    doi = str(item.fields.get("cited_doi") or "").lower()
    notes: list[str] = []
    prompt = " ".join(str(item.fields.get(f) or "") for f in ("sentence", "cited_abstract"))
    # An id the prompt itself holds (a reference string in the sentence) is an echo, not a claim.
    ids = {m["id"] for m in ARXIV_ID.finditer(text)} - {m["id"] for m in ARXIV_ID.finditer(prompt)}
    for found in sorted(ids):
        if arxiv and found != arxiv:
            return "wrong", f"arXiv {found} is not the cited paper's ({arxiv})"
        notes.append(f"arXiv {found} " + ("matches the cited paper" if arxiv else "unverifiable"))
    for found in sorted(set(extract_dois(text)) - set(extract_dois(prompt))):
        if found.startswith("10.48550/arxiv."):
            continue  # an arXiv DOI: checked above as its arXiv id
        if doi and found == doi:
            notes.append(f"DOI {found} matches the cited paper")
            continue
        wrong, note = _recorded_doi(found, str(item["cited_title"]))
        if wrong:
            return "wrong", note
        notes.append(note)
    return None, "; ".join(notes)


def _recorded_doi(doi: str, title: str) -> tuple[bool, str]:
    """(names another paper, why) for a DOI by the run's recorded registry responses: a recorded
    "not found" is an invented DOI and a registered title that is not the cited paper's another
    paper; no recording (or only a failed lookup) leaves it unverifiable."""
    from pytest_citebench.doi.config import doi_config, recorded_resolver

    recorded = recorded_resolver(doi_config())
    if recorded is None:
        return False, f"DOI {doi} unverifiable offline (no record of it)"
    check = recorded.check(doi, title)
    if check.exists is False:
        return True, f"DOI {doi} does not exist (recorded registry responses: not found)"
    if check.exists is None:
        why = f": {check.error}" if check.error else ""
        return False, f"DOI {doi} unverifiable offline (no recorded answer{why})"
    if check.title_match is False:
        registered = check.registered_titles[0] if check.registered_titles else "?"
        return True, f"DOI {doi} is registered to another paper ({registered!r}, {check.source})"
    if check.title_match is None:
        return False, f"DOI {doi} exists ({check.source}) but its title could not be compared"
    return False, f"DOI {doi} is the cited paper's (recorded {check.source})"


def _with_ids(judgement: Judgement, item: Sample, text: str) -> Judgement:
    """The judgement with the answer's identifiers checked: a wrong arXiv id makes the answer
    a wrong citation; the others are noted in the reason."""
    verdict, note = _identifiers(text, item)
    if verdict == "wrong" and judgement.outcome in ("correct", "unanswered"):
        return Judgement("hallucinated", f"cites another paper: {note}", judgement.answer)
    if verdict == "wrong" or note:
        return Judgement(judgement.outcome, f"{judgement.reason}; {note}", judgement.answer)
    return judgement


def _judge_indirect(
    item: Sample, raw: str, sources: Sequence[str], instructions: Sequence[str]
) -> Judgement:
    text = strip_restatement(final_text(raw))
    return _with_ids(_judge_title(item, text, raw, sources, instructions), item, text)


_PASS_CUE = re.compile(r"(?:sentence|title|titled|answer|paper|is|be|:)\s*$", re.IGNORECASE)


_PAPER_CUE = re.compile(
    r"\b(?:titled|entitled|paper|article|work|study|publication|cites?|citing(?:\s+to)?|"
    r"referencing|reference\s+to|refers\s+to|is)\s*[,:]?\s*[\"“'‘«]?$",
    re.IGNORECASE,
)


def _sentence_quoted(title: str, text: str, sentence: str) -> bool:
    """A quoted span made of the sentence's own words, not introduced as a paper ('"Expressive
    policy representation without prior" is a type of ...', 'concise: "Perspective effects"'):
    the sentence quoted back. Introduced as a paper ('cites "X"', 'a paper titled "X"'), a
    title the sentence mentions stays a wrong attribution."""
    words = _content_words(title)
    sentence_words = set(_content_words(sentence))
    if len(words) < 2 or sum(w not in sentence_words for w in words) * 10 > len(words):
        return False
    at = text.find(title)
    return at >= 0 and not _PAPER_CUE.search(text[:at])


def _quoted_sentence(text: str) -> bool:
    """A quoted span that is a sentence, not a title: fifteen words or more ending in a full
    stop, not in Title Case ('the essence of the sentence: "The potential for ... precision."')."""
    words = text.split()
    return len(words) >= 15 and text.rstrip().endswith(".") and not reads_as_title_case(text)


def _quoted_pass(text: str) -> bool:
    """A quoted "pass" given as the answer ('The sentence "Pass" is ...', 'titled "Pass"') and
    no title beside it; "pass" quoted as a word ('"pass" is a common abbreviation') is not."""
    passes = [
        q
        for q in quoted_spans(text)
        if normalize(q[2]) == "pass" and (q[0] == 0 or _PASS_CUE.search(text[: q[0]]))
    ]
    others = [q for q in title_quotes(text) if normalize(q[2]) != "pass"]
    return bool(passes) and not others


def _judge_title(
    item: Sample, text: str, raw: str, sources: Sequence[str], instructions: Sequence[str]
) -> Judgement:
    candidates = title_candidates(raw)
    gold, citing, sentence = item["cited_title"], item["citing_title"], item["sentence"]
    flat = " ".join(text.split())  # a quoted title may run over a line break
    quoted = [q[2] for q in quoted_spans(flat)]

    def echo(span: str) -> bool:
        return _is_citing_title(span, citing, sentence)

    if not same_title(gold, citing):
        for candidate in candidates:
            if same_title(candidate, gold):
                return Judgement("correct", "the gold title", candidate)

    if any(echo(c) for c in [*candidates, *quoted]):
        # The citing title copied back is no answer, however introduced; a second title the
        # reply names as the cited one ('... titled "<citing>" and cites the paper "X"') is.
        others = [
            q[2]
            for q in title_quotes(flat)
            if not echo(q[2]) and (len(q[2].split()) >= 2 or normalize(q[2]) == "pass")
        ]
        if others and normalize(others[0]) == "pass":
            return Judgement("abstained", "echoes the citing title, then says 'pass'", "pass")
        if not others:
            # A self-citation (gold = citing title) is credited only when the reply is that
            # title alone: named in a sentence it cannot be told from the echo.
            alone = [c for c in candidates if normalize(c) == normalize(" ".join(text.split()))]
            if same_title(gold, citing) and any(same_title(c, gold) for c in alone):
                return Judgement("correct", "the gold title (a self-citation, named alone)", gold)
            return Judgement("unanswered", f"echoes the citing title: {_short(citing)}", "")
        candidates = others
    elif _quoted_pass(flat):
        return Judgement("abstained", "gives a quoted 'pass' as the answer", "pass")
    else:
        if not candidates:
            return Judgement("unanswered", "no title-like span", "")
        # A quoted title of its own ('Here's a possible title ...: "X"') is read even when the
        # reply around it repeats the prompt.
        own = [
            q[2]
            for q in title_quotes(flat)
            if len(q[2].split()) >= 2 and not _quoted_sentence(q[2])
        ]
        # ... but not when the reply writes the prompt's own instructions around it.
        if (not own or _runs_of(text, instructions)) and _echoes(text, sources, instructions):
            return Judgement("unanswered", f"echoes the prompt: {_short(text)}", "")
        if own and normalize(candidates[0]) not in {normalize(q) for q in quoted}:
            candidates = [*own, *candidates]  # the quoted title, not a ramble before it
    for candidate in candidates:
        if same_title(candidate, gold):
            return Judgement("correct", "the gold title", candidate)
    title = candidates[0]
    if is_non_answer(title):
        return Judgement("unanswered", f"no title, only: {_short(title)}", "")
    if is_placeholder(title):
        return Judgement("unanswered", f"template placeholder: {_short(title)}", "")
    if _echoes(title, [sentence], instructions):
        return Judgement("unanswered", f"echoes the prompt: {_short(title)}", "")
    if normalize(title) in corpus_titles(item.suite):
        # A paper of the suite's own corpus is a real paper, whatever its title looks like
        # ("If beam search is the answer, what was the question?", "HyperNetworks").
        return Judgement(
            "hallucinated",
            f"names a title that is not the gold (a corpus paper): {_short(title)}",
            title,
        )
    if looks_like_prose(title) or reads_as_sentence(title) or not has_letters(normalize(title)):
        return Judgement("unanswered", f"a sentence, not a title: {_short(title)}", "")
    quoted_title = any(normalize(q) == normalize(title) for q in quoted)
    if quoted_title and _sentence_quoted(title, flat, sentence):
        return Judgement("unanswered", f"quotes the sentence back: {_short(title)}", "")
    why = None if quoted_title else not_a_title(title, text)
    if why:
        return Judgement("unanswered", f"{why}: {_short(title)}", "")
    return Judgement("hallucinated", f"names a title that is not the gold: {_short(title)}", title)


TASKS = (
    Indirect(),
    Direct(),
    Escalating("direct_metadata", "direct", ("abstract",), oracle=False),
    Escalating("direct_metadata_oracle", "direct", ("abstract",), oracle=True),
    Escalating("sid", "indirect", ("abstract", "authors"), oracle=False),
    Escalating("sid_oracle", "indirect", ("abstract", "authors"), oracle=True),
)
