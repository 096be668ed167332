"""Text from outside made writable: lone surrogates replaced with U+FFFD.

Why: JSON may spell a lone UTF-16 surrogate (``"\\ud800"``), and a model, a proxy or a
hand-edited answers file or cassette can send one. Python decodes it into a ``str`` that UTF-8
cannot encode, so the first write of it (the results file, an error note, the terminal, a
report) raised ``UnicodeEncodeError``: an INTERNALERROR with no record written, and the saved
cassette did it again on every replay. Answers enter the run at one place (the runner's
``generate``) and pass through ``safe_text`` there, so the item is scored on what can be
written and a replay scores what the recording scored. Results files (a baseline, a resumed or
merged file, one given to ``rescore``) are read through ``safe_value``: a hand-edited record
with such an escape would otherwise fail the file written from it.
"""

from __future__ import annotations

import re
from typing import Any

#: What a lone surrogate becomes: the replacement character, as any UTF-8 decoder writes for
#: bytes it cannot read.
REPLACEMENT = "\ufffd"


def safe_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD; a surrogate pair (two code points
    that spell one character) becomes that character. Text UTF-8 can encode comes back as it is
    (the same object), at the cost of one encode."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # UTF-16 with surrogatepass joins the pairs into their character; the decoder then
        # replaces what is left alone.
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


#: A JSON escape that can spell a lone surrogate (U+D800..U+DFFF): only a line holding one is
#: walked by ``safe_line``.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def safe_value(value: Any) -> Any:
    """A parsed JSON value with ``safe_text`` applied to every string, keys included."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, list):
        return [safe_value(v) for v in value]
    if isinstance(value, dict):
        return {safe_text(k): safe_value(v) for k, v in value.items()}
    return value


def safe_line(line: str, value: Any) -> Any:
    """``value`` parsed from the JSON ``line``, made writable; the walk is skipped (one regex
    search) unless the line holds an escape that can spell a surrogate."""
    return safe_value(value) if _SURROGATE_ESCAPE.search(line) else value


def holds_lone_surrogate(value: Any) -> bool:
    """Whether a parsed JSON value holds a lone surrogate anywhere (keys included): for input
    that must be refused rather than repaired (a suite's gold text is compared, not repaired)."""
    if isinstance(value, str):
        if value.isascii():
            return False
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, list):
        return any(holds_lone_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(holds_lone_surrogate(k) or holds_lone_surrogate(v) for k, v in value.items())
    return False


def control_problem(text: str) -> str | None:
    """Why ``text`` cannot be a name shown on a report line (a model, suite, task or item id),
    or None when it can.

    Why: names are printed as they are in the terminal summary, the Markdown report and the
    HTML report's headings. An ESC sequence recolours or rewrites a CI log, ``\\r`` or a newline
    starts a line of its own (a model named ``"x\\ncitebench verdict: all gates passed"`` forged
    the verdict), and format characters (bidirectional overrides) make a line read differently
    from what it holds. Such a name is refused where it enters (a profile, a setting, a results
    record), never escaped in one report and missed in another.
    """
    import unicodedata

    for char in text:
        if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            return f"holds the control character U+{ord(char):04X}"
    return None
