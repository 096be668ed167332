"""What each run setting may be, checked in one place for every source: the command line,
``[tool.citebench]`` in pyproject.toml, a model profile and a paper's own option.

Why one table: the same value from three places used to be converted three ways (``int("a")``
on one path, a string iterated as a list on another, NaN passed on to the provider on a third),
so a typo surfaced as an INTERNALERROR, a silent no-op or an error on every item. Here a bad
value is one :class:`SettingError` naming the setting, where it came from and what to write;
the plugin turns it into a usage error (exit 4) before any item runs. Pure: no pytest import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class SettingError(ValueError):
    """A setting's value that cannot be used; the message names the setting and its source."""


@dataclass(frozen=True)
class Spec:
    """One setting: its kind and the range a run can use."""

    key: str
    # "int", "float", "str", "strs" (list of strings), "choice", "choices", "table" (of litellm
    # arguments), "bool", "url" (an http(s) URL: what litellm sends requests to)
    kind: str
    what: str  # how the setting reads in an error: "seconds per call", "retries per call"
    low: float | None = None
    high: float | None = None
    low_open: bool = False  # low itself is not allowed (a timeout of 0)
    choices: tuple[str, ...] = ()

    @property
    def flag(self) -> str:
        """The command-line spelling of the setting."""
        return "--citebench-" + self.key.replace("_", "-")

    def expected(self) -> str:
        """What a valid value looks like, for the error message."""
        if self.kind in ("int", "float"):
            noun = "a whole number" if self.kind == "int" else "a finite number"
            bounds = []
            if self.low is not None:
                bounds.append(f"{'>' if self.low_open else '>='} {self.low:g}")
            if self.high is not None:
                bounds.append(f"<= {self.high:g}")
            return f"{noun} {' and '.join(bounds)}".rstrip()
        if self.kind == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind == "choices":
            return "a list of " + ", ".join(repr(c) for c in self.choices)
        if self.kind == "strs":
            return 'a list of non-empty strings, e.g. ["a", "b"]'
        if self.kind == "table":
            return "a table"
        if self.kind == "bool":
            return "true or false"
        if self.kind == "url":
            return 'an http:// or https:// URL with a host, e.g. "http://127.0.0.1:8000/v1"'
        return "a non-empty string"


_SPECS = (
    Spec("temperature", "float", "the sampling temperature", low=0, high=2),
    Spec("top_p", "float", "nucleus sampling's top_p", low=0, high=1),
    Spec("max_tokens", "int", "tokens per answer", low=1),
    Spec("retries", "int", "retries per call", low=0, high=100),
    Spec("timeout", "float", "seconds per call", low=0, low_open=True),
    Spec("concurrency", "int", "model calls in flight", low=1),
    Spec("processes", "int", "processes solving the built-in models' cases", low=0),
    Spec("max_errors", "int", "errored items before the run stops", low=0),
    Spec("max_cost", "float", "dollars a recording may spend", low=0, low_open=True),
    Spec("show", "int", "worst answers shown per group", low=0),
    Spec("rag_k", "int", "papers retrieved", low=1),
    Spec("tolerance", "float", "worsening allowed against the baseline", low=0, high=1),
    Spec("correction", "choice", "the p-value correction", choices=("none", "holm", "bh")),
    Spec("tables", "choice", "the terminal tables", choices=("compact", "full")),
    Spec("rag", "choices", "the RAG wrappers", choices=("none", "naive", "advanced")),
    Spec("models", "strs", "the models to run"),
    Spec("default_models", "strs", "the models to run"),
    Spec("suites", "strs", "the suite folders"),
    Spec("gates", "strs", "the gates"),
    Spec("baseline", "str", "the baseline results file"),
    Spec("cassettes", "str", "the cassette folder"),
    Spec("api_base", "url", "the API base URL"),
    Spec("params", "table", "extra litellm arguments"),
    Spec("include_suspect", "bool", "whether suspect golds count in the headline"),
    # The REASONS paper's swaps (papers/reasons/swaps.py SWAPS, which a test keeps equal): named
    # here so that this module stays free of paper imports.
    Spec("adversarial", "choices", "the adversarial swaps", choices=("title", "abstract")),
    Spec("adversarial_threshold", "float", "a swap's minimum similarity", low=0, high=1),
    # The REASONS judge model (papers/reasons/judge_model.py MODES, which a test keeps equal).
    Spec("judge", "str", "the judge model"),
    Spec("judge_mode", "choice", "where the judge model decides", choices=("unread", "all")),
)
SETTINGS: Mapping[str, Spec] = {spec.key: spec for spec in _SPECS}
_SAMPLING = ("temperature", "top_p", "max_tokens")
# litellm arguments that name the endpoint: checked as ``api_base`` is, whatever their source.
_ENDPOINTS = ("api_base", "base_url")
_URL_SCHEMES = ("http", "https")
# Settings whose values are printed as names on report lines (safetext.control_problem).
_NAMES = ("models", "default_models")


