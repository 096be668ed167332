"""Turning a model's free text into the answer we score, without losing what it said.

Models wrap answers in boilerplate ("Title: ...", quotes, markdown, a leading sentence, a paragraph
of explanation, a reference string in some citation style) and abstain in many spellings
("Pass.", "'pass'", " PASS "). Scoring the boilerplate would count politeness as hallucination,
so we strip it; the raw text is always kept beside the parsed answer. The rules, with examples,
are in docs/outcomes.md; every one of them has a test in tests/test_parsing.py.

Two principles shape the code:

* Quotes inside a title are part of it. ``"Why Should I Trust You?": Explaining the Predictions
  of Any Classifier`` opens with a quoted span that is *continued* by a colon, so it is not a
  wrapper. A quoted span is a wrapper only when nothing title-like continues it.
* Cutting is conservative. " - " and ". " end a title only when what follows reads as prose or
  as reference debris (authors, venue, year); a subtitle after a dash stays.
"""

from __future__ import annotations

import functools
import re

_QUOTES = "\"'`“”‘’«»„《》「」『』〈〉"
_PAIRS = {
    '"': '"',
    "“": "”",
    "”": "”",
    "„": "“”",
    "«": "»",
    "'": "'",
    "‘": "’",
    "`": "`'",
    "《": "》",
    "「": "」",
    "『": "』",
    "〈": "〉",
}
_CJK_OPEN = "《「『〈"
_LEADING_LABEL = re.compile(
    r"^\s*(?:\*\*|__)?\s*(?:the\s+)?(?:final\s+|cited\s+|research\s+|possible\s+|paper\s+)*"
    r"(?:paper\s+title|title\s+of\s+the\s+(?:cited\s+)?(?:research\s+)?paper|title|answer|"
    r"response|citation(?:\s+paper\s+title)?|reference|paper|authors?|author\s+names|"
    r"author\s+list)"
    r"\s*(?:is|are)?\s*(?:\*\*|__)?\s*[:\-–—]\s*(?:\*\*|__)?\s*",
    re.IGNORECASE,
)
_LIST_MARKER = re.compile(r"^\s*(?:\*(?=\s)|[•+]|-|\d+\s*[.)](?!\d)|\(\d+\)|[a-z][.)](?=\s))\s*")
_MARKDOWN_LEAD = re.compile(r"^\s*(?:#{1,6}\s+|>\s*)+")
_EMPHASIS = re.compile(r"(\*\*|__|\*|_)(.+?)\1")
# "pass ... on second thought: X": the last revision marker starts the final answer.
_REVISION = re.compile(
    r"(?:^|(?<=[.!?;\n])|(?<=\bpass\b))\s*[\"'*_]*\s*(?:on\s+second\s+thoughts?|actually|wait|"
    r"correction|(?:my\s+)?final\s+answer(?:\s+is)?|(?:my\s+)?best\s+guess(?:\s+is)?|"
    r"scratch\s+that)\s*[:,\-–—]\s*",
    re.IGNORECASE,
)
# Lead-ins a model puts before the title or the authors ("The paper is likely ...").
_LEAD_IN = re.compile(
    r"^\s*(?:(?:based\s+on|given|from)\b[^,:]{0,160}[,:]\s*)?"
    r"(?:(?:i\s+(?:think|believe|guess|would\s+(?:say|guess))|i'?d\s+(?:say|guess)|my\s+guess\s+is|"
    r"it\s+(?:seems|appears|looks)\s+(?:like|that)|"
    r"most\s+likely|probably|perhaps|possibly)\s*,?\s*)?"
    r"(?:the\s+|this\s+|that\s+|it\s+)?"
    r"(?:(?:possible|likely|cited|research|original|relevant|referenced)\s+)*"
    r"(?:(?:sentence|paper|citation|title|work|article|reference|research\s+paper|answer|"
    r"authors?|author\s+names)\b[^:\"“'‘]{0,80}?\s+)?"
    r"(?:is|are|was|were|would\s+be|might\s+be|could\s+be|may\s+be|seems\s+to\s+be|cites?|"
    r"citing|refers\s+to|referring\s+to|references?|titled|entitled|called|by|include|"
    r"written\s+by|authored\s+by)"
    r"(?:\s+(?:most\s+)?(?:likely|probably|possibly|perhaps|to|the\s+paper|the\s+research\s+paper|"
    r"the\s+work|the\s+article|titled|entitled|called|as\s+follows))*"
    r"\s*[:\-–—]?\s*",
    re.IGNORECASE,
)
_PROSE_START = re.compile(
    r"^(?:the|this|that|it|i|we|you|these|those|they|there|in|as|based|sorry|unfortunately|"
    r"here|my|according|however|although|note|please|to|if|without|given|since|while|because)\b",
    re.IGNORECASE,
)
_PROSE_VERB = re.compile(
    r"\b(?:is|are|was|were|be|been|being|has|have|had|can|could|would|will|should|does|do|did|"
    r"seems?|appears?|cites?|citing|refers?|mentions?|describes?|proposes?|presents?|discusses?|"
    r"likely|introduced|published|written|provides?|shows?|focuses|explores?|am|know|think|not|"
    r"cannot|can't|don't|unable|determine|identify|find|sure|need|please|studied|proposed|followed|"
    r"talks|discuss(?:es|ed)?|suggests?|suggested|mentioned|referring|used|gives?|given|"
    r"contains?|consists?|uses|implemented|supports|examines|highlights|represents|explains|"
    r"involves|emphasizes|indicates|demonstrates|illustrates|reiterates|addresses|investigates|"
    r"analyzes|compares|combines|relates|states|notes|claims|says|implies|argues|outlines|"
    r"summarizes|introduces|aims|requires|allows|enables|helps|means|makes|leads)\b"
)
_YEAR = r"(?:19|20)\d{2}[a-z]?"
_PAREN_TAIL = re.compile(
    r"\s*[(\[]\s*(?:[^()\[\]]*\b" + _YEAR + r"\b[^()\[\]]*|arxiv[^()\[\]]*|doi[^()\[\]]*|"
    r"[^()\[\]]*\bet\s+al\b[^()\[\]]*|\d+|[^()\[\]]*\b(?:proceedings|conference|journal|"
    r"published|preprint)\b[^()\[\]]*)[)\]]",
    re.IGNORECASE,
)
_BY_TAIL = re.compile(
    r"[,.]?\s+(?:by|from)\s+(?:[A-Z][\w.'’\-]*\s*){1,4}"
    r"(?:et\s+al\b\.?|and\s+[A-Z]|&|,|\(|\s*\b" + _YEAR + r"\b|\s+in\s+|\s*$)",
)
_REFERENCE_TAIL = re.compile(
    r"[.,]\s+(?:in\s+(?:proc|proceedings|advances|the\s+\w+\s+conference|international|"
    r"conference|journal|ieee|acm)|proceedings\b|arxiv\b|advances\s+in\b|journal\s+of\b|"
    r"ieee\b|acm\b|springer\b|vol\.|pp\.|" + _YEAR + r"\b)",
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(
    r"<[^<>]{1,40}>|<[A-Za-z_ ]{1,40}$|"
    r"\[(?:[^\[\]]*\b(?:name|author|title|paper|surname|insert)\b[^\[\]]*)\]|"
    r"\{(?:[^{}]*\b(?:name|author|title)\b[^{}]*)\}|"
    r"\b(?:first\s*name|last\s*name|given\s*name|family\s*name|surname\s*\d|author\s*\d+|"
    r"author\s+[a-z]\b|name\s*\d+|paper\s+title\s+here|title\s+of\s+(?:the\s+)?paper\s+here|"
    r"john\s+doe|jane\s+doe|xyz|lorem\s+ipsum)\b",
    re.IGNORECASE,
)


# Chat preambles: "Sure!", "Certainly.", "Here is the title:", "Here's what I found:".
_INTERJECTION = re.compile(
    r"^\s*(?:sure|certainly|of\s+course|okay|ok|yes|absolutely|great|alright|got\s+it)"
    r"[!,.:]+(?:\s+|$)",  # punctuation required: "OK-VQA", "Great Expectations" are titles
    re.IGNORECASE,
)
_HERE_IS = re.compile(
    r"^\s*here(?:'s|’s|\s+is|\s+are|\s+it\s+is)\b[^:\n]{0,80}?(?::|$)\s*", re.IGNORECASE
)


def _strip_preamble(line: str) -> str:
    previous = None
    while previous != line:
        previous = line
        line = _INTERJECTION.sub("", line, count=1)
        line = _HERE_IS.sub("", line, count=1)
    return line


_LABEL_HEADING = re.compile(
    r"[\s*_]*(?:the\s+)?(?:(?:possible|likely|probable|cited|candidate|suggested|most\s+likely|"
    r"best|my|final|research|original)\s+)*(?:paper|title|answer|citation|reference|result|"
    r"guess|authors?|author\s+list)s?(?:\s+(?:title|name|names|list))?[\s*_:]*",
    re.IGNORECASE,
)


def _strip_wrappers(text: str) -> str:
    """Remove surrounding whitespace, quotes, emphasis and final punctuation, repeatedly."""
    previous = None
    while previous != text:
        previous = text
        text = text.strip()
        text = _EMPHASIS.sub(r"\2", text) if _EMPHASIS.fullmatch(text) else text
        if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
            inner = text[1:-1]
            # '"A": B "C"' is not one quoted span: only strip a pair that wraps everything.
            if not any(q in inner for q in '"“”') or text[0] not in '"“”':
                text = inner
        text = text.rstrip(".!;,:。")
        text = text.strip("*_")
    return text


def _is_pass_text(candidate: str) -> bool:
    cleaned = _LEADING_LABEL.sub("", _strip_wrappers(candidate))
    cleaned = _strip_wrappers(cleaned).casefold()
    cleaned = re.sub(
        r"^(?:(?:the\s+|my\s+)?(?:final\s+)?answer\s+(?:is|would\s+be)\s*:?\s*|"
        r"i\s+(?:will|would|'ll|must|have\s+to)\s+(?:say\s+)?)",
        "",
        cleaned,
    )
    return _strip_wrappers(cleaned) in {"pass", "i pass"}


# Chat-template tokens a raw completion model may print ("[INST]", "<end_of_turn>", "</s>").
_CHAT_TOKENS = re.compile(
    r"\[/?INST\]|<\|[^<>|]{1,30}\|>|</?s>|<(?:start|end)_of_turn>(?:user|model)?|<[be]os>",
    re.IGNORECASE,
)


def final_text(raw: str) -> str:
    """The part of ``raw`` that is the model's final answer: after its last revision marker
    ("on second thought:", "actually,", "final answer:") when something follows it; chat
    template tokens removed."""
    text = _CHAT_TOKENS.sub(" ", raw).strip()
    last = None
    for match in _REVISION.finditer(text):
        if text[match.end() :].strip():
            last = match
    if last is None:
        return text
    rest = text[last.end() :].strip()
    # "Actually, on second thought: X": revision markers in a row.
    while (again := _REVISION.match(rest)) is not None and rest[again.end() :].strip():
        rest = rest[again.end() :].strip()
    return rest


_QUOTED_PASS = re.compile(
    r"[\W_]*(?:(?:the|my)\s+)?(?:sentence|answer|title|paper|response|reply)"
    r"(?:\s+(?:is|would\s+be|will\s+be))?\s*:?\s*[\"'“‘«*_`]+\s*pass\s*[\"'”’»*_`]+[\s.!]*",
    re.IGNORECASE,
)


def is_abstention(raw: str) -> bool:
    """True when the final answer (or its first line) is the word "pass" in any wrapping.

    "pass" followed by an explanation abstains; "pass ... on second thought: X" answers X,
    and "X ... actually, pass" abstains: the final answer counts.
    """
    text = final_text(raw)
    if not text:
        return False
    first = text.splitlines()[0]
    if any(_is_pass_text(c) for c in (text, first)):
        return True
    if _QUOTED_PASS.fullmatch(first.strip()):
        return True  # 'The sentence is "pass"', "My answer: 'pass'"
    # "pass - I don't know", "Pass, I cannot tell", "PASS (not enough information)".
    return re.match(r"^[\W_]*pass[\W_]*?(?:\s[-–—]\s|[:,;.(!]|$)", first, re.IGNORECASE) is not None


def has_letters(text: str) -> bool:
    """Any letter in any script; text of only digits, marks or punctuation names nothing."""
    return any(ch.isalpha() for ch in text)


_NON_ANSWER = re.compile(
    r"(?:n/?a|none|unknown|nothing|null|nil|not\s+sure|no\s+idea|not\s+available|"
    r"not\s+applicable|no\s+answer|i\s+do(?:n't|\s+not)\s+know|idk|unsure|tbd|"
    r"(?:the\s+)?(?:paper\s+)?(?:title|reference|ref|citation|source|paper|work)s?"
    r"(?:\s*\[?\d+\]?)?)",
    re.IGNORECASE,
)
_AUTHOR_YEAR = re.compile(
    r"[A-Z][\w'’\-]+(?:\s+(?:et\s+al\.?|(?:and|&)\s+[A-Z][\w'’\-]+))?,?\s*\(?"
    + _YEAR
    + r"\)?|[A-Z][\w'’\-]+\s+et\s+al\.?"
)


def is_non_answer(text: str) -> bool:
    """ "N/A", "Unknown", "Reference [12]", "Title", "Schulman et al. (2015)": words that stand
    where an answer would, naming no title (an author-year names no title either)."""
    text = _strip_wrappers(text.strip())
    return bool(_NON_ANSWER.fullmatch(text) or _AUTHOR_YEAR.fullmatch(text))


def is_placeholder(text: str) -> bool:
    """Template placeholders ("<first name> <last name>", "[Author 1]", "Title of paper here")."""
    return _PLACEHOLDER.search(text) is not None


def _content_lines(raw: str) -> list[str]:
    """Lines with letters, list markers, markdown leads and emphasis removed; bare labels
    ("**Title:**" alone on a line) dropped, code fences dropped."""
    out = []
    # A hard-wrapped paragraph is one line: a line break before a lower-case word continues it.
    raw = re.sub(r"(?<=[^\n.!?:])[ \t]*\n[ \t]*(?=[a-z(])", " ", raw)
    for line in raw.splitlines():
        if line.strip().startswith("```"):
            continue
        line = _MARKDOWN_LEAD.sub("", line)
        line = _LIST_MARKER.sub("", line).strip()
        line = _strip_preamble(line)
        if not has_letters(line) or _LEADING_LABEL.fullmatch(line + " "):
            continue
        if _LABEL_HEADING.fullmatch(line):
            continue  # "### Possible cited paper" over the title on the next line
        if line.rstrip("*_ ").endswith(":") and len(line.split()) <= 12 and not quoted_spans(line):
            continue  # "The authors of the paper are:" alone on its line introduces the next
        out.append(line)
    return out


def _first_content_line(raw: str) -> str:
    lines = _content_lines(raw)
    return lines[0] if lines else ""


def _title_case(text: str) -> bool:
    """Most words of four letters or more capitalised: "My Body is a Cage: the Role of ..."."""
    long_words = [w.strip("\"'`*_:,.?!()") for w in text.split()]
    long_words = [w for w in long_words if len(w) >= 4]
    capitalized = [w for w in long_words if w[:1].isupper()]
    return len(long_words) >= 2 and len(capitalized) >= 0.7 * len(long_words)


def reads_as_title_case(text: str) -> bool:
    """Most words of four letters or more capitalised (``_title_case``)."""
    return _title_case(text)


def looks_like_prose(text: str) -> bool:
    """A sentence about something rather than a title: starts like prose and has a verb in
    lower case, or is far longer than titles are."""
    words = text.split()
    if len(words) > 30:
        return True
    if len(words) < 3:
        return False
    long_words = [w for w in words if len(w.strip("\"'`*_:,.?!()")) >= 4]
    capitalized = [w for w in long_words if w.strip("\"'`*_:,.?!()")[:1].isupper()]
    if long_words and len(capitalized) >= 0.7 * len(long_words) and len(long_words) >= 2:
        return False  # Title Case: "My Body is a Cage: the Role of Morphology in ..."
    stripped = text.strip(" \"'*_.,;:")
    starts = _PROSE_START.match(stripped) is not None or stripped[:1].islower()
    return starts and _PROSE_VERB.search(text) is not None


_CAPTION = re.compile(
    r"(?i)^(?:figure|fig\.|table|section|algorithm|eq\.|equation)\s*\d|^\d+(?:\.\d+)+\.?\s"
)
_CONTINUES = re.compile(r"^\s*[.,;)\]]+\s*[A-Za-z]")
_FUNCTION_WORDS_TEXT = (
    "a an and or but nor so to of in on at by for from with as than that which who whose the "
    "this these those its it is are was were be use using used"
)
_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())
_NAME_WORD = re.compile(r"[A-Z]?[a-z0-9]+(?:[A-Z][a-z0-9]+)+[A-Za-z0-9]*|[A-Z][a-z]{5,}")
_DESCRIBES = re.compile(r"(?:this|these|it|we|they|here)\s+\w+\s+\w+", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"^(?:we|i|our|us)\b", re.IGNORECASE)


