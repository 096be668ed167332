"""``--citebench-judge MODEL``: an optional model-graded reader for what no rule reads.

A judge model (any litellm name, or a profile of ``[tool.citebench.models]``) reads the reply
with the prompt ``judge_prompt.JUDGE_PROMPT`` and gives its outcome. It is asked inside the
item's ``solve``, after the model's own calls, so its request goes into (and on replay comes
from) the item's own cassette; its verdict is kept on the final stage
(``ScoredStage.details["judge"]``), so ``score`` stays pure and ``rescore`` reads it back with no
call. Where it applies, the judge's outcome is the item's, the reason names the judge, its
prompt and the rules' own outcome (``| rules: OUTCOME``), and the reports list every
disagreement (``judge_report``).

Modes (``--citebench-judge-mode`` / ``[tool.citebench] judge_mode``): ``unread`` (default) asks
the judge only where the rules say "not read"; ``all`` asks it on every item. A provider failure
or a replay with no recording of the judge's call is the item's error; a reply that is no
verdict is *unanswered*, "not read", with the judge's problem in the reason, never a pass. Items
of models that run in-process (``citebench/*``, ``answers:FILE``) have no cassette: the judge
is not asked for them, and their reason says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_citebench.api import Attempt, Hint, ItemScore, Message, Sample, ScoredStage
from pytest_citebench.papers.reasons.judge_prompt import JUDGE_PROMPT, judge_messages
from pytest_citebench.papers.reasons.judgement import Judgement, short

if TYPE_CHECKING:
    import pytest

    from pytest_citebench.models import Model

#: Where a final stage keeps the judge's verdict (``ScoredStage.details``).
JUDGE_KEY = "judge"
MODES = ("unread", "all")
#: How a judged record's reason gives the rules' own outcome (``judge_report`` reads it).
RULES_MARK = " | rules: "
#: The judge's sampling: deterministic and room for one JSON line (a profile may say otherwise).
JUDGE_TEMPERATURE = 0.0
JUDGE_MAX_TOKENS = 512


@dataclass
class JudgeSettings:
    """This run's judge, set whole by :func:`configure` (None: no judge)."""

    model: Model | None = None
    mode: str = "unread"


SETTINGS = JudgeSettings()


def add_options(group: pytest.OptionGroup) -> None:
    """The options, in the core's ``citebench`` group."""
    group.addoption(
        "--citebench-judge",
        metavar="MODEL",
        help="a judge model (litellm name or profile) that reads the REASONS replies the rules "
        "cannot (docs/judge.md); its calls are recorded in each item's cassette",
    )
    group.addoption(
        "--citebench-judge-mode",
        choices=MODES,
        help="where the judge model decides the outcome: unread (default: only where the rules "
        "say 'not read') or all (every item)",
    )


def configure(config: pytest.Config) -> None:
    """Read the options (the command line, then ``[tool.citebench] judge``/``judge_mode``) and
    build the judge like a run model: a profile with the command line over it, or a plain
    litellm name at temperature 0 on the run's endpoint."""
    from pytest_citebench.settings import setting

    name = setting(config, "citebench_judge", "judge")
    SETTINGS.mode = setting(config, "citebench_judge_mode", "judge_mode", "unread")
    SETTINGS.model = None if name is None else _build(config, str(name))


def _build(config: pytest.Config, name: str) -> Model:
    """The judge as a model: a profile's model, endpoint, parameters and key needs (its
    sampling where it sets one), else the name on the run's endpoint; temperature 0, top_p 1
    and 512 tokens unless a profile says otherwise; the run's retries, timeout and parameters;
    its own ``--citebench-max-cost`` budget."""
    import pytest

    from pytest_citebench.models import Budget, Model, RetryPolicy, SamplingParams
    from pytest_citebench.settings import Options

    options = Options.from_config(config)
    profile = options.profiles.get(name)

    def pick(key: str, default: Any) -> Any:
        value = getattr(profile, key, None)
        return default if value is None else value

    extra = {**dict(options.params.extra), **(profile.params if profile else {})}
    params = SamplingParams(
        temperature=float(pick("temperature", JUDGE_TEMPERATURE)),
        max_tokens=int(pick("max_tokens", JUDGE_MAX_TOKENS)),
        top_p=float(pick("top_p", 1.0)),
        extra=tuple(extra.items()),
    )
    retry = RetryPolicy(
        retries=int(pick("retries", options.retry.retries)),
        timeout=float(pick("timeout", options.retry.timeout)),
    )
    model = Model(
        name,
        params,
        pick("api_base", options.api_base),
        retry,
        replay_only=options.record == "none",
        litellm_model=profile.model if profile else None,
        system_role=profile.system_role if profile else "system",
        needs_key=profile.needs_key if profile else True,
        budget=Budget(options.max_cost),
    )
    if not model.traits.records_cassettes or name.startswith("answers:"):
        raise pytest.UsageError(
            f"--citebench-judge {name}: a judge must be a model called through litellm (its "
            "calls are recorded in each item's cassette); citebench/* baselines and answers "
            "files cannot judge"
        )
    return model


