"""The run's models, built from ``--citebench-model`` names: a profile with the command line
over it, a plain litellm name with the run's settings, or ``answers:FILE``; each wrapped in RAG
when asked. On an xdist worker each gets its share of the run's concurrency and cost cap."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench.models import Budget, Model, RetryPolicy, SamplingParams
from pytest_citebench.run.workers import share, worker_slot
from pytest_citebench.settings import Options


def worker_options(config: pytest.Config, options: Options) -> tuple[Options, Budget]:
    """The options and cost budget of this process: on an xdist worker, its share of the run's
    concurrency and ``--citebench-max-cost`` (one run-wide budget, split like the concurrency)."""
    slot = worker_slot(config)
    max_cost = options.max_cost
    if slot is not None:
        index, count = slot
        options = dataclasses.replace(
            options, concurrency=max(1, share(options.concurrency, index, count))
        )
        if max_cost is not None:
            max_cost = max_cost / count
    return options, Budget(max_cost)


def plain_models(config: pytest.Config, options: Options, budget: Budget) -> list[Model]:
    """One model per ``--citebench-model`` name, before RAG; on a worker with its share of a
    profile's concurrency."""
    models = [_model(config, options, budget, name) for name in options.models]
    slot = worker_slot(config)
    if slot is not None:
        models = [
            dataclasses.replace(m, concurrency=max(1, share(m.concurrency, *slot)))
            if m.concurrency is not None
            else m
            for m in models
        ]
    return models


def with_rag(models: list[Model], options: Options) -> list[Model]:
    """Each model as ``--citebench-rag`` asks ('none' keeps the plain model beside the RAG ones).

    A model that does not read its prompt (``answers:FILE``) cannot stand behind RAG: that is
    one usage error here, before any item, not an error on every item of the run."""
    out: list[Model] = []
    for model in models:
        for rag in options.rag or ["none"]:
            if rag == "none":
                out.append(model)
            elif not model.traits.reads_prompt:
                raise pytest.UsageError(
                    f"--citebench-rag {rag} with --citebench-model {model.name}: an answers "
                    "file answers each item by id, whatever the prompt, so RAG's retrieved "
                    "papers cannot reach it; run it without RAG (drop --citebench-rag, or pass "
                    "--citebench-rag none over rag in [tool.citebench])"
                )
            else:
                from pytest_citebench.models.rag import RagModel

                out.append(RagModel.wrap(model, rag, options.rag_k))
    return out


def _model(config: pytest.Config, opts: Options, budget: Budget, name: str) -> Model:
    """The model a ``--citebench-model`` name stands for: its profile with the command line
    over it, or a plain litellm name with the run's settings."""
    replay_only = opts.record == "none"
    from pytest_citebench.models.answers import PREFIX

    if name.startswith(PREFIX):
        return _answers_model(config, opts, name)
    profile = opts.profiles.get(name)
    if profile is None:
        return Model(
            name,
            opts.params,
            opts.api_base,
            opts.retry,
            replay_only=replay_only,
            system_role=opts.system_role or "system",
            budget=budget,
        )
    cli, base = opts.cli, opts.base_params
    pick = _picker(cli, profile)
    extra = {**dict(base.extra), **profile.params, **cli.get("params", {})}
    params = SamplingParams(
        temperature=float(pick("temperature", base.temperature)),
        max_tokens=int(pick("max_tokens", base.max_tokens)),
        top_p=float(pick("top_p", base.top_p)),
        extra=tuple(extra.items()),
    )
    retry = RetryPolicy(
        retries=int(pick("retries", opts.base_retry.retries)),
        timeout=float(pick("timeout", opts.base_retry.timeout)),
    )
    return Model(
        name,
        params,
        cli.get("api_base", profile.api_base),
        retry,
        replay_only=replay_only,
        litellm_model=profile.model,
        system_role=opts.system_role or profile.system_role,
        concurrency=profile.concurrency,
        needs_key=profile.needs_key,
        budget=budget,
    )


def _picker(cli: dict[str, Any], profile: Any) -> Callable[[str, Any], Any]:
    """The command line over the profile over the run's default, setting by setting."""

    def pick(key: str, default: Any) -> Any:
        if key in cli:
            return cli[key]
        value = getattr(profile, key)
        return default if value is None else value

    return pick


def _answers_model(config: pytest.Config, opts: Options, name: str) -> Model:
    """``answers:FILE``: a bad file is one usage error naming ``file:line``, before any item."""
    from pytest_citebench.models.answers import (
        PREFIX,
        AnswersFileError,
        AnswersModel,
        load_answers,
    )

    given = name[len(PREFIX) :]
    try:
        book = load_answers(Path(config.invocation_params.dir) / given, shown=given)
    except AnswersFileError as exc:
        raise pytest.UsageError(f"--citebench-model {name}: {exc}") from None
    return AnswersModel(name, opts.params, needs_key=False, book=book)