def not_a_title(text: str, raw: str = "") -> str | None:
    """Why an unquoted span of free text names no paper, or None when it could be a title.

    Base models continue the prompt instead of answering it: ", a model for the prediction of
    ...", "and neural networks.", "sis. However, ...", "Figure 4: Action annotation ...". Taking
    such a fragment for a title made "hallucinated" mean "rambled". A title has at least two
    words, starts as a title starts (not with a lower-case function word continuing a sentence,
    not with "We"), is not a caption or section heading, and does not open with the punctuation
    that continues the prompt's last sentence.
    """
    words = text.split()
    if not re.search(r"[^\W\d_]{3,}", text):
        return "no word of three letters, names no paper"  # "A: A"
    if len(words) < 2 and not _NAME_WORD.fullmatch(text.strip()):
        # "DVS", "LTM+", "sis"; a coined name in mixed case ("HyperNetworks") may be a title.
        return "a single word names no paper"
    first = words[0].strip("\"'`*_([")
    if first[:1].islower() and not any(c.isupper() or c.isdigit() for c in first[1:]):
        # A title in lower case exists ("t-count and qubit optimized ..."), stated alone; a
        # function word, or a fragment the reply runs on from, continues a sentence.
        runs_on = len(raw.split()) > len(words) + 3
        if first.lower() in _FUNCTION_WORDS or runs_on:
            return "continues a sentence, names no paper"
    if _FIRST_PERSON.match(first):
        return "a sentence, not a title"
    if _CAPTION.match(text):
        return "a caption or section heading, not a title"
    titles_quoted = any(title_quotes(line) for line in raw.splitlines())
    if raw and _CONTINUES.match(raw.lstrip("\n")) and not titles_quoted:
        return "continues the prompt's sentence, names no paper"
    head, colon, rest = text.partition(":")
    spaced = head.endswith((" ", "\t")) and len(rest.split()) >= 6  # "Tracking : The system ..."
    if colon and len(head.split()) <= 3 and (spaced or _DESCRIBES.match(rest.strip())):
        return "a heading and a sentence, not a title"  # "EWalk2 : This dataset contains ..."
    return None


