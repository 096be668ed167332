"""What a run was, in words: the sampling each model used, the flags that ask for the same run
again, and the reports' header lines (no clock: reports are reproducible)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_citebench.models import Model, SamplingParams
    from pytest_citebench.settings import Options


def sampling_line(options: Options, models: Sequence[Model]) -> str:
    """The sampling each model really used (a profile has its own), once when all agree."""
    from pytest_citebench.recording import redact_params

    def describe(p: SamplingParams) -> str:
        text = f"temperature {p.temperature:g}, top_p {p.top_p:g}, max_tokens {p.max_tokens}"
        # --citebench-param may carry headers with keys: never into a report or terminal.
        return text + (f", {redact_params(dict(p.extra))}" if p.extra else "")

    # A citebench/* baseline retrieves deterministically: it reads no sampling setting,
    # so printing "temperature 1" for it would claim a setting that does nothing.
    described = {
        m.name: describe(m.params)
        if m.traits.samples
        else "no sampling (deterministic offline baseline)"
        for m in models
    }
    if len(set(described.values())) <= 1:
        return next(iter(described.values()), describe(options.params))
    return "; ".join(f"{name}: {text}" for name, text in described.items())


def command_settings(options: Options) -> list[tuple[str, str]]:
    """The models and sampling of this run as flags, for a printed command that must ask
    for the same thing whatever pyproject.toml says by then. A profile's sampling is its
    own, so it is not written out (the profile name carries it)."""
    out = [("--citebench-model", name) for name in options.models]
    if options.api_base:
        out.append(("--citebench-api-base", options.api_base))
    if not any(name in options.profiles for name in options.models):
        p = options.params
        out += [
            ("--citebench-temperature", f"{p.temperature:g}"),
            ("--citebench-top-p", f"{p.top_p:g}"),
            ("--citebench-max-tokens", str(p.max_tokens)),
        ]
    return out


def report_settings(options: Options, models: Sequence[Model]) -> list[tuple[str, str]]:
    """What the run was, for the reports' header."""
    return [
        ("models", ", ".join(m.name for m in models)),
        ("record mode", options.record),
        ("sampling", sampling_line(options, models)),
        ("shard", options.shard.spec if options.shard is not None else ""),
        ("baseline", str(options.baseline) if options.baseline is not None else ""),
    ]
