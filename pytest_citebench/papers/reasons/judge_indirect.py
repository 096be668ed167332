"""REASONS indirect: a reply naming the paper a sentence cites, judged against the gold title.

The rules (docs/outcomes.md) are the functions of ``RULES``, tried in order. The first ones
decide which titles the reply names (the citing title copied back is no answer, nor an echo of
the prompt; a quoted 'pass' is a pass); the rest judge the first title it names: the gold is
*correct*; a paper of the suite's corpus or anything shaped like a title is *hallucinated*;
prose, placeholders and the sentence quoted back are *unanswered*.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pytest_citebench.api import Sample
from pytest_citebench.metrics.text import normalize, same_title, title_words
from pytest_citebench.papers.reasons.echoes import echoes, runs_of
from pytest_citebench.papers.reasons.identifiers import with_ids
from pytest_citebench.papers.reasons.judgement import Judgement, Rule, first_judgement, short
from pytest_citebench.papers.reasons.title_reply import (  # noqa: F401 (re-exported)
    _ALTERNATIVE_CUE,
    _OPENING_SUBJECT,
    TitleReply,
    _offered_as_alternative,
    _quoted_pass,
    _sentence_quoted,
    _stated_in_prose,
    _system_name,
    corpus_system_names,
    corpus_title_tails,
    corpus_titles,
    is_citing_title,
    supplemented,
)
from pytest_citebench.parsing import (
    has_letters,
    is_non_answer,
    is_placeholder,
    looks_like_prose,
    not_a_title,
    reads_as_sentence,
)
from pytest_citebench.parsing.title_match import find_title

# --------------------------------------------------------------------------- the rules, in order


def names_the_gold(r: TitleReply) -> Judgement | None:
    """Any title-like span that is the gold, unless the gold is the citing title itself or
    the reply offers it only as a second choice."""
    if not same_title(r.gold, r.citing):
        golds = {r.gold, supplemented(r.gold)}
        for candidate in r.candidates:
            if any(same_title(candidate, g) for g in golds) and not _offered_as_alternative(
                r, candidate
            ):
                return Judgement("correct", "the gold title", candidate)
    return None


def settles_in_prose(r: TitleReply) -> Judgement | None:
    """A reply written as reasoning prose that settles on a quoted title ("The sentence reports
    accuracy on "CoMA" ... so the cited paper is most likely "Generating 3D Faces using
    Convolutional Mesh Autoencoders"."): that title is its answer, right or wrong."""
    stated = _stated_in_prose(r)
    if stated is None:
        return None
    if same_title(stated, r.gold) and not same_title(r.gold, r.citing):
        return Judgement("correct", "the gold title, named in prose", stated)
    if same_title(stated, r.gold):
        return None  # a self-citation: the echo rules decide
    return Judgement(
        "hallucinated",
        f"names a title that is not the gold (in prose): {short(stated)}",
        stated,
        wrong_title=stated,
    )


def passes_after_the_citing_title(r: TitleReply) -> Judgement | None:
    if r.echoes_citing and r.others and normalize(r.others[0]) == "pass":
        return _echoed_pass(r) or Judgement(
            "abstained", "echoes the citing title, then says 'pass'", "pass"
        )
    return None


_QUOTED_PASS = re.compile(r"""(\S+\s+\S+\s+\S+)\s+["'‘“]pass["'’”]""", re.IGNORECASE)


def _echoed_pass(r: TitleReply) -> Judgement | None:
    """*unanswered* when the reply's 'pass' is the instructions' own, in an echo of them."""
    if _the_instructions_pass(r) and echoes(r.text, r.sources, r.instructions):
        return Judgement("unanswered", f"echoes the prompt: {short(r.text)}", "")
    return None


def _the_instructions_pass(r: TitleReply) -> bool:
    """Every 'pass' of the reply is the one the instructions quote, copied with the words that
    lead to it ("... If you cannot find it, cite the title 'pass'"): Gemma 3 270M echoed the
    agent's whole system turn, and its copy of that line had read as the model passing (13 of 25
    items). A 'pass' the model writes as its answer ("the title ... is "Pass"") is its own."""
    leads = {
        " ".join(normalize(m.group(1)).split()[-3:])
        for i in r.instructions
        for m in _QUOTED_PASS.finditer(i)
    }
    words = normalize(r.text).split()
    passes = [k for k, w in enumerate(words) if w == "pass"]
    return bool(leads and passes) and all(
        " ".join(words[max(0, k - 3) : k]) in leads for k in passes
    )


def self_citation_named_alone(r: TitleReply) -> Judgement | None:
    """A self-citation (gold = citing title) is credited only when the reply is that title
    alone: named in a sentence it cannot be told from the echo."""
    if not r.echoes_citing or r.others or not same_title(r.gold, r.citing):
        return None
    alone = [c for c in r.candidates if normalize(c) == normalize(" ".join(r.text.split()))]
    if any(same_title(c, r.gold) for c in alone):
        return Judgement("correct", "the gold title (a self-citation, named alone)", r.gold)
    return None


def echoes_the_citing_title(r: TitleReply) -> Judgement | None:
    """The citing title copied back is no answer, however introduced."""
    if r.echoes_citing and not r.others:
        return Judgement("unanswered", f"echoes the citing title: {short(r.citing)}", "")
    return None


def gives_a_quoted_pass(r: TitleReply) -> Judgement | None:
    if not r.echoes_citing and _quoted_pass(r.flat):
        return _echoed_pass(r) or Judgement(
            "abstained", "gives a quoted 'pass' as the answer", "pass"
        )
    return None


def no_title_like_span(r: TitleReply) -> Judgement | None:
    if not r.echoes_citing and not r.candidates:
        return Judgement("unanswered", "no title-like span", "")
    return None


def echoes_the_prompt(r: TitleReply) -> Judgement | None:
    """The reply repeats the prompt, and no quoted title of its own is read from it (nor when
    it writes the prompt's own instructions around one)."""
    if r.echoes_citing:
        return None
    if (not r.own or runs_of(r.text, r.instructions)) and echoes(r.text, r.sources, r.instructions):
        return Judgement("unanswered", f"echoes the prompt: {short(r.text)}", "")
    return None


def names_the_gold_among_them(r: TitleReply) -> Judgement | None:
    for candidate in r.named:
        if same_title(candidate, r.gold) and not _offered_as_alternative(r, candidate):
            return Judgement("correct", "the gold title", candidate)
    return None


def a_non_answer(r: TitleReply) -> Judgement | None:
    if is_non_answer(r.title):
        return Judgement("unanswered", f"no title, only: {short(r.title)}", "")
    return None


def a_placeholder(r: TitleReply) -> Judgement | None:
    if is_placeholder(r.title):
        return Judgement("unanswered", f"template placeholder: {short(r.title)}", "")
    return None


def echoes_the_sentence(r: TitleReply) -> Judgement | None:
    if echoes(r.title, [r.sentence], r.instructions):
        return Judgement("unanswered", f"echoes the prompt: {short(r.title)}", "")
    return None


def contains_the_gold(r: TitleReply) -> Judgement | None:
    """The gold title written word for word somewhere in the reply ("...we propose ICON
    (Implicit Clothed humans Obtained from Normals)...", a title in a long paragraph), not
    offered as a second choice, and not copied from the prompt (no text of the prompt holds
    it: the sentence, the citing title, an abstract an escalation gave). Three words or more,
    so a phrase is not taken for a title."""
    words = tuple(w for w in re.split(r"[\W_]+", r.gold) if w)
    if len(words) < 3 or same_title(r.gold, r.citing):
        return None
    found = find_title(words, r.flat)
    if found is None or _ALTERNATIVE_CUE.search(r.flat[: found.start()]):
        return None
    if not (looks_like_prose(r.title) or reads_as_sentence(r.title)):
        return None  # a title of its own that holds the gold ("<gold>: A Survey of ...")
    if any(find_title(words, " ".join(src.split())) for src in (*r.sources, r.citing)):
        return None  # the prompt holds it (the sentence, or an abstract an escalation gave)
    return Judgement("correct", "the gold title, written in the reply", found.group(0))


_ACRONYM = re.compile(r"\s*\(([A-Z][A-Za-z0-9\-]{1,11})\)")


def _version_of(title: str, gold: str) -> str | None:
    """How ``title`` is another version of the gold's (docs/outcomes.md, title variants), or
    None: with an acronym in brackets the gold lacks ("Online Fast Adaptation and Knowledge
    Accumulation (OSAKA): a New Approach ..."), or the gold with one or two words left out
    inside it, six words or more kept (the journal version "... testing problem for random
    graphs" of the arXiv "... for random dot product graphs"). A title cut at its end is not
    a version but the gold cut short (*partial*)."""
    bare = _ACRONYM.sub("", title)
    if bare != title and not _ACRONYM.search(gold) and same_title(bare, gold):
        return "with an acronym in brackets"
    answer, whole = title_words(title), title_words(gold)
    left_out = len(whole) - len(answer)
    if not 1 <= left_out <= 2 or len(answer) < 6 or whole[: len(answer)] == answer:
        return None
    rest = iter(whole)
    if all(word in rest for word in answer):  # in order: the gold with words left out
        return f"{left_out} word(s) of it left out inside"
    return None


def names_the_gold_in_part(r: TitleReply) -> Judgement | None:
    """The gold's main title without its subtitle (gold "X: Y", reply "X"): the same paper,
    *correct*; only its system's one-word name ("BERT" for "BERT: Pre-training of ..."), or the
    gold title cut short (its first half or more, four words or more), *partial*: it names the
    work but not the whole title. Never *hallucinated* (docs/outcomes.md: title variants). A
    main title that is another paper's full title in the suite's corpus was judged before."""
    main = re.split(r"\s*:\s+|\s+[-–—]\s+", r.gold, maxsplit=1)[0]
    version = _version_of(r.title, r.gold)
    if version:
        return Judgement("correct", f"the gold title, {version}", r.title)
    answer, gold = normalize(r.title).split(), normalize(r.gold).split()
    cut_short = 4 <= len(answer) < len(gold) and 2 * len(answer) >= len(gold)
    if cut_short and gold[: len(answer)] == answer:
        return Judgement("partial", f"the gold title, cut short: {short(r.title)}", r.title)
    if main == r.gold or not same_title(r.title, main):
        return None
    if len(main.split()) == 1:
        why = f"names the paper by its system's name only: {short(main)}"
        return Judgement("partial", why, main)
    return Judgement("correct", "the gold's main title, without its subtitle", r.title)


def _people(names: str) -> list[str]:
    """A list of names as its words, the list's "and" / "&" left out ("A, B, and C" = "A, B,
    C")."""
    return [w for w in normalize(names.replace("&", " and ")).split() if w != "and"]


def _a_phrase_of(title: str, abstract: str) -> bool:
    """A "title" that is a phrase of the abstract, read as no title reads: lower case, or
    opening as a sentence does ('a section marked by "We demonstrate"', 'the "trust score"').
    A name from it ("BERT", the gold's system) is left to the rules after this one."""
    words = normalize(title).split()
    if not words or f" {' '.join(words)} " not in f" {normalize(abstract)} ":
        return False
    return title[:1].islower() or words[0] in {"we", "our", "this", "these", "it", "in", "to"}


def copies_what_it_was_given(r: TitleReply) -> Judgement | None:
    """A "title" that is what an escalation gave, quoted back: a run of eight words or more of
    the cited paper's abstract ('a paper titled "Time-series data with missing values are
    commonly encountered in many fields ..."'), a phrase of it that reads as no title (scorer
    8: "We demonstrate", "trust score"), or the author names it gave ('"Hadi
    Esmaeilzadeh, Reza Vaezi" is a title that refers to ...'): the prompt copied, no citation
    named. Only what an escalation gave counts: a title the sentence itself mentions is judged
    by the rules after this one (named alone, a wrong attribution)."""
    given = {field: r.item.fields.get(field) for field in ("cited_abstract", "cited_authors")}
    shown = {
        field: text for field, text in given.items() if isinstance(text, str) and text in r.sources
    }
    abstract, authors = shown.get("cited_abstract"), shown.get("cited_authors")
    if abstract and (runs_of(r.title, [abstract]) or _a_phrase_of(r.title, abstract)):
        return Judgement("unanswered", f"copies the abstract it was given: {short(r.title)}", "")
    if authors and _people(r.title) == _people(authors):
        return Judgement("unanswered", f"copies the names it was given: {short(r.title)}", "")
    return None


def names_a_corpus_paper(r: TitleReply) -> Judgement | None:
    """A paper of the suite's own corpus is a real paper, whatever its title looks like
    ("If beam search is the answer, what was the question?", "HyperNetworks")."""
    if normalize(r.title) in r.corpus:
        return Judgement(
            "hallucinated",
            f"names a title that is not the gold (a corpus paper): {short(r.title)}",
            r.title,
            wrong_title=r.title,
        )
    return None


def names_a_corpus_paper_by_its_system(r: TitleReply) -> Judgement | None:
    """Prose that quotes a system's name as what the cited paper is about ('The method is
    described as "GAN2X"'), or opens with it as its subject ("The MultiWOZ 2.1 dataset is
    ..."), the name of exactly one paper of the suite's corpus other than the
    gold and not a word of the prompt's sentence or citing title: it names that paper, wrongly
    (the gold's own system name is *partial*, ``names_the_gold_in_part``). Quoting the gold's
    name beside it, or two papers' names, settles on none."""
    if not (looks_like_prose(r.title) or reads_as_sentence(r.title)):
        return None
    systems = corpus_system_names(r.corpus_path)
    if not systems:
        return None
    prompt = f"{r.sentence} {r.citing}".casefold()
    gold_name = _system_name(r.gold)[0].casefold()
    named = set()
    opening = _OPENING_SUBJECT.match(r.flat)
    for quote in [*r.quoted, *([opening.group(1)] if opening else [])]:
        word = " ".join(quote.strip(" .,;:!?*_").split()).casefold()
        if word == gold_name:
            return None
        if word in systems and not re.search(rf"(?<!\w){re.escape(word)}(?!\w)", prompt):
            named.add(systems[word])
    if len(named) != 1:
        return None
    (title,) = named
    return Judgement(
        "hallucinated",
        f"names a corpus paper by its system's name: {short(title)}",
        title,
        wrong_title=title,
    )


def a_sentence(r: TitleReply) -> Judgement | None:
    title = r.title
    if looks_like_prose(title) or reads_as_sentence(title) or not has_letters(normalize(title)):
        return Judgement("unanswered", f"a sentence, not a title: {short(title)}", "")
    return None


def quotes_the_sentence_back(r: TitleReply) -> Judgement | None:
    if r.title_is_quoted and _sentence_quoted(r.title, r.flat, r.sentence):
        return Judgement("unanswered", f"quotes the sentence back: {short(r.title)}", "")
    return None


def not_shaped_like_a_title(r: TitleReply) -> Judgement | None:
    """An unquoted span that reads as no title (``parsing.not_a_title`` says why)."""
    why = None if r.title_is_quoted else not_a_title(r.title, r.text)
    if why:
        return Judgement("unanswered", f"{why}: {short(r.title)}", "")
    return None


def names_another_title(r: TitleReply) -> Judgement:
    """The last rule: a title that is not the gold."""
    return Judgement(
        "hallucinated",
        f"names a title that is not the gold: {short(r.title)}",
        r.title,
        wrong_title=r.title,
    )


#: In order; the first that judges the reply wins, and the last judges every reply.
RULES: tuple[Rule[TitleReply], ...] = (
    names_the_gold,
    settles_in_prose,
    passes_after_the_citing_title,
    self_citation_named_alone,
    echoes_the_citing_title,
    gives_a_quoted_pass,
    no_title_like_span,
    echoes_the_prompt,
    names_the_gold_among_them,
    a_non_answer,
    a_placeholder,
    echoes_the_sentence,
    copies_what_it_was_given,
    names_a_corpus_paper,
    names_the_gold_in_part,
    contains_the_gold,
    names_a_corpus_paper_by_its_system,
    a_sentence,
    quotes_the_sentence_back,
    not_shaped_like_a_title,
    names_another_title,
)


def judge_indirect(
    item: Sample,
    raw: str,
    sources: Sequence[str],
    instructions: Sequence[str],
    corpus: str | None,
) -> Judgement:
    """The outcome of an indirect reply that is not a 'pass', its identifiers checked;
    ``corpus`` is the suite's corpus file (its titles are real papers)."""
    reply = TitleReply(item, raw, sources, instructions, corpus_titles(corpus), corpus)
    return with_ids(first_judgement(RULES, reply), item, reply.text)
