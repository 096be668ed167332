"""The parameters built-in models read (``citebench/<name>``), and their check at start.

Why: a built-in model reads its parameters from the same params that go to litellm
(``--citebench-param``, ``[tool.citebench] params``, a profile's ``params``). A typo there used to
be silent: ``registry=regg`` for HALLMARK's rules detector read no records and turned its
registry check off; ``now_year=abc`` failed every item with a traceback. Every parameter a
built-in model reads is declared (:class:`~pytest_citebench.api.ModelOption`: the core's here,
each paper's in ``Paper.model_options``), and :func:`option_problems` judges a run's params
against them before any item:

* a declared parameter's value must be usable by it, wherever it was given;
* a name no model of the run reads is an error when it can only have been meant for the built-in
  models: given in the model's own profile, or on the command line to a run of built-in models
  only. Run-wide params also go to the run's remote models (``seed``, ``drop_params``), so there
  an unknown name is passed on, unless it is one letter or two from a declared one (a typo).
  A built-in no declaration names (a third-party paper's from before ``model_options``) may read
  anything, so a run with one is judged on declared values and typos only.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_citebench.api import ModelOption

if TYPE_CHECKING:
    from pytest_citebench.models import Model
    from pytest_citebench.settings import Options

_RETRIEVERS = ("bm25", "dense", "rerank")


def _finite(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return f"{value!r} is not a finite number"
    return None


def _non_negative(value: Any) -> str | None:
    return _finite(value) or (f"{value} is negative" if value < 0 else None)


def _count(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return f"{value!r} is not a whole number >= 1"
    return None


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) and value.strip() else f"{value!r} is not a name"


#: The core baselines' own parameters (``models/baselines.py`` and the retriever cache).
CORE_OPTIONS: tuple[ModelOption, ...] = (
    ModelOption(
        "floor",
        "a finite number on the retriever's own scale: below it the baseline passes",
        _finite,
        _RETRIEVERS,
    ),
    ModelOption(
        "candidates",
        "a whole number >= 1: dense hits the cross-encoder re-ranks",
        _count,
        ("rerank",),
    ),
    ModelOption(
        "reranker", "a saved model folder or a hub id: the cross-encoder", _text, ("rerank",)
    ),
    ModelOption(
        "fusion",
        "a finite number >= 0: the bi-encoder's weight in the score",
        _non_negative,
        ("rerank",),
    ),
)


def declared() -> dict[str, dict[str, ModelOption]]:
    """Built-in model (after ``citebench/``) -> parameter name -> its declaration."""
    from pytest_citebench import registry

    out: dict[str, dict[str, ModelOption]] = {}
    options = [*CORE_OPTIONS, *(o for paper in registry.papers() for o in paper.model_options)]
    for option in options:
        for model in option.models:
            out.setdefault(model, {})[option.name] = option
    return out


def _sources(model: Model, options: Options) -> list[tuple[str, str, Any]]:
    """(where it was given, name, value) of each param the model gets, in the order they win:
    the command line over the model's profile over ``[tool.citebench] params``."""
    cli: Mapping[str, Any] = options.cli.get("params", {})
    profile = options.profiles.get(model.name)
    own: Mapping[str, Any] = profile.params if profile is not None else {}
    table = dict(options.base_params.extra)
    out = []
    for name, value in dict(model.params.extra).items():
        if name in cli:
            out.append(("--citebench-param", name, value))
        elif name in own:
            out.append((f'[tool.citebench.models."{model.name}"] params', name, value))
        elif name in table:
            out.append(("[tool.citebench] params", name, value))
    return out


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _builtin(model: Model) -> str | None:
    """The built-in a model runs (the name after ``citebench/``), by its name or its profile's
    model; None for a provider's model or an answers file."""
    from pytest_citebench.models.types import LOCAL_PREFIX

    name = model.litellm_model or model.name
    return name[len(LOCAL_PREFIX) :] if name.startswith(LOCAL_PREFIX) else None


def option_problems(models: Sequence[Model], options: Options) -> list[str]:
    """One line per parameter a built-in model of the run cannot use, naming where it was
    given, the model and what it must be (or the parameters there are); [] when all is well."""
    known = declared()
    builtin = {m.name: key for m in models if (key := _builtin(m)) is not None}
    if not builtin:
        return []
    # A built-in that declares nothing (a third-party paper's, written before declarations)
    # may read any name: then only the declared names' values are judged.
    only_builtin = len(builtin) == len(models) and all(k in known for k in builtin.values())
    run_names = sorted({n for key in builtin.values() for n in known.get(key, {})})
    everyone = ", ".join(f"citebench/{k}" for k in sorted(set(builtin.values())))
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    for model in models:
        key = builtin.get(model.name)
        if key is None:
            continue
        mine = known.get(key, {})
        for where, name, value in _sources(model, options):
            if (where, name) in seen:
                continue
            option = mine.get(name)
            if option is not None:
                problem = option.problem(value)
                if problem is not None:
                    seen.add((where, name))
                    problems.append(
                        f"{where} {name}={_shown(value)}: {problem}; for citebench/{key}, "
                        f"{name} must be {option.must_be}"
                    )
                continue
            own = where.startswith("[tool.citebench.models.") and key in known
            if not own and name in run_names:
                continue  # another built-in model of the run reads it
            close = difflib.get_close_matches(name, sorted(mine) if own else run_names, 1, 0.8)
            if not (own or close or (only_builtin and where == "--citebench-param")):
                continue  # run-wide, and a remote model of the run may read it (seed, ...)
            seen.add((where, name))
            valid = sorted(mine) if own else run_names
            who = f"citebench/{key}" if own else everyone
            one = own or len(set(builtin.values())) == 1
            problems.append(
                f"{where} {name}={_shown(value)}: {who} {'reads' if one else 'read'} no "
                f"parameter {name!r}"
                + (f" (did you mean {close[0]}?)" if close else "")
                + f"; the parameters {'it reads' if one else 'they read'}: "
                + (", ".join(valid) or "none")
            )
    return problems
