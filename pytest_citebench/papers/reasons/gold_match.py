"""Match before extract, across the whole reply (issue 42).

Every reader of a reply's *shape* fails first on a shape it never saw: a key glued to the value,
a box drawn around the answer, a diff's ``+`` line, a quiz's option letter. Ten fresh rounds of
deployment styles showed that almost every right answer the shape readers missed still holds
the gold, written whole, somewhere in the reply. So before a reply's shape decides that it named
nothing or something else, the run's own knowledge (the gold) is looked for in all of it:

- **a title**: the gold's words in order (any punctuation or markup between them), at a place
  where a title ends (not "<gold>: A Survey of ..." or "<gold> in Speech Separation", another
  paper's longer title), not offered as a second choice, not copied from the prompt;
- **people**: every gold author named in full (a given name or an initial with the surname, in
  any order) in the runs of capitalised words that names are made of, and nobody else beside
  them: no other full name between the first gold author and the last, and the list does not
  go on past them or begin before them.

What this finds is never a guess: it is the gold itself, so it can only turn a missed right
answer into *correct*. It never decides *hallucinated*, and it stands back wherever the reply
settles on another title (a paper the run knows, a title after the gold's last mention as a
quiz's answer key is, a title the gold is a bracketed aside to), or the prompt itself held the
gold's words (an escalation's abstract; under retrieval, unless the reply names only the gold of
the papers shown: a list copied back names them all).
Text only: no format, no word list of labels.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pytest_citebench.metrics.text import same_title, spelling_key
from pytest_citebench.papers.reasons.authors import Person, parse_authors, person, same_person
from pytest_citebench.papers.reasons.known_papers import corpus_papers, packaged
from pytest_citebench.parsing.names import SURNAME_PARTICLES
from pytest_citebench.parsing.prose import looks_like_prose
from pytest_citebench.parsing.titles import not_a_title, reads_as_sentence

# --------------------------------------------------------------------------- titles


def _fold(text: str) -> str:
    """Case and accents folded, one character for one: positions stay those of ``text``. Every
    check of a reply folds it, and the prompt's and the shown list's texts again for each: ASCII
    (most replies) folds as ``lower`` does, and other characters are folded once each."""
    if text.isascii():
        return text.lower()
    return "".join(map(_fold_char, text))


@functools.lru_cache(maxsize=8192)
def _fold_char(ch: str) -> str:
    base = "".join(
        c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c)
    ).casefold()
    return base if len(base) == 1 else ch.casefold()[:1] or ch


#: After the title: another title's words go on on the same line, as a subtitle ("<gold>: A
#: Survey of ...") or as more words ("<gold> in Speech Separation").
_GOES_ON = re.compile(r"[ \t\u00a0]*(?:[:\-–—][ \t\u00a0]*)?[^\W_]", re.UNICODE)
#: Before the title, on its line: the text that offers it as a second choice.
_ALTERNATIVE = re.compile(
    r"\b(?:alternatives?|alternatively|could\s+also\s+be|or\s+possibly|rather\s+than|"
    r"not\s+to\s+be\s+confused\s+with|unlike|instead\s+of|as\s+opposed\s+to|less\s+likely|"
    r"other\s+candidates?)\b[^.!?\n]{0,100}$",
    re.IGNORECASE,
)


def _words(title: str) -> tuple[str, ...]:
    return tuple(w for w in re.split(r"[\W_]+", _fold(title)) if w)


def title_in(text: str, title: str) -> tuple[int, int] | None:
    """Where ``text`` first writes ``title`` whole, where a title ends, and not as a second
    choice; None if nowhere. "Whole": the title's words in order, any punctuation or markup
    between them but no blank line, each word as written or (two at most) in another spelling
    ("Judgment", "DolphinAttack"). "Where a title ends": nothing of a longer title after it on
    its line (in its script: "<title> ဖြစ်ပါသည်။" ends it), not inside a word before it. Three
    words or more: a phrase is no title."""
    return next(_places(text, title), None)


def _words_of(text: str, title: str) -> bool:
    """``text`` holds the title's words in order, wherever (a given abstract's first sentence
    that starts with the title is no place a title stands, but a reply copies it back)."""
    return next(_places(text, title, anywhere=True), None) is not None


def _places(text: str, title: str, *, anywhere: bool = False) -> Iterator[tuple[int, int]]:
    """Every place ``title_in`` accepts, in order (``anywhere``: every place the words are)."""
    words = _words(title)
    if len(words) < 3:
        return
    folded = _fold(text)
    tokens = list(_TOKEN.finditer(folded))
    n = len(words)
    # A title that ends in a bracket or a quote ("SoK: Decentralized Finance (DeFi)") ends after
    # it: "(DeFi) Attacks" goes on.
    closers = _CLOSERS.search(title.strip())
    closing = closers.group(0) if closers else ""
    for i in range(len(tokens) - n + 1):
        window = tokens[i : i + n]
        if not _same_words([t.group(0) for t in window], words):
            continue
        start, end = window[0].start(), window[-1].end()
        if anywhere:
            yield start, end
            continue
        pairs = itertools.pairwise(window)
        if any(_BLANK_LINE.search(folded, a.end(), b.start()) for a, b in pairs):
            continue
        if start and folded[start - 1].isalnum():
            continue
        last_letter = folded[end - 1]
        if closing and folded.startswith(closing, end):
            end += len(closing)
        if _goes_on(folded, end, last_letter):
            continue
        line_start = folded.rfind("\n", 0, start) + 1
        if _ALTERNATIVE.search(folded[line_start:start]):
            continue
        yield start, end


_CLOSERS = re.compile(r"[)\]}\"'”’»]+$")
_TAG = re.compile(r"<[^<>\n]*>")
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_DOUBLED = re.compile(r"(\w)\1+")


def _same_words(seen: list[str], words: tuple[str, ...]) -> bool:
    """The same words, at most two of them (never all) in another spelling: British/American,
    singular/plural, a doubled letter written once."""
    differing = [(a, b) for a, b in zip(seen, words, strict=True) if a != b]
    if not differing:
        return True
    if len(differing) > 2 or len(differing) == len(words):
        return False
    return all(
        len(a) >= 5
        and (
            spelling_key(a) == spelling_key(b)
            or _DOUBLED.sub(r"\1", a) == _DOUBLED.sub(r"\1", b)
            or _one_letter_more(a, b)
            or _one_letter_more(b, a)
        )
        for a, b in differing
    )


def _one_letter_more(a: str, b: str) -> bool:
    """``a`` is ``b`` with one letter more, both seven letters or more ("judgement")."""
    if len(b) < 7 or len(a) != len(b) + 1:
        return False
    return any(a[:i] + a[i + 1 :] == b for i in range(len(a)))


def _script(ch: str) -> str:
    try:
        return unicodedata.name(ch).split()[0]
    except ValueError:
        return ""


def _goes_on(folded: str, end: int, last_letter: str) -> bool:
    """A longer title goes on after ``end``: on the same line, after spaces or a subtitle's
    colon or dash, a letter of the title's own script (the script of ``last_letter``, its last
    letter)."""
    found = _GOES_ON.match(folded, end)
    if found is None:
        return False
    return _script(folded[found.end() - 1]) == _script(last_letter)


def names_the_gold_title(
    text: str,
    gold: str,
    prompt: Sequence[str],
    shown: Sequence[str],
    said: str,
    corpus: str | None,
) -> str | None:
    """The gold as ``text`` writes it, when the reply names it (``title_in``) and settles on no
    other paper; else None. ``prompt``: the texts the prompt gave (the citing title, the
    sentence, what an escalation added): a reply that copies the gold from them is read by the
    rules. ``shown``: the titles retrieval showed; the gold copied from among them counts when
    no other of them is named too (a list copied back names them all). ``said``: what the rules
    read as the answer."""
    if any(_words_of(src, gold) for src in prompt):
        return None  # the prompt holds its words: a reply may copy them back (the rules decide)
    if any(title_in(src, gold) for src in shown) and any(
        title_in(text, other) for other in shown if not title_in(other, gold)
    ):
        return None
    found = title_in(text, gold)
    if found is None:
        return None
    if said and same_title(said, gold):
        return None  # the rules read the gold itself and judged it no answer (a second choice)
    if said and not title_in(said, gold) and _known_other(said, gold, corpus):
        return None  # the reply settles on another paper the run knows
    start, end = found
    if said and not title_in(said, gold) and _a_title(said):
        if _in_an_aside(text, start):
            return None  # "<title> (... or possibly <gold>)": the gold is an aside to the answer
        last = max(e for _s, e in _places(text, gold))
        if text.rfind(said) >= last or _fold(text).rfind(_fold(said)) >= last:
            return None  # the reply settles on another title after naming the gold (a quiz)
    return text[start:end]


def _in_an_aside(text: str, at: int) -> bool:
    """``at`` is inside brackets opened before it and not yet closed."""
    before = text[:at]
    return before.count("(") > before.count(")")


def _a_title(text: str) -> bool:
    """What the rules read is itself shaped like a title (three words or more, not a sentence,
    no label glued to it): a reply that names the gold and settles on that is judged by it."""
    return (
        len(_words(text)) >= 3
        and not_a_title(text) is None
        and not reads_as_sentence(text)
        and not looks_like_prose(text)
        and ":" not in text.partition(" ")[0]
        and "=" not in text
    )


def _known_other(title: str, gold: str, corpus: str | None) -> bool:
    for papers in (corpus_papers(corpus), packaged()):
        paper = papers.find_title(title)
        if paper is not None and not title_in(paper.title, gold):
            return True
    return False


# --------------------------------------------------------------------------- people


@dataclass(frozen=True)
class _Run:
    """A run of capitalised words on one line, where names are written, and its place."""

    text: str
    start: int
    end: int


_WORD = re.compile(r"[^\W\d_][\w'’.\-]*", re.UNICODE)
#: A word with a full stop that is no initial ("S2HAND.", not "K." or "M.-H.").
_ENDS_A_SENTENCE = re.compile(
    r"(?![^\W\d_]\.(?:-?[^\W\d_]\.)*$)[\w'’\-]{2,}[\w'’.\-]*\.", re.UNICODE
)


def _runs(text: str) -> list[_Run]:
    """The text's runs of capitalised words (or initials, surname particles inside) joined by
    spaces only; a run right before a colon is a label, not a name."""
    runs: list[_Run] = []
    current: list[re.Match[str]] = []

    def close() -> None:
        while current and current[-1].group(0).lower() in SURNAME_PARTICLES:
            current.pop()
        if current:
            start, end = current[0].start(), current[-1].end()
            if not re.match(r"\s*:", text[end:]):
                runs.append(_Run(text[start:end], start, end))
        current.clear()

    for word in _WORD.finditer(text):
        token = word.group(0)
        capital = token[0].isupper()
        particle = token.lower() in SURNAME_PARTICLES and bool(current)
        joined = bool(current) and bool(
            re.fullmatch(r"[ \u00a0]+", text[current[-1].end() : word.start()])
        )
        if joined and _ENDS_A_SENTENCE.fullmatch(current[-1].group(0)):
            joined = False  # "S2HAND. Yujin Chen": a full stop, not an initial's
        if current and not joined:
            close()
        if capital or (particle and joined):
            current.append(word)
        else:
            close()
    close()
    return runs


def _person(run: str) -> Person | None:
    """A run read as one person named in full: a given name or an initial beside the surname."""
    found = person(run)
    if found is None or len(run.split()) < 2:
        return None
    return found


def _inverted(first: _Run, second: _Run, text: str) -> Person | None:
    """ "Surname, Given" written as two runs with a comma between."""
    if not re.fullmatch(r",[ \u00a0]*", text[first.end : second.start]):
        return None
    return person(f"{first.text}, {second.text}")


def _is_full_name(run: _Run) -> bool:
    return _person(run.text) is not None and not run.text.isupper()


def names_the_gold_people(text: str, gold: str, sources: Sequence[str]) -> str | None:
    """The gold authors as ``text`` names them, when it names every one in full and nobody else
    beside them; else None."""
    gold_people = parse_authors(gold).persons
    if not gold_people or any(_all_named(src, gold_people) for src in sources):
        return None  # no gold, or the prompt names them (retrieval): the rules decide
    runs = _runs(text)
    found = _all_named_runs(text, runs, gold_people)
    if found is None:
        return None
    used = {i for pair in found for i in pair}
    first, last = min(used), max(used)
    # One list: no prose and no blank line between two gold authors ("The extended version
    # also adds X and Y.", then the list: an aside, not the answer's list).
    ordered = sorted(used)
    gaps = [text[runs[a].end : runs[b].start] for a, b in itertools.pairwise(ordered)]
    if any(_prose(gap) or _BLANK_LINE.search(gap) for gap in gaps):
        return None
    # Nobody else between the first gold author and the last.
    if any(i not in used and _is_full_name(runs[i]) for i in range(first, last + 1)):
        return None
    # The list does not go on past them, nor began before them: the next (previous) run is a
    # full name with only list punctuation between.
    if last + 1 < len(runs) and _list_neighbour(text, runs[last], runs[last + 1], runs[last + 1]):
        return None
    if _GOES_ON_WITH.match(text, runs[last].end):
        return None  # "..., Linchao Bao, and the Colossal Clean Crawled Corpus"
    if first > 0 and _list_neighbour(text, runs[first - 1], runs[first], runs[first - 1]):
        return None
    return ", ".join(text[runs[min(p)].start : runs[max(p)].end] for p in found)


def _prose(gap: str) -> bool:
    """Four words in a row with no capital: a sentence, not what stands between list items."""
    words = _WORD.findall(gap)
    streak = 0
    for word in words:
        streak = streak + 1 if not word[0].isupper() else 0
        if streak >= 4:
            return True
    return False


#: What stands between two items of one list: punctuation, list markers and numbers, markup, a
#: conjunction.
_LIST_GAP = re.compile(
    r"[\s\d.,;&/|\"'“”«»()*•·+>\[\]\-]*(?:\b(?:and|et|und|y|e|i|og|en)\b)?[\s\"'“”«»*]*"
)


#: After the last name: a separator, then more words on the same line that are no lower-case
#: sentence ("and the Colossal Clean Crawled Corpus", "& Ada Smith").
_GOES_ON_WITH = re.compile(
    r"[ \t]*(?:,|;|&|\band\b)[ \t]*(?:and[ \t]+)?(?:[^\W\d_]\.[ \t]*)*"
    r"[^\W\d_][\w'’-]*[ \t]+[^\W\d_a-z]",
    re.UNICODE,
)


_LIST_NEXT = re.compile(r"[ \t]*(?:,|;|&|\band\b)[ \t]*(?:and[ \t]+)?[^\W\d_a-z]", re.UNICODE)


def _list_neighbour(text: str, before: _Run, after: _Run, other: _Run) -> bool:
    """``other`` (``before`` or ``after``) is a name in the same list as the other run: only
    list punctuation between them, no blank line (a paragraph ends a list)."""
    gap = _TAG.sub(" ", text[before.end : after.start])
    if not _LIST_GAP.fullmatch(gap) or person(other.text) is None:
        return False
    # Across a blank line, only a paragraph that is itself a list of names goes on with them
    # (a quoted title on a subject line above is no author).
    return not _BLANK_LINE.search(gap) or bool(_LIST_NEXT.match(text, other.end))


def _all_named(text: str, gold_people: Sequence[Person]) -> bool:
    return _all_named_runs(text, _runs(text), gold_people) is not None


def _all_named_runs(
    text: str, runs: list[_Run], gold_people: Sequence[Person]
) -> list[tuple[int, ...]] | None:
    """For each gold person, the runs (one, or two for "Surname, Given") that name them."""
    found: list[tuple[int, ...]] = []
    taken: set[int] = set()  # one run names one person ("C. Xu" is Chang Xu or Chao Xu)
    for gold_person in gold_people:
        at = _last_naming(text, runs, gold_person, taken)
        if at is None:
            return None
        found.append(at)
        taken.update(at)
    return found


def _last_naming(
    text: str, runs: list[_Run], gold_person: Person, taken: set[int]
) -> tuple[int, ...] | None:
    """The last runs not ``taken`` that name ``gold_person``: the final answer counts (an
    answer key after a quiz's options, a list after an aside)."""
    for i in range(len(runs) - 1, -1, -1):
        if i in taken:
            continue
        run = runs[i]
        read = _person(run.text)
        if read is not None and same_person(read, gold_person):
            return (i,)
        if i + 1 < len(runs):
            inverted = None if i + 1 in taken else _inverted(run, runs[i + 1], text)
            if inverted is not None and same_person(inverted, gold_person):
                return (i, i + 1)
    return None