# --------------------------------------------------------------------------- titles


def quoted_spans(line: str) -> list[tuple[int, int, str]]:
    """(start, end, inner) of quoted spans that open at a word boundary; an apostrophe inside a
    word ("Don't") opens nothing."""
    spans = []
    i = 0
    while i < len(line):
        ch = line[i]
        if ch in _PAIRS and (i == 0 or not line[i - 1].isalnum() or ch in _CJK_OPEN):
            closers = _PAIRS[ch]
            j = i + 1
            while j < len(line):
                if line[j] in closers and (
                    j + 1 == len(line) or not line[j + 1].isalnum() or ch in _CJK_OPEN
                ):
                    break
                j += 1
            if j < len(line) and j > i + 1 and has_letters(line[i + 1 : j]):
                spans.append((i, j + 1, line[i + 1 : j]))
                i = j + 1
                continue
        i += 1
    return spans


def _bibtex_title(text: str) -> str | None:
    match = re.search(r"\btitle\s*=\s*([{\"])", text, re.IGNORECASE)
    if not match:
        return None
    start = match.end()
    if match.group(1) == '"':
        end = text.find('"', start)
        return text[start:end] if end > 0 else None
    depth, i = 1, start
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[start : i - 1].replace("{", "").replace("}", "") if depth == 0 else None