def _question(task: Any, item: Sample, attempt: Attempt) -> list[Message]:
    """The conversation the final stage answered, as the task built it (RAG's retrieved
    context is the wrapper's and is not repeated here)."""
    messages: list[Message] = list(task.messages(item))
    for earlier, stage in zip(attempt.stages, attempt.stages[1:], strict=False):
        template = task.escalation[stage.name]
        messages += [
            Message("assistant", earlier.raw),
            Message("user", template.render(value=item[f"cited_{stage.name}"])),
        ]
    return messages


def _applies(rules: ItemScore, mode: str) -> bool:
    from pytest_citebench.papers.reasons.tasks import NOT_READ

    return mode == "all" or rules.reason.startswith(NOT_READ)


async def with_judge(task: Any, item: Sample, attempt: Attempt) -> Attempt:
    """The attempt, its final stage carrying the judge's verdict where the mode applies;
    unchanged when the run has no judge or the rules read the reply (mode ``unread``)."""
    judge, mode = SETTINGS.model, SETTINGS.mode
    if judge is None or not _applies(task.score(item, attempt), mode):
        return attempt
    from pytest_citebench import recording
    from pytest_citebench.recording import scrub_decoded
    from pytest_citebench.safetext import safe_text

    final = attempt.final
    record: dict[str, Any] = {"model": judge.name, "prompt": JUDGE_PROMPT, "mode": mode}
    if recording.current_item() is None:
        record["skipped"] = "this model's items have no cassette to record the judge's call in"
    else:
        messages = judge_messages(
            task.answers, _question(task, item, attempt), task.expected(item), final.raw
        )
        hint = Hint(f"judge:{task.name}", final.raw, item.suite, attempt.corpus)
        record["reply"] = scrub_decoded(safe_text(await judge.complete(messages, hint=hint)))
    details = dict(final.details) if isinstance(final, ScoredStage) else {}
    details[JUDGE_KEY] = record
    judged = ScoredStage(final.name, final.raw, final.answer, final.abstained, details)
    return Attempt((*attempt.stages[:-1], judged), corpus=attempt.corpus)


def judge_record(attempt: Attempt) -> dict[str, Any] | None:
    """What the final stage recorded of the judge, or None."""
    final = attempt.final
    if not isinstance(final, ScoredStage) or not isinstance(final.details, dict):
        return None
    record = final.details.get(JUDGE_KEY)
    return record if isinstance(record, dict) else None


def judged(task: Any, item: Sample, attempt: Attempt, rules: ItemScore) -> ItemScore:
    """The item's score: the rules' own, or, where the recorded judge applies (its mode, and
    for ``unread`` the rules still say "not read"), the judge's outcome with both named."""
    record = judge_record(attempt)
    if record is None or not _applies(rules, str(record.get("mode", "unread"))):
        return rules
    from dataclasses import replace

    from pytest_citebench.papers.reasons.judge_prompt import parse_verdict
    from pytest_citebench.papers.reasons.tasks import NOT_READ

    by = f"judge {record.get('model')} (prompt {record.get('prompt')})"
    said = f"{RULES_MARK}{rules.outcome} ({rules.reason})"
    if "skipped" in record:
        return replace(rules, reason=f"{rules.reason} ({by} not asked: {record['skipped']})")
    verdict = parse_verdict(str(record.get("reply", "")))
    if not verdict.ok:
        reason = f"{NOT_READ}: the {by} gave no verdict: {verdict.problem}{said}"
        return ItemScore("unanswered", rules.expected, {}, reason)
    outcome = verdict.outcome
    reason = f"judged by {record.get('model')} (prompt {record.get('prompt')}): {outcome}"
    reason += f": {verdict.why or 'no reason given'}{said}"
    answer = verdict.answer if outcome in ("correct", "partial", "hallucinated") else ""
    metrics: dict[str, float] = {}
    if answer:
        from pytest_citebench.papers.reasons.tasks import text_metrics

        metrics = text_metrics(rules.expected, answer, exact=outcome == "correct")
    shown = answer or None
    if outcome != "hallucinated":
        return ItemScore(outcome, rules.expected, metrics, reason, answer=shown)  # type: ignore[arg-type]
    from pytest_citebench.papers.reasons.kinds import kind_of

    found = kind_of(
        item,
        _wrong(task, item, answer, reason),
        corpus=attempt.corpus,
        details=attempt.final.details if isinstance(attempt.final, ScoredStage) else None,
        reply=attempt.final.raw,
    )
    return ItemScore(
        "hallucinated", rules.expected, metrics, found.reason(reason), found.kind, answer=shown
    )


def _wrong(task: Any, item: Sample, answer: str, reason: str) -> Judgement:
    """The judge's hallucinated verdict as the kinds read one: the wrong title, or the people
    named who are not gold authors."""
    if not answer:
        return Judgement("hallucinated", reason, "")
    if task.answers == "title":
        return Judgement("hallucinated", reason, answer, wrong_title=short(answer, 300))
    from pytest_citebench.papers.reasons.authors import compare_authors, parse_authors

    gold = parse_authors(task.expected(item)).persons
    wrong = tuple(
        p.text for p in parse_authors(answer).persons if compare_authors([p], gold).matched == 0
    )
    return Judgement("hallucinated", reason, answer, wrong_authors=wrong)
