"""An LLM as a citation verifier: the guard library's judge prompt, scored by its verdict word
(or, with logprobs, by ``P(SUPPORTED)``).

Apart from the registry (:mod:`.verifiers`) because it carries the litellm plumbing; the judge
prompt is also what ``verify`` sends a remote model under test, word for word.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_citebench.papers.guard.verifiers import WindowedVerifier, register_verifier

__all__ = ["JUDGE_PROMPT", "Completer", "LLMJudgeVerifier", "judge_score", "litellm_completer"]


# --------------------------------------------------------------------------- LLM judge

Completer = Callable[[list[dict[str, str]]], tuple[str, Mapping[str, float] | None]]
"""``complete(messages) -> (text, top_logprobs | None)``; ``top_logprobs`` maps candidate tokens
at the verdict position to their log-probabilities."""

JUDGE_PROMPT = (
    "You check whether a cited passage supports a claim. Judge only from the passage.\n"
    "Answer with exactly one word:\n"
    "SUPPORTED - the passage states or directly implies the claim;\n"
    "PARTIAL - the passage supports part of the claim or a weaker version of it;\n"
    "UNSUPPORTED - the passage does not support the claim, or contradicts it.\n\n"
    "Claim: {claim}\n\nPassage: {passage}\n\nVerdict:"
)
_LABELS: dict[str, float] = {"SUPPORTED": 1.0, "PARTIAL": 0.5, "UNSUPPORTED": 0.0}
_VERDICT = re.compile(r"\b(UNSUPPORTED|SUPPORTED|PARTIAL)\b", re.IGNORECASE)


def judge_score(text: str, logprobs: Mapping[str, float] | None = None) -> float:
    """Map a judge reply to ``[0, 1]``.

    With logprobs at the verdict token, return ``P(SUPPORTED)`` renormalised over the three
    verdicts (tokens are matched as upper-cased prefixes, e.g. ``"SUP"``; the labels start with
    distinct letters, so a prefix names one label). Otherwise map the first verdict word:
    SUPPORTED/PARTIAL/UNSUPPORTED -> 1/0.5/0. An unparseable reply scores 0 (flag it: the safe
    side), rather than raising mid-answer.
    """
    if logprobs:
        mass = dict.fromkeys(_LABELS, 0.0)
        for token, lp in logprobs.items():
            t = token.strip().upper()
            if not t:
                continue
            for label in _LABELS:
                if label.startswith(t):
                    mass[label] += math.exp(lp)
                    break
        total = sum(mass.values())
        if total > 0:
            return mass["SUPPORTED"] / total
    m = _VERDICT.search(text or "")
    return _LABELS[m.group(1).upper()] if m else 0.0


def litellm_completer(model: str, **kwargs: Any) -> Completer:
    """A :data:`Completer` calling ``litellm.completion`` (temperature 0, top-5 logprobs).

    Small on purpose: the plugin's recording layer is expected to wrap or replace it.
    """

    def complete(messages: list[dict[str, str]]) -> tuple[str, Mapping[str, float] | None]:
        import litellm

        params: dict[str, Any] = {"temperature": 0.0, "logprobs": True, "top_logprobs": 5}
        params.update(kwargs)
        resp = litellm.completion(model=model, messages=messages, **params)
        choice = resp.choices[0]
        text = choice.message.content or ""
        return text, _verdict_logprobs(getattr(choice, "logprobs", None))

    return complete


def _field(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)


def _verdict_logprobs(logprobs: Any) -> dict[str, float] | None:
    """Top-logprobs at the first alphabetic output token (OpenAI-style logprobs object)."""
    if logprobs is None:
        return None
    for entry in _field(logprobs, "content") or []:
        token = str(_field(entry, "token") or "")
        if not token.strip().isalpha():
            continue
        out = {
            str(_field(alt, "token")): float(_field(alt, "logprob"))
            for alt in _field(entry, "top_logprobs") or []
        }
        return out or {token: float(_field(entry, "logprob") or 0.0)}
    return None


@register_verifier("llm-judge")
class LLMJudgeVerifier(WindowedVerifier):
    """An LLM asked for SUPPORTED / PARTIAL / UNSUPPORTED, scored by :func:`judge_score`.

    Pass ``complete`` (any :data:`Completer`: a recorder, a stub) or ``model`` (a litellm model
    string). Windows default to 400 words: LLM contexts are long, but windows keep the judged
    evidence local and the cost bounded on very long passages.
    """

    name = "llm-judge"

    def __init__(
        self,
        *,
        model: str | None = None,
        complete: Completer | None = None,
        window: int | None = 400,
        stride: int | None = None,
        prompt: str = JUDGE_PROMPT,
        **litellm_kwargs: Any,
    ) -> None:
        super().__init__(window=window, stride=stride)
        if complete is None:
            if model is None:
                raise ValueError("llm-judge needs model=<litellm model> or complete=<callable>")
            complete = litellm_completer(model, **litellm_kwargs)
        self.model = model
        self.complete = complete
        self.prompt = prompt

    def _score_windows(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        out: list[float] = []
        for claim, window in pairs:
            messages = [
                {"role": "user", "content": self.prompt.format(claim=claim, passage=window)}
            ]
            text, logprobs = self.complete(messages)
            out.append(judge_score(text, logprobs))
        return out