def _apa_title(line: str) -> str | None:
    """APA: ``Surname, A., & Other, B. (2017). Title of the paper. Venue``."""
    match = re.search(r"\(\s*" + _YEAR + r"\s*\)\.?\s+(.+)$", line)
    if not match or not re.search(r"[A-Z][\w'’\-]+,\s*(?:[A-Z]\.\s*)+", line[: match.start()]):
        return None
    rest = match.group(1)
    spans = quoted_spans(rest)
    if spans and spans[0][0] == 0:
        return _title_from_quote(rest, spans[0])
    cut = re.search(r"(?<=[^A-Z\s])[.?!](?:\s+|$)", rest)
    if cut:
        keep = rest[: cut.start() + (1 if rest[cut.start()] in "?!" else 0)]
        return keep
    return rest


def _title_from_quote(line: str, span: tuple[int, int, str]) -> str:
    """A quoted span, or the quote plus its continuation when a colon continues it."""
    start, end, inner = span
    after = line[end:]
    cont = re.match(r"\s*:\s*(?=[A-Za-z0-9])", after)
    if cont:
        return _trim_tail(line[start:])
    return inner


def _trim_tail(line: str) -> str:
    """Cut trailing explanations, parenthetical author-year, 'by X et al.', reference debris."""
    previous = None
    while previous != line:
        previous = line
        line = _PAREN_TAIL.sub("", line).rstrip()
        match = _BY_TAIL.search(line)
        if match:
            line = line[: match.start()]
        match = _REFERENCE_TAIL.search(line)
        if match:
            line = line[: match.start()]
        for sep in re.finditer(r"\s+[-–—]{1,2}\s+|(?<=[^A-Z\s][.!?])\s+|;\s+", line):
            rest = line[sep.end() :]
            author_year = re.match(
                r"[A-Z][\w'’\-]+(?:\s+et\s+al\b|\s+(?:and|&)\s+[A-Z]|,\s*" + _YEAR + r"\b)", rest
            )
            if (
                looks_like_prose(rest)
                or author_year
                or re.match(r"(?i)(?:by|published|authors?|in)\b", rest)
            ):
                line = line[: sep.start()]
                break
    return line


def _strip_lead_in(line: str) -> str:
    """Drop "The paper is likely" and the like; a one-word match ("Is Attention
    Interpretable?") is the title's own first word, not a lead-in."""
    if not re.match(
        r"(?i)(?:the|this|that|it|i|based|given|from|most|probably|perhaps|possibly|my)\b", line
    ):
        return line
    match = _LEAD_IN.match(line)
    if match is None or len(match.group(0).split()) < 2:
        return line
    return line[match.end() :]