def check(key: str, value: Any, *, source: str) -> Any:
    """``value`` of the setting ``key`` as the run uses it (an int for a whole-number float,
    a list for a list), or :class:`SettingError` naming ``source`` (``--citebench-timeout``,
    ``pyproject.toml [tool.citebench] timeout``) and what the setting expects."""
    spec = SETTINGS[key]

    def bad(problem: str = "") -> SettingError:
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        why = f" ({problem})" if problem else ""
        return SettingError(f"{source} = {shown}: {spec.what} must be {spec.expected()}{why}")

    if spec.kind == "bool":
        if not isinstance(value, bool):
            raise bad("write true or false, unquoted" if isinstance(value, str) else "")
        return value
    if spec.kind in ("int", "float"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad("a string is not a number" if isinstance(value, str) else "")
        number = float(value)
        if not math.isfinite(number):
            raise bad()
        if spec.kind == "int" and number != int(number):
            raise bad()
        if spec.low is not None and (number < spec.low or (spec.low_open and number == spec.low)):
            raise bad()
        if spec.high is not None and number > spec.high:
            raise bad()
        return int(number) if spec.kind == "int" else number
    if spec.kind == "url":
        # Why: litellm sends whatever it is given, so a ``file:`` or ``ftp:`` base (a typo, or a
        # profile planted in a pyproject.toml) was tried and retried on every item; only an
        # http(s) endpoint is one a provider answers on.
        if not isinstance(value, str) or not value.strip():
            raise bad()
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(value.strip())
            host = parts.hostname
        except ValueError:
            raise bad("not a URL") from None
        if parts.scheme.lower() not in _URL_SCHEMES:
            raise bad(
                f"the scheme {parts.scheme}: is not HTTP; it is refused, never sent"
                if parts.scheme and "//" in value
                else "write the scheme: http:// or https://"
            )
        if not host:
            raise bad("no host")
        return value
    if spec.kind in ("str", "choice"):
        if not isinstance(value, str) or not value.strip():
            raise bad()
        if spec.kind == "choice" and value not in spec.choices:
            raise bad()
        return value
    if spec.kind in ("strs", "choices"):
        if not isinstance(value, (list, tuple)):
            raise bad("a single string is not a list" if isinstance(value, str) else "")
        if not all(isinstance(v, str) and v.strip() for v in value):
            raise bad()
        if spec.kind == "choices" and not all(v in spec.choices for v in value):
            raise bad()
        if key in _NAMES:
            from pytest_citebench.safetext import control_problem

            for v in value:
                if (problem := control_problem(v)) is not None:
                    raise bad(f"{v!r} {problem}; model names are printed on report lines")
        return list(value)
    if not isinstance(value, dict):
        raise bad()
    # The entries are litellm arguments (a profile's, the command line's or pyproject's): a
    # sampling setting among them overrides the checked one, so it is checked as itself, and no
    # argument may be a non-finite number (JSON and TOML both read NaN and infinity).
    for name, entry in value.items():
        where = f"{source} {name}"
        if name in _SAMPLING:
            check(name, entry, source=where)
        elif name in _ENDPOINTS:
            check("api_base", entry, source=where)
        elif isinstance(entry, float) and not math.isfinite(entry):
            raise SettingError(f"{where} = {entry!r}: a litellm argument must be a finite number")
    return dict(value)
