"""Whether an answer repeats its prompt instead of answering it (both REASONS tasks): the echo
names no citation, so it is *unanswered*, never *hallucinated*."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_citebench.metrics.text import normalize
from pytest_citebench.parsing import looks_like_prose


def runs_of(text: str, instructions: Sequence[str], n: int = 8) -> bool:
    """The text repeats a run of ``n`` consecutive words of the instructions."""
    tokens = normalize(text).split()
    for i in instructions:
        inst = normalize(i).split()
        grams = {tuple(inst[k : k + n]) for k in range(len(inst) - n + 1)}
        if any(tuple(tokens[k : k + n]) in grams for k in range(len(tokens) - n + 1)):
            return True
    return False


def echoes(text: str, sources: Sequence[str], instructions: Sequence[str]) -> bool:
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
    if runs_of(text, instructions):
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


def repeats_the_prompt(paragraph: str, sources: Sequence[str], instructions: Sequence[str]) -> bool:
    """A paragraph that is the prompt said again (a base model's echo), not reasoning that
    mentions part of it: it echoes the prompt and most of its words (three in five) are the
    prompt's. 'In "<citing title>", the related-work passage ... describes how Hitaj et al.
    train a GAN ...' quotes the citing title whole inside its own reasoning."""
    if not echoes(paragraph, sources, instructions):
        return False
    words = normalize(paragraph).split()
    known = {w for text in (*sources, *instructions) for w in normalize(text).split()}
    return not words or sum(w in known for w in words) >= 0.6 * len(words)