# Scorer 4: "The title of the possible research paper that this sentence is citing to is X":
# the question restated, then the answer. The restatement is dropped and X is read.
_RESTATEMENT = re.compile(
    r"^.{0,80}?\b(?:title\s+of\s+the\s+|another\s+)?(?:possible\s+)?(?:research\s+)?paper\s+"
    r"(?:that\s+)?(?:this|the)\s+sentence\s+is\s+(?:citing|cited|referencing|referring)(?:\s+to)?"
    r"(?:\s+(?:is|would\s+be|might\s+be|could\s+be|was))?\s*[:\-–—]?\s*",
    re.IGNORECASE,
)
# A quoted span is not a title when it is "the sentence" quoted back, a phrase or a search
# query ('The sentence "X" is ...', 'described as "X"', 'search for "X"').
_NOT_A_TITLE_QUOTE = re.compile(
    r"\bsentence\s*,?\s*$|\bsentence\s+(?:is|reads|says)\s*:?\s*$|(?:\bphrase|\bterm|\bwords?|\bexpression|\bquery|\bkeywords?|\bsearch(?:ing)?"
    r"(?:\s+\w+){0,2}\s+(?:for|on)|\blook(?:ing)?\s+(?:up|for)|\bgoogle|\bas|\blike|\buse\s+of|"
    r"\brephrased\s+as|\brevised\s+sentence|\bsuch\s+as|\btry|\bstands\s+for|\bknown\s+as|"
    r"\bas\s+(?:an?|the)|\bor(?:\s+simply)?)\s*[:,]?\s*$",
    re.IGNORECASE,
)
_PRONOUN = re.compile(
    r"^\W*(?:I'm|I’m|I'll|I’ll|I've|You|You've|You're|Your|We|Our|Let's)\b|\bI\s+[a-z]|"
    r"\b(?:i'm|i’m|i'll|i’ll|i've|you|you've|you're|your|we|our|let's|me)\b"
)
_TITLE_CUE = re.compile(
    r"\b(?:titled|entitled|called|named|paper|article|study|work|publication)\s*[:,]?\s*$",
    re.IGNORECASE,
)
# A reference that starts with its authors: "J. Schulman, S. Levine, and P. Abbeel. Trust
# region policy optimization. In ICML, 2015." / ACM "... and Pieter Abbeel. 2015. Title. In".
_NAME_RUN = r"(?:[A-Z][\w'’\-]*\.?\s*){1,4}"
_AUTHOR_LED = re.compile(
    r"^" + _NAME_RUN + r"(?:,\s*(?:and\s+|&\s*)?" + _NAME_RUN + r")*"
    r"(?:,?\s*(?:and|&)\s+" + _NAME_RUN + r")?"
    r"(?<=[a-z]{2})\.\s+(?:\(?" + _YEAR + r"\)?\.\s+)?(?P<title>[^.?!]{8,}[?!]?)(?:\.|$)"
)


_PAREN_ID = re.compile(r"\s*[(\[]\s*(?:doi|arxiv)\b[^()\[\]\n]*[)\]]", re.IGNORECASE)


def _identifier_pattern(gap: str, arxiv: str, flags: int) -> re.Pattern[str]:
    """A DOI or an arXiv id with its label and leading punctuation, or a dangling label at the
    end: one pattern for titles and for answers, which differ only in what may separate the
    label from the id and how strictly a bare arXiv id is delimited."""
    return re.compile(
        rf"[,.;]?{gap}*\b(?:(?:doi|arxiv){gap}*[:.]?{gap}*)?(?:https?://(?:dx\.)?doi\.org/)?"
        rf"(?:10\.\d{{4,9}}/[^\s,;\]\)>]+|{arxiv})"
        rf"|[,.;]?{gap}*\b(?:doi|arxiv){gap}*[:.]?{gap}*$",
        re.IGNORECASE | flags,
    )


# In a title an id stays on its line, and a bare arXiv id is no part of a longer number.
_TITLE_ID = _identifier_pattern(
    r"[ \t]", r"(?<![\d.])\d{4}\.\d{4,5}(?:v\d+)?(?![\d.])", re.MULTILINE
)


def strip_restatement(text: str) -> str:
    """``text`` without a restated question before its answer (each line)."""
    return "\n".join(_RESTATEMENT.sub("", line, count=1) for line in text.splitlines())


# In a sentence, a quoted span is a title when the words before it introduce one: "titled",
# "the paper", "is", "cites", a colon, a reference's full stop or comma ('Smith. "Title."').
_QUOTE_CUE = re.compile(
    r"(?:\b(?:titled|entitled|named|paper|article|work|study|publication|title|reference|"
    r"citation|is|was|be|it's|it’s|cites?|citing(?:\s+to)?|references?|referencing|refers\s+to|"
    r"reference\s+to|guess|say|think|believe|answer|by|in)"
    r"(?:\s+(?:most\s+)?(?:likely|probably|possibly|perhaps|maybe))?|[:.,(\-–—])\s*$",
    re.IGNORECASE,
)


def title_quotes(line: str) -> list[tuple[int, int, str]]:
    """The quoted spans of a line that may be titles: at the line's start or introduced as a
    title (``_QUOTE_CUE``), and not "the sentence", a phrase or a search query quoted back
    ('a game engine called "GTA V"', 'the question of "What is the answer?"')."""
    out = []
    for span in quoted_spans(line):
        before = line[: span[0]]
        if _NOT_A_TITLE_QUOTE.search(before):
            continue
        cjk = line[span[0]] in _CJK_OPEN  # 《》「」 are title marks wherever they stand
        if before.strip(" *_") and not cjk and not _QUOTE_CUE.search(before):
            continue
        out.append(span)
    return out


def _prose_line(line: str, body: str) -> bool:
    """A line that is a sentence about the question rather than an answer: a first- or
    second-person sentence, or prose whose lead-in (if any) is not followed by a title."""
    words = line.split()
    sentence = line.rstrip(" *_\"'”’").endswith(".") or re.search(r"[a-z]\.\s+[A-Z]", line)
    if _PRONOUN.search(line) and len(words) > 4 and sentence:
        return True
    aux = re.search(
        r"\b(?:is|are|was|were|has|have|had)\s+(?:a|an|the|been|not|used|developed|shown|also)\b",
        line,
    )
    if aux and sentence and len(words) >= 8 and not _title_case(line):
        return True  # "Visualization techniques have been developed to explain ..."
    if body != line:  # "The paper is likely X": a lead-in, then what follows it
        return body[:1].islower() or looks_like_prose(body)
    return looks_like_prose(line)


