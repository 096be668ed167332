"""The judge model (``--citebench-judge``, issue 42 item 4) through ``pytest --citebench``: one
loopback stub answers both the model's and the judge's calls; both are recorded in the item's
cassette and replay with the server stopped, to the same outcomes; mode ``unread`` leaves what
the rules read to the rules, mode ``all`` judges every item; a judge reply that is no verdict is
*unanswered*, said so; the disagreements are listed in every report.

Each rule was broken once and a test here failed (judge_model, judge_prompt, judge_report): mode
unread judging every item; score ignoring the recorded verdict; a reply that is no verdict
scored as the rules; an unknown outcome accepted; several outcomes, the first winning; the reply
not kept on the stage; a provider failure swallowed; the disagreements not listed; their count
off; the judge sampled at the run's temperature; the rules' outcome left out of the reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench.papers.reasons import judge_model
from pytest_citebench.papers.reasons.judge_prompt import (
    JUDGE_PROMPT,
    JUDGE_SYSTEM,
    parse_verdict,
)
from pytest_citebench.recording import cassette_path
from pytest_citebench.settings import SETTINGS
from pytest_citebench.testing.stubserver import StubServer
from tests.conftest import REPO, outcomes, run_stub

RUSSIAN = (
    "Эта фраза описывает архитектуру, предложенную в известной статье о механизмах внимания, "
    "опубликованной в две тысячи семнадцатом году исследователями."
)
#: The tiny suite's indirect items, by sentence start, and what the stub model answers.
ANSWERS = {
    "a network architecture": RUSSIAN,  # the rules cannot read it: "not read"
    "masked language modeling": "Deep learning: A new era of computational biology",
    "tomatoes grow well": "pass",
    "residual learning framework": "Deep Residual Learning for Image Recognition",
}
#: What the stub judge says of each answer.
VERDICTS = {
    RUSSIAN: {"outcome": "correct", "answer": "Attention Is All You Need", "why": "in Russian"},
    "Deep learning": {"outcome": "hallucinated", "answer": "Deep learning", "why": "not gold"},
    "pass": {"outcome": "abstained", "answer": "", "why": "the model wrote pass"},
    # A disagreement with the rules (which read it correct), for mode all.
    "Deep Residual": {"outcome": "partial", "answer": "Deep Residual", "why": "strict judge"},
}


def judge_reply(request: dict[str, Any]) -> str:
    user = request["messages"][-1]["content"]
    answer = user.split("<answer>\n", 1)[1].split("\n</answer>", 1)[0]
    verdict = next(v for start, v in VERDICTS.items() if answer.startswith(start))
    return "```json\n" + json.dumps(verdict) + "\n```"


def stub(judge: Any = judge_reply) -> Any:
    def answer(request: dict[str, Any]) -> str:
        if request["messages"][0]["content"] == JUDGE_SYSTEM.text:
            assert request["model"] == "judge" and request["temperature"] == 0
            return str(judge(request))
        sentence = request["messages"][-1]["content"]
        return next(text for start, text in ANSWERS.items() if sentence.startswith(start))

    return answer


def records(path: Path) -> dict[str, dict[str, Any]]:
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return {r["item_id"]: r for r in lines if r["type"] == "item"}


def run(pytester: pytest.Pytester, url: str, out: str, *extra: str) -> pytest.RunResult:
    return run_stub(
        pytester, url, "--citebench-task", "indirect", "--citebench-results", out,
        "--citebench-judge", "openai/judge", *extra,
    )  # fmt: skip


def judge_calls(server: StubServer) -> int:
    return sum((r.get("json") or {}).get("model") == "judge" for r in server.requests)


@pytest.fixture(autouse=True)
def no_judge_left() -> Any:
    """An in-process run configures the module's judge; no later test in this process may find
    it (the answer corpus calls solve directly, with no run to configure it)."""
    yield
    judge_model.SETTINGS.model, judge_model.SETTINGS.mode = None, "unread"


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0000000000")


@pytest.mark.usefixtures("tiny", "keyed")
def test_the_judge_reads_what_the_rules_cannot_recorded_then_replayed_offline(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    with StubServer(stub()) as llm:
        recorded = run(pytester, llm.url, "a.jsonl", "--citebench-record", "once")
        url = llm.url
        assert judge_calls(llm) == 1  # mode unread: only the reply the rules could not read
    assert outcomes(recorded) == {"passed": 2, "hallucinated": 1, "abstained": 1}
    a = records(pytester.path / "a.jsonl")
    judged = a["2001.00001-s1"]
    assert judged["outcome"] == "correct"
    assert judged["reason"].startswith(
        f"judged by openai/judge (prompt {JUDGE_PROMPT}): correct: in Russian | rules: unanswered"
    )
    assert judged["answer"] == "Attention Is All You Need"
    details = judged["stages"][-1]["details"]["judge"]
    assert (details["model"], details["prompt"], details["mode"]) == (
        "openai/judge",
        JUDGE_PROMPT,
        "unread",
    )
    # What the rules read stays theirs.
    assert a["2001.00002-s2"]["outcome"] == "correct"
    assert "judge" not in json.dumps(a["2001.00002-s2"]["stages"])
    assert a["2001.00001-s2"]["outcome"] == "hallucinated"
    # Both calls are in the item's own cassette, with no key.
    cassettes = cassette_path(
        pytester.path / "cassettes", "openai/stub", "tiny", 1, "indirect", "x"
    ).parent
    text = (cassettes / "2001.00001-s1.yaml").read_text()
    bodies = [i["request"]["body"] for i in json.loads(text)["interactions"]]
    assert len(bodies) == 2 and '"model": "judge"' in bodies[1].replace('":"', '": "')
    assert "sk-test-not-a-real-key" not in text
    # The server is gone and so is the key: the replay gives the same outcomes and reasons.
    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = run(pytester, url, "b.jsonl")
    assert outcomes(replayed) == outcomes(recorded)
    b = records(pytester.path / "b.jsonl")
    for item_id, record in a.items():
        assert (b[item_id]["outcome"], b[item_id]["reason"]) == (
            record["outcome"],
            record["reason"],
        )
    replayed.stdout.fnmatch_lines(
        [
            "*Judge model vs rules*",
            "*tiny*indirect*openai/stub*2001.00001-s1*openai/judge*unanswered*correct*in Russian",
            "*openai/stub: 1 replies judged by openai/judge; 1 disagree with the rules*",
        ]
    )


@pytest.mark.usefixtures("tiny", "keyed")
def test_mode_all_judges_every_item_and_lists_the_disagreements(
    pytester: pytest.Pytester,
) -> None:
    with StubServer(stub()) as llm:
        result = run(
            pytester, llm.url, "a.jsonl", "--citebench-record", "once",
            "--citebench-judge-mode", "all", "--citebench-markdown", "r.md",
            "--citebench-html", "r.html",
        )  # fmt: skip
        assert judge_calls(llm) == 4
    a = records(pytester.path / "a.jsonl")
    assert {i: r["outcome"] for i, r in a.items()} == {
        "2001.00001-s1": "correct",
        "2001.00001-s2": "hallucinated",
        "2001.00002-s1": "abstained",
        "2001.00002-s2": "partial",
    }
    assert all(r["reason"].startswith("judged by openai/judge") for r in a.values())
    assert a["2001.00001-s2"]["kind"] is not None  # a judged hallucination has its kind too
    # Two disagreements: the reply the rules could not read, and the strict judge's partial.
    result.stdout.fnmatch_lines(
        [
            "*Judge model vs rules*",
            "*tiny*indirect*openai/stub*2001.00001-s1*openai/judge*unanswered*correct*",
            "*tiny*indirect*openai/stub*2001.00002-s2*openai/judge*correct*partial*strict judge*",
            "*openai/stub: 4 replies judged by openai/judge; 2 disagree with the rules*",
        ]
    )
    # A rescore reads the recorded verdicts back, with no call (the server is stopped).
    from pytest_citebench.commands.rescore import main as rescore

    out = pytester.path / "rescored.jsonl"
    suites = str(pytester.path / "suites")
    assert rescore(str(pytester.path / "a.jsonl"), str(out), [suites]) == 0
    rescored = records(out)
    for item_id, record in a.items():
        assert (rescored[item_id]["outcome"], rescored[item_id]["reason"]) == (
            record["outcome"],
            record["reason"],
        )
    for report in ("r.md", "r.html"):
        text = (pytester.path / report).read_text()
        assert "Judge model vs rules" in text and "strict judge" in text
        assert "2001.00002-s2" in text


@pytest.mark.usefixtures("tiny", "keyed")
def test_a_judge_reply_that_is_no_verdict_is_unanswered_and_said(
    pytester: pytest.Pytester,
) -> None:
    with StubServer(stub(lambda request: "I think the answer looks right to me.")) as llm:
        result = run(pytester, llm.url, "a.jsonl", "--citebench-record", "once")
    judged = records(pytester.path / "a.jsonl")["2001.00001-s1"]
    assert judged["outcome"] == "unanswered"
    assert judged["reason"].startswith(
        f"not read: the judge openai/judge (prompt {JUDGE_PROMPT}) gave no verdict: no JSON "
        "object with an 'outcome' in its reply"
    )
    result.stdout.fnmatch_lines(["*1 judge replies were no verdict (scored unanswered*"])


@pytest.mark.usefixtures("tiny", "keyed")
def test_a_judge_provider_failure_is_the_items_error(pytester: pytest.Pytester) -> None:
    from pytest_citebench.testing.stubserver import Fault

    def faults(index: int, request: dict[str, Any]) -> Fault | None:
        return Fault("status", status=400) if request.get("model") == "judge" else None

    with StubServer(stub(), faults=faults) as llm:
        run(pytester, llm.url, "a.jsonl", "--citebench-record", "once")
    a = records(pytester.path / "a.jsonl")
    assert a["2001.00001-s1"]["outcome"] == "error"
    assert "openai/judge" in a["2001.00001-s1"]["error"]
    assert a["2001.00002-s2"]["outcome"] == "correct"  # items the judge was not asked about


def test_a_verdict_is_read_robustly_and_anything_else_is_no_verdict() -> None:
    ok = parse_verdict('Here: {"outcome": " Hallucinated ", "answer": "X", "why": "a\\nb"}')
    assert (ok.outcome, ok.answer, ok.why, ok.ok) == ("hallucinated", "X", "a b", True)
    assert parse_verdict('```json\n{"outcome": "correct"}\n```').outcome == "correct"
    for bad, problem in [
        ("correct", "no JSON object"),
        ('{"verdict": "correct"}', "no JSON object"),
        ('{"outcome": "right"}', "is none of"),
        ('{"outcome": "correct"} or {"outcome": "partial"}', "several outcomes"),
        ('{"outcome": "correct"', "no JSON object"),
    ]:
        verdict = parse_verdict(bad)
        assert not verdict.ok and verdict.outcome == "" and problem in verdict.problem


def test_the_modes_are_the_settings_choices() -> None:
    assert SETTINGS["judge_mode"].choices == judge_model.MODES


@pytest.mark.usefixtures("tiny", "keyed")
def test_the_judge_from_pyproject_as_a_profile(pytester: pytest.Pytester) -> None:
    with StubServer(stub()) as llm:
        pytester.makepyprojecttoml(
            '[tool.citebench]\njudge = "grader"\njudge_mode = "all"\n'
            '[tool.citebench.models."grader"]\nmodel = "openai/judge"\n'
            f'api_base = "{llm.url}"\nmax_tokens = 300\n'
        )
        run_stub(pytester, llm.url, "--citebench-task", "indirect", "--citebench-results",
                 "a.jsonl", "--citebench-record", "once")  # fmt: skip
        sent = [r["json"] for r in llm.requests if (r.get("json") or {}).get("model") == "judge"]
    assert len(sent) == 4 and {r["max_tokens"] for r in sent} == {300}
    a = records(pytester.path / "a.jsonl")
    assert all(r["reason"].startswith("judged by grader (prompt") for r in a.values())


@pytest.mark.usefixtures("tiny")
@pytest.mark.parametrize("judge", ["citebench/bm25", "answers:x.jsonl"])
def test_a_judge_that_cannot_record_is_a_usage_error(pytester: pytest.Pytester, judge: str) -> None:
    result = pytester.runpytest("--citebench", "-p", "no:cacheprovider", "--citebench-judge", judge)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--citebench-judge*a judge must be a model called through*"])


def test_the_question_is_the_conversation_the_final_stage_answered() -> None:
    from pytest_citebench.api import Attempt, Sample, Stage
    from pytest_citebench.papers.reasons.judge_model import _question
    from pytest_citebench.papers.reasons.tasks import TASKS

    sid = next(t for t in TASKS if t.name == "sid")
    fields = json.loads((REPO / "fixtures/suites/tiny/items.jsonl").open().readline())
    item = Sample("tiny", fields["id"], fields, 1)
    stages = (Stage("indirect", "pass", "pass", True), Stage("abstract", "No idea", "", False))
    messages = _question(sid, item, Attempt(stages))
    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[2].content == "pass" and fields["cited_abstract"] in messages[3].content
    assert _question(sid, item, Attempt(stages[:1])) == sid.messages(item)