def title_candidates(raw: str) -> list[str]:
    """Every span of the final answer that may be the title the model named, best first.

    The first candidate is *the* parsed title; the others are alternative readings (the
    first quoted span alone, the line before a trailing explanation) that a scorer may accept
    when one of them is exactly the gold title.
    """
    text = strip_restatement(final_text(raw))
    # A DOI or an arXiv id given with the title is checked apart; it never stays in the title.
    text = _PAREN_ID.sub("", text)
    text = _TITLE_ID.sub("", text)
    out: list[str] = []

    def add(value: str | None) -> None:
        if value is None:
            return
        value = _strip_wrappers(_EMPHASIS.sub(r"\2", value))
        value = re.sub(r"\s+", " ", value).strip().lstrip(".,;:!?-–—> ").strip()
        if has_letters(value) and value not in out:
            out.append(value)

    bib = _bibtex_title(text)
    if bib:
        add(bib)
    lines = _content_lines(text)
    # A title set apart in italics or bold on its own line (or opening it, before a dash and
    # its authors) inside a longer answer is the answer that answer gives.
    for raw_line in lines[1:] if lines and not _EMPHASIS.match(lines[0].strip()) else []:
        emphasised = re.match(r"^(\*\*|__|\*|_)([^*_]+?)\1(?:\s*[-–—:,(]|\s*$)", raw_line.strip())
        title = emphasised.group(2) if emphasised else ""
        if len(title.split()) >= 2 and not looks_like_prose(title):
            add(title)
    prose_before = False
    for raw_line in lines:
        if prose_before:
            # After a sentence that named nothing, only a title announced as one ('a paper
            # titled "X"') is read; a phrase quoted in the ramble that follows is not.
            for span in quoted_spans(raw_line):
                if _TITLE_CUE.search(raw_line[: span[0]]) and len(span[2].split()) >= 2:
                    add(span[2])
            if out:
                break
            continue
        line = _EMPHASIS.sub(r"\2", raw_line)
        labelled = _LEADING_LABEL.sub("", line)
        apa = _apa_title(labelled)
        if apa:
            add(apa)
        led = _AUTHOR_LED.match(labelled)
        if led and not _PRONOUN.search(labelled[: led.start("title")]):
            add(_trim_tail(led.group("title")))
        spans = [s for s in title_quotes(labelled) if len(s[2].split()) >= 1]
        for span in spans:
            titled = re.search(r"\b(?:titled|entitled)\s*$", labelled[: span[0]], re.IGNORECASE)
            if len(span[2].split()) >= 2 or span[0] == 0 or titled:
                add(_title_from_quote(labelled, span))
        # "### Possible cited paper **Title**": an emphasised span of a longer line.
        for emphasised in re.finditer(r"(\*\*|__)(.+?)\1", raw_line):
            if len(emphasised.group(2).split()) >= 2 and emphasised.group(0) != raw_line.strip():
                add(emphasised.group(2))
        body = labelled if labelled != line else _strip_lead_in(line)
        if not out and quoted_spans(labelled) and not spans:
            prose_before = True  # only "the sentence" or a phrase quoted back: no title here
            continue
        if not out and labelled == line and _prose_line(line, body):
            # A sentence with no quoted title: try after "titled" / "called" anyway.
            titled = re.search(
                r"\b(?:titled|entitled|(?:paper|article|work)\s+called)\s+(?=[A-Z0-9])", line
            )
            if not titled:
                prose_before = True
                continue
            body = line[titled.end() :]
        trimmed = _trim_tail(body)
        add(trimmed)
        add(re.sub(r"\s*[(\[][^()\[\]]*[)\]]\s*$", "", trimmed))  # "X (TRPO)"
        add(re.sub(r",\s+[^,]*\b" + _YEAR + r"\b[^,]*$", "", trimmed))  # "X, ICML 2015"
        inner = re.search(r"\(([^()]{8,})\)\s*[.!]?$", body)  # "TRPO (Trust Region Policy ...)"
        if inner and len(inner.group(1).split()) >= 2:
            add(inner.group(1))
        prefix = re.match(r"^([^:]{1,40}):\s+(\S.*)$", body)  # "I'd guess: X" (extra reading)
        if prefix and len(prefix.group(1).split()) <= 5:
            add(_trim_tail(prefix.group(2)))
        add(body)
        add(line)
        if out:
            break
    if not out and lines:
        # No line reads as an answer: the first one is the reading, for the judge to call a
        # sentence (or a real paper of the suite's corpus, whatever its title looks like).
        first = _LEADING_LABEL.sub("", _EMPHASIS.sub(r"\2", lines[0]))
        add(first)
        add(_trim_tail(_strip_lead_in(first)))
    return out


def reads_as_sentence(text: str) -> bool:
    """A reading that is a sentence about the question, not a title (see ``_prose_line``)."""
    return _prose_line(text, _strip_lead_in(text))


def clean_title(raw: str) -> str:
    """The title a model gave, without labels, quotes, markdown or a trailing explanation."""
    candidates = title_candidates(raw)
    return candidates[0] if candidates else ""


# --------------------------------------------------------------------------- authors

_AUTHOR_LEAD = re.compile(
    r"^\s*(?:(?:the\s+)?(?:paper|research\s+paper|article|work)\s+(?:was\s+|is\s+)?"
    r"(?:written|authored|co-?authored)\s+by|(?:the\s+)?authors?\s+(?:of\s+[^:]{0,160}?\s+)?"
    r"(?:are|is|were|was|include)|(?:it\s+)?(?:was\s+)?(?:written|authored)\s+by|by)\b\s*:?\s*",
    re.IGNORECASE,
)
# Scorer 4: a chat model's author answer is a sentence or a list. The list starts after the
# last word of a lead-in ("I believe the authors are", "... was authored by", "Les auteurs de
# l'article sont"); it ends at the first lower-case word that no name has (", a renowned
# linguist", " is a groundbreaking study", " is a PhD student at ...").
_LEAD_STARTS_TEXT = (
    "the this that it i i'm i’m these those they to if as according based sure here my our its "
    "their written authored co-authored by authors author probably perhaps possibly likely "
    "maybe most les los las die gli os el la le il en in from per yes ok okay well so"
)
_LEAD_STARTS = frozenset(_LEAD_STARTS_TEXT.split())
_LEAD_WORD = re.compile(
    r"\b(?i:are|were|is|was|by|include[sd]?|including|sont|son|sind|sono|s[ãa]o|par|por|"
    r"est|es|ist|(?:author|writer|screenwriter|researcher|scientist|professor)s?,?)\b\s*,?"
    r"\s*[:\-–—]?\s*(?=(?:(?i:dr|prof|mr|mrs|ms)\.?\s+)?[A-Z<\[])|:\s*(?=\S)"
)
# Lower-case words a list of names may contain: separators in five languages, particles of
# surnames, "et al." and its kin.
#: Lower-case particles of surnames ("van", "de la", "ibn"): part of a name, not prose.
_PARTICLES_TEXT = "van von der den de del della di da dos das du la le ten ter bin ibn al el st mac"
SURNAME_PARTICLES = frozenset(_PARTICLES_TEXT.split())
_GLUE_TEXT = (
    "and und et y e & las los bou abu ben zu dei degli af op others colleagues co-authors "
    "coauthors al."
)
_NAME_GLUE = SURNAME_PARTICLES | frozenset(_GLUE_TEXT.split())
_DEGREE = re.compile(
    r"(?:,\s*|\s+)(?:Ph\.?\s?D|M\.\s?D|B\.\s?A|B\.\s?Sc?|M\.\s?Sc?|M\.\s?A|M\.\s?B|MBA|MPH|"
    r"MBBS|FRS|FRCP|D\.\s?Sc|D\.\s?Phil|M\.\s?Phil|B\.\s?Eng|M\.\s?Eng|Esq)\.?(?=\s*(?:[,;]|$))",
    re.IGNORECASE,
)
_LIST_BULLET = re.compile(r"^\s*(?:[-*•+–·]|\d+\s*[.)](?!\d)|\(\d+\))\s*")
_LETTER_ITEM = re.compile(r"^\s*[A-Z][.)]\s+(?=[^\s.]{2,})")
_AUTHOR_CONNECTOR = re.compile(
    r"^[\s\"'”’»」》*_]*[,.]?\s*(?:\(\s*" + _YEAR + r"\s*\)\s*[,.]?\s*)?"
    r"(?:(?:is|was|were|are|has\s+been|had\s+been)\s+)?"
    r"(?:(?:written|authored|co-?authored|published|proposed|developed|presented)\s+)?"
    r"(?:by\b|are\b|were\b|include[sd]?\b)?\s*:?\s*",
    re.IGNORECASE,
)


def _bibtex_authors(text: str) -> str | None:
    match = re.search(r"\bauthor\s*=\s*[{\"](.+?)[}\"]\s*,?\s*(?:\n|\w+\s*=|$)", text, re.I | re.S)
    return match.group(1) if match else None


def _cut_lead(line: str, lower: bool) -> str:
    """Drop a lead-in sentence before the names ("I believe the authors are", "It was written
    by", "Les auteurs de l'article sont"); only when the line starts as prose does, so a name
    is never cut. A line that starts as prose and has no lead-in names nobody ("I'm glad you
    asked", "The paper explores ...")."""
    words = line.split()
    prose = [w for w in words if w[:1].islower() and w.strip(",.;:").lower() not in _NAME_GLUE]
    if not words or not prose or re.fullmatch(r"[A-Z]\.", words[0]):
        return line  # "Le Wu, Lei Chen", "El Mahdi El Mhamdi", "I. Mele": names, no lead-in
    first = words[0].strip("\"'*_,.:").lower()
    if first not in _LEAD_STARTS and not (words[0][:1].islower() and not lower):
        return line
    match = _LEAD_WORD.search(line)
    if match:
        return line[match.end() :]
    return "" if first in _LEAD_STARTS and not lower else line


#: An arXiv id after its label, URL or DataCite DOI ("arXiv:1502.05477", "arxiv.org/pdf/...",
#: "10.48550/arXiv.1502.05477"); ``id`` the new-style id, ``yy``/``mm`` its month of submission.
ARXIV_ID = re.compile(
    r"(?:arxiv(?:\.org/(?:abs|pdf)/|\s*[:.]?\s*)|10\.48550/arxiv\.)"
    r"(?P<id>(?P<yy>\d{2})(?P<mm>\d{2})\.\d{4,5})",
    re.IGNORECASE,
)
# A DOI or an arXiv id given with an answer ("DOI: 10.48550/arXiv.1502.05477", "arXiv:1502.05477").
_IDENTIFIER = _identifier_pattern(r"\s", r"\d{4}\.\d{4,5}(?:v\d+)?", 0)
_TITLE_GLUE_TEXT = (
    "for of on with to via using under through towards toward into over from without versus "
    "vs beyond across between against about in"
)
_TITLE_GLUE = frozenset(_TITLE_GLUE_TEXT.split())
#: "and <these>" closes a list of names the way "et al." does; an affiliation may follow.
ET_AL_COMPANIONS = r"others|colleagues|co-?workers|co-?authors"
ET_AL_AFFILIATION = r"(?:\s+(?:at|from|of|in)\s+[^,;\n]*)?"
_ET_AL_PHRASE = re.compile(
    r"\band\s+(?:"
    + ET_AL_COMPANIONS
    + r"|(?:his|her|their)\s+(?:team|colleagues|students))\b"
    + ET_AL_AFFILIATION,
    re.IGNORECASE,
)


def _cut_prose(line: str, lower: bool) -> str:
    """End the names at the first lower-case word no name has, or at a sentence's full stop
    (after a word, never after an initial: "M. I. Jordan" stays whole); a reply written wholly
    in lower case is left to the other rules."""
    if lower:
        return line
    stop = re.search(
        r"(?<=[a-zà-ÿ]{2})(?<!\bal)\.(?=\s*$|\s+(?:" + _YEAR + r"\b|[A-Z][a-z]*\s+[a-z]|[^\w\s]))",
        line,
    )
    line = line[: stop.start()] if stop else line
    for word in re.finditer(r"\S+", line):
        token = word.group(0).strip(",;:()\"'“”‘’*_")
        bare = token.rstrip(".")
        if not bare or bare.startswith("<") or bare.startswith("[") or bare == "&":
            continue
        lowercase_word = bare[0].islower() and not any(c.isupper() for c in bare)
        lowercase_word = lowercase_word and len(bare) > 1  # "María d. M. González"
        ends_piece = word.group(0).endswith((",", ";")) or not line[word.end() :].strip()
        if lowercase_word and bare.lower() not in _NAME_GLUE and not ends_piece:
            if bare.lower() in _TITLE_GLUE:
                # "Policy Search for Robot Control": a title's words, not a name and prose;
                # the piece that runs into it is dropped.
                return line[: max(line.rfind(",", 0, word.start()), 0)]
            return line[: word.start()]
    return line


def _name_line(line: str, lower: bool = False) -> str:
    line = _strip_preamble(_EMPHASIS.sub(r"\2", line))
    line = _IDENTIFIER.sub(" ", line)
    line = _PLACEHOLDER.sub(" <> ", line)
    line = re.split(r"\(\s*" + _YEAR + r"\s*\)\s*\.", line, maxsplit=1)[0]  # APA: "(2015)."
    line = re.sub(r"\s*\([^()]*\)\s*", " ", line)  # "(2018)", "(@ElonMusk)", affiliations
    line = re.split(r"\s+[-–—]+\s+", line, maxsplit=1)[0]  # "- Founder and CEO of SpaceX"
    line = _LEADING_LABEL.sub("", line)
    line = _AUTHOR_LEAD.sub("", line, count=1)
    line = _cut_lead(line, lower)
    line = _ET_AL_PHRASE.sub(" et al.", line)
    line = _DEGREE.sub("", line)
    cut = _cut_prose(line, lower)
    if cut != line and len(cut.split()) == 1 and len(line.split()) > 3:
        return ""  # "Demonstration of the performance of ...": one word, then prose
    return _strip_wrappers(cut).strip(" ,;")


def _name_block(text: str) -> list[str]:
    """The lines that hold the names: the first paragraph of content after an intro line
    ("The authors of the research paper ... are:"), list markers removed (bullets, numbers,
    and letters "A." "B." when the list starts at "A.")."""
    lines = [line for line in text.splitlines()]
    while lines and not lines[0].strip():
        lines.pop(0)
    if len(lines) > 1 and lines[0].rstrip(" *_").endswith(":") and len(lines[0].split()) <= 40:
        lines.pop(0)
        while lines and not lines[0].strip():
            lines.pop(0)
    block = []
    for line in lines:
        if not line.strip():
            break
        if line.strip().startswith("```"):
            continue
        block.append(_MARKDOWN_LEAD.sub("", line))
    items = [line for line in block if re.match(r"^\s*[A-Z][.)]\s+[^\s.]{2,}", line)]
    lettered = bool(block) and (
        len(items) >= 2 or re.match(r"^\s*A[.)]\s+[A-Z][^\s,.]+\s+[A-Z]", block[0]) is not None
    )
    out = []
    for line in block:
        line = _LIST_BULLET.sub("", line)
        if lettered:
            line = _LETTER_ITEM.sub("", line)
        out.append(line)
    return out


@functools.lru_cache(maxsize=4096)
def title_pattern(title_words: tuple[str, ...]) -> re.Pattern[str]:
    """The cited title's words with any punctuation between them; compiled once per title
    (``re``'s own cache holds 512 patterns, fewer than a suite's titles)."""
    return re.compile(r"[\W_]*".join(re.escape(w) for w in title_words), re.IGNORECASE)


def find_title(title_words: tuple[str, ...], text: str) -> re.Match[str] | None:
    """``title_pattern(title_words).search(text)``, without compiling the title's pattern
    (~0.1-0.25 ms, once per title: about a fifth of scoring a direct case in a replay) for an
    answer that lacks its longest word. Where the title matches, that word alone matches too,
    under the same flags, so the check never turns a match away. For ASCII text and word,
    IGNORECASE means exactly ``word.lower() in text.lower()``; elsewhere (``re`` also folds the
    Kelvin sign to k, long s to s) the word's own pattern, the title pattern of that one word,
    decides."""
    word = max(title_words, key=len)
    if word.isascii() and text.isascii():
        present = word.lower() in text.lower()
    else:
        present = title_pattern((word,)).search(text) is not None
    return title_pattern(title_words).search(text) if present else None


def _after_title(text: str, title: str | None) -> str:
    """Around the title (the cited one, or the first quoted span of two words or more): the
    names before it (a reference string) when there are some, else what follows it ("The
    research paper "X" by A and B is ...", "... "X" are:\n- A")."""
    start = end = -1
    if title:
        words = tuple(w for w in re.split(r"[\W_]+", title) if w)
        if words:
            found = find_title(words, text)
            if found:
                start, end = found.start(), found.end()
    if start < 0:
        spans = [s for s in quoted_spans(text) if len(s[2].split()) >= 2]
        if not spans:
            return text
        start, end = spans[0][0], spans[0][1]
    before = text[:start].rstrip(" \"'“‘«《「*_")
    after = text[end:]
    line_start = before.rfind("\n") + 1
    head = _name_line(before[line_start:], before == before.lower()) if before.strip() else ""
    if head and re.search(r"[A-Z]", head) and not _PROSE_START.match(before[line_start:].strip()):
        return before[line_start:]
    after = _AUTHOR_CONNECTOR.sub("", after, count=1)
    return after if has_letters(after) else ""


def clean_authors(raw: str, title: str | None = None) -> str:
    """The author list a model gave, as "A, B, C": the lead-in, the title (``title``, the cited
    one, or a quoted one), list markers, "Dr."-style prose and trailing sentences removed;
    template placeholders kept as ``<>``, so a reply of placeholders alone can say so."""
    text = final_text(raw)
    bib = _bibtex_authors(text)
    if bib:
        return re.sub(r"\s+", " ", bib).strip()
    lower = text == text.lower()  # the whole reply: "<author> is a ..." after a title is not
    text = _after_title(text, title)
    names = [n for n in (_name_line(x, lower) for x in _name_block(text)) if has_letters(n)]
    names += ["<>"] if not names and _PLACEHOLDER.search(text) else []
    return ", ".join(names)
