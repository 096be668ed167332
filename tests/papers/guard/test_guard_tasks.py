"""citation-guard inside pytest: the verify / calibrate / reattribute / guard tasks, their tables,
gates and builders. Everything here runs offline on the lexical verifier and BM25 (no model load).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench.api import Attempt, Hint, Message, Sample, Stage
from pytest_citebench.errors import ProviderError, ResponseError
from pytest_citebench.models import baselines
from pytest_citebench.papers.guard import builder as builders_guard
from pytest_citebench.papers.guard import offline, scifact, setstats, settings, verdicts
from pytest_citebench.papers.guard import tasks as guard_tasks
from pytest_citebench.papers.guard.stats import (
    bootstrap_ci,
    cohen_kappa,
    conformal_threshold,
    gwet_ac1,
    psa_nsa,
    recall_specificity,
    roc_auc,
)
from pytest_citebench.suites import load_suite
from tests.conftest import REPO

SUITES = REPO / "suites" / "guard"
SCIFACT = REPO / "fixtures" / "scifact" / "scifact_test.jsonl"
QASA = REPO / "fixtures" / "guard" / "qasa_calibration_scores.json"


@pytest.fixture
def guard_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard's local models in BASELINES (a no-op once models/baselines.py registers them)."""
    monkeypatch.setattr(
        baselines,
        "BASELINES",
        {**baselines.BASELINES, **offline.local_models(baselines.BASELINES)},
    )


def copy_suite(pytester: pytest.Pytester, name: str) -> Path:
    target = pytester.path / "suites" / "guard" / name
    shutil.copytree(SUITES / name, target)
    return target


def literal(*patterns: str) -> list[str]:
    """fnmatch patterns whose '[' are literal (CIs print as [lo, hi]); '*' stays a wildcard."""
    return [p.replace("[", "[[]") for p in patterns]


def item(fields: dict[str, Any], suite: str = "guard/test") -> Sample:
    return Sample(suite=suite, id=str(fields.get("id", "x")), fields=fields, line=1)


def fixed(answer: str) -> Callable[..., Any]:
    """A ``generate`` that always answers ``answer`` and remembers what it was asked."""
    seen: list[tuple[Sequence[Message], Hint]] = []

    async def generate(messages: Sequence[Message], *, hint: Hint) -> str:
        seen.append((messages, hint))
        return answer

    generate.seen = seen  # type: ignore[attr-defined]
    return generate


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("raw", "score"),
    [
        ("0.73", 0.73),
        ("1", 1.0),
        ("score: 0.25", 0.25),
        ("SUPPORTED", 1.0),
        ("Verdict: partial.", 0.5),
        ("UNSUPPORTED - the passage is silent", 0.0),
        ("Not supported.", 0.0),
        ("1.5", None),
        ("I cannot tell", None),
    ],
)
def test_parse_score(raw: str, score: float | None) -> None:
    assert verdicts.parse_score(raw) == score


def test_parse_label_and_ranking() -> None:
    assert verdicts.parse_label("true") and verdicts.parse_label("SUPPORT")
    assert not verdicts.parse_label("false") and not verdicts.parse_label("Contradict")
    with pytest.raises(ResponseError, match="neither supported nor unsupported"):
        verdicts.parse_label("maybe")
    assert verdicts.parse_ranking("Ranking: 3, 1, 3, 9, 2", 4) == [3, 1, 2]


def test_importing_the_tasks_loads_no_heavy_module() -> None:
    code = (
        "import sys, pytest_citebench.papers.guard.tasks, pytest_citebench.papers.guard.builder\n"
        "import pytest_citebench.papers.guard.scifact\n"
        "heavy = {'numpy', 'torch', 'sentence_transformers', 'litellm'} & set(sys.modules)\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------- tasks, no pytester


def test_verify_asks_the_judge_prompt_and_scores_at_the_threshold() -> None:
    task = guard_tasks.Verify()
    it = item({"claim": "A causes B.", "passage": "We show A causes B.", "label": "unsupported"})
    generate = fixed("SUPPORTED")
    attempt = asyncio.run(task.solve(it, generate, suite_corpus=None))
    messages, hint = generate.seen[0]  # type: ignore[attr-defined]
    assert "Claim: A causes B." in messages[0].content and "SUPPORTED" in messages[0].content
    assert hint.task == "verify" and hint.extra["passage"] == "We show A causes B."
    score = task.score(it, attempt)
    assert score.outcome == "hallucinated"  # the judge called an unsupported citation supported
    assert dict(score.metrics) == {"score": 1.0, "label": 0.0, "threshold": 0.5}
    with pytest.raises(ResponseError, match="neither a score"):
        asyncio.run(task.solve(it, fixed("no idea"), suite_corpus=None))


def test_validation_stats_match_the_library() -> None:
    labels = [True] * 6 + [False] * 4
    scores = [0.9, 0.8, 0.7, 0.6, 0.4, 0.55, 0.3, 0.6, 0.2, 0.5]
    records = [
        {"item_id": f"i{i}", "metrics": {"score": s, "label": float(y), "threshold": 0.5}}
        for i, (y, s) in enumerate(zip(labels, scores, strict=True))
    ]
    stats = setstats.validation_stats(records)
    predicted = [s > 0.5 for s in scores]
    recall, spec = recall_specificity(labels, predicted)
    assert stats["recall_supported"].value == pytest.approx(recall) == 5 / 6
    assert stats["specificity"].value == pytest.approx(spec) == 3 / 4
    assert stats["kappa"].value == pytest.approx(cohen_kappa(labels, predicted))
    assert stats["auc"].value == pytest.approx(roc_auc(labels, scores))
    auc = bootstrap_ci(roc_auc, labels, scores, B=2000, seed=0)
    assert (stats["auc"].lo, stats["auc"].hi) == pytest.approx((auc.low, auc.high))
    assert stats["recall_supported"].n == 6 and stats["specificity"].n == 4


@pytest.mark.parametrize("seed", range(5))
def test_vectorised_agreement_matches_the_library(seed: int) -> None:
    import numpy as np

    rng = np.random.default_rng(seed)
    a = rng.random(30) < 0.7
    b = a ^ (rng.random(30) < 0.2 * seed)
    got = setstats.binary_agreement(a, b)
    psa, nsa = psa_nsa(a.tolist(), b.tolist())
    assert got["psa"] == pytest.approx(psa) and got["nsa"] == pytest.approx(nsa)
    assert got["kappa"] == pytest.approx(cohen_kappa(a.tolist(), b.tolist()), nan_ok=True)
    ac1 = gwet_ac1(a.tolist(), b.tolist(), categories=[True, False])
    assert got["ac1"] == pytest.approx(ac1)
    scores = np.round(rng.random(30), 1)  # ties
    assert setstats._auc(a, scores) == pytest.approx(roc_auc(a.tolist(), scores.tolist()))


def test_guard_task_flags_a_wrong_citation_and_proposes_the_right_passage() -> None:
    passages = [
        "Metformin activates AMPK in liver cells and lowers glucose output.",
        "Bananas are rich in potassium and grow in tropical climates.",
    ]
    it = item({"question": "What does metformin do?", "passages": passages, "tau": 0.4})
    answer = "Metformin activates AMPK in liver cells [2]. Bananas grow in tropical climates [2]."
    task = guard_tasks.Guard()
    attempt = asyncio.run(task.solve(it, fixed(answer), suite_corpus=None))
    assert attempt.final.answer == (
        "Metformin activates AMPK in liver cells [2 UNVERIFIED]. "
        "Bananas grow in tropical climates [2]."
    )
    assert attempt.final.raw == answer
    assert "[2] -> passage 1" in attempt.stages[0].answer
    score = task.score(it, attempt)
    assert score.outcome == "hallucinated"
    assert score.expected == "every citation verified by lexical at tau=0.4"
    assert score.metrics["citations"] == 2 and score.metrics["flagged"] == 1
    assert score.metrics["reattributable"] == 1
    nothing = asyncio.run(task.solve(it, fixed("Metformin is a drug."), suite_corpus=None))
    assert task.score(it, nothing).outcome == "unanswered"  # no citation: nothing was cited


def test_guard_verifier_and_tau_come_from_the_item_or_both_env_vars(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    it = item({"question": "q", "passages": ["p"], "tau": 0.3, "alpha": 0.1})
    assert settings.guard_config(it) == ("lexical", 0.3, 0.1)
    monkeypatch.setenv("CITEBENCH_GUARD_VERIFIER", "embedding")
    with pytest.raises(ResponseError, match="together"):
        settings.guard_config(it)
    monkeypatch.setenv("CITEBENCH_GUARD_TAU", "0.71")
    assert settings.guard_config(it) == ("embedding", 0.71, None)


def test_unsupported_rate_is_a_ratio_of_sums_with_an_item_bootstrap() -> None:
    records = [
        {"item_id": "a", "metrics": {"citations": 2.0, "flagged": 1.0}},
        {"item_id": "b", "metrics": {"citations": 3.0, "flagged": 0.0}},
        {"item_id": "c", "metrics": {"citations": 0.0, "flagged": 0.0}},  # cites nothing: out
        {"item_id": "d", "metrics": {"citations": 1.0, "flagged": 1.0}},
    ]
    stat = setstats.unsupported_rate(records)
    assert stat.value == pytest.approx(2 / 6) and stat.n == 6
    assert 0.0 <= stat.lo <= stat.value <= stat.hi <= 1.0


def test_local_models_route_guard_tasks_and_refuse_the_rest() -> None:
    models = offline.local_models({"bm25": lambda hint, options: "reasons answer"})
    reasons = Hint("indirect", "a sentence", "reasons/nlp")
    assert models["bm25"](reasons, {}) == "reasons answer"
    verify = Hint("verify", "Metformin activates AMPK.", "g", None, {"passage": "Metformin AMPK"})
    assert float(models["bm25"](verify, {})) == pytest.approx(2 / 3)
    assert models["verifier-lexical"](verify, {}) == models["bm25"](verify, {})
    rank = Hint("reattribute", "metformin AMPK", "g", None, {"passages": '["bananas", "AMPK"]'})
    assert models["bm25"](rank, {}) == "2, 1"
    with pytest.raises(ProviderError, match="is a verifier"):
        models["verifier-lexical"](reasons, {})
    rerank = offline.route("rerank", lambda hint, options: "x")
    with pytest.raises(ProviderError, match="no citation-guard baseline"):
        rerank(verify, {})


# --------------------------------------------------------------------------- pytest --citebench


def test_scifact_verifier_table_with_cis(pytester: pytest.Pytester, guard_models: None) -> None:
    copy_suite(pytester, "scifact-verify")
    result = pytester.runpytest(
        "--citebench",
        "-p",
        "no:cacheprovider",
        "--citebench-model",
        "citebench/verifier-lexical",
        "--citebench-results",
        "out.jsonl",
    )
    assert result.ret == 0
    assert result.parseoutcomes() == {"passed": 144, "hallucinated": 64}
    # recall / specificity / kappa / AUC with bootstrap CIs (B = 2000, seed 0), one row per
    # verifier; the numbers are those of benchmarks/guard_scifact.py on the same 208 items.
    result.stdout.fnmatch_lines(
        literal(
            "*citebench: verify*",
            "*predicted supported = score > threshold; bootstrap 95% CIs (B=2000, seed 0)",
            "guard/scifact-verify *citebench/verifier-lexical *0.5 *137/71 *0.832 [0.770, 0.895] "
            "*0.423 [0.310, 0.545] *0.271 [0.135, 0.414] *0.653 [0.575, 0.731]",
            "*matched-catch frontier*",
            "guard/scifact-verify *citebench/verifier-lexical *0.686 (0.8) *0.788 (0.8571)*",
            "*run two or more verifiers side by side*",
        )
    )
    aggregate = next(
        json.loads(line)
        for line in (pytester.path / "out.jsonl").read_text().splitlines()
        if '"aggregate"' in line
    )
    assert aggregate["metrics"]["auc"] == {"value": 0.653336, "ci": [0.574986, 0.730837], "n": 208}


def test_agreement_between_two_verifiers(pytester: pytest.Pytester, guard_models: None) -> None:
    target = copy_suite(pytester, "scifact-verify")
    lines = (target / "items.jsonl").read_text().splitlines()
    (target / "items.jsonl").write_text("\n".join(lines[:40]) + "\n")
    result = pytester.runpytest(
        "--citebench",
        "-p",
        "no:cacheprovider",
        "--citebench-model",
        "citebench/verifier-lexical",
        "--citebench-model",
        "citebench/bm25",
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        literal(
            "*agreement between verifiers on the same citations*NSA is agreement on what to flag",
            "*verifier A*verifier B*PSA*NSA*Cohen's kappa*Gwet AC1",
            "guard/scifact-verify *citebench/bm25 *citebench/verifier-lexical *40 "
            "*1.000 [1.000, 1.000] *1.000 [1.000, 1.000] *1.000 [1.000, 1.000]*",
        )
    )


@pytest.mark.parametrize(
    ("gate", "code"),
    [
        ("guard/*:verify:specificity>=0.99", pytest.ExitCode.TESTS_FAILED),
        ("guard/*:verify:auc>=0.5", pytest.ExitCode.OK),
    ],
)
def test_verifier_gates(
    pytester: pytest.Pytester, guard_models: None, gate: str, code: pytest.ExitCode
) -> None:
    target = copy_suite(pytester, "scifact-verify")
    items = (target / "items.jsonl").read_text().splitlines()
    (target / "items.jsonl").write_text("\n".join(items[:80]) + "\n")
    result = pytester.runpytest(
        "--citebench",
        "-p",
        "no:cacheprovider",
        "--citebench-model",
        "citebench/verifier-lexical",
        "--citebench-gate",
        gate,
    )
    assert result.ret == code
    verdict = "PASS" if code == pytest.ExitCode.OK else "FAIL"
    result.stdout.fnmatch_lines(
        literal(
            f"{verdict} gate {gate} [--citebench-gate] on citebench/verifier-lexical *measured*"
        )
    )


def test_conformal_table_for_the_qasa_scores(
    pytester: pytest.Pytester, guard_models: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEBENCH_GUARD_TRIALS", "200")
    copy_suite(pytester, "qasa-calibration")
    result = pytester.runpytest(
        "--citebench",
        "-p",
        "no:cacheprovider",
        "--citebench-gate",
        "guard/*:calibrate:catch_rate>=0.88",
    )
    assert result.ret == 0
    assert result.parseoutcomes() == {"passed": 1000}
    result.stdout.fnmatch_lines(
        literal(
            "*citebench: calibrate*",
            "guard/qasa-calibration: 500 unsupported / 500 supported calibration points, scores "
            "precomputed by AttrScore-3B*",
            "*flag a citation when score <= tau*k = ceil((n + 1)(1 - alpha))",
            "*200 random splits (seed 0), n_cal = 250*",
            "alpha*target*k/n*tau*catch (all)*flag rate (all)*held-out catch n_cal=250*"
            "held-out flag rate*catch n_cal=25: conformal / naive",
            "0.02 *0.98 *491/500*0.6290*0.982*0.626*",
            "0.1 *0.90 *451/500*0.4318*0.902*0.358*",
            "0.2 *0.80 *401/500*0.3111*0.802*0.238*",
            "0.3 *0.70 *351/500*0.2454*0.702*0.168*",
            "WARNING: the conformal guarantee*exchangeable with deployment negatives*",
            "PASS gate guard/*:calibrate:catch_rate>=0.88*",
        )
    )
    row = next(line for line in result.outlines if line.startswith("0.1 "))
    conformal, naive = (float(x) for x in row.split()[-3::2])
    assert conformal >= 0.90 > naive  # the paper's Table S4: the naive quantile under-covers


def test_guard_flags_unsupported_citations_with_verifier_and_tau(
    pytester: pytest.Pytester, guard_models: None
) -> None:
    copy_suite(pytester, "scifact-answers")
    result = pytester.runpytest(
        "--citebench",
        "-p",
        "no:cacheprovider",
        "--citebench-results",
        "out.jsonl",
        "--citebench-gate",
        "guard/*:guard:unsupported_rate<=0.05",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the BM25 answerer mis-cites
    result.stdout.fnmatch_lines(
        literal(
            "*citebench: guard*",
            "guard/scifact-answers on citebench/bm25: unsupported-citation rate 0.275 "
            "[0.150, 0.400] (11 of 40 citations flagged in 20 answers*"
            "verifier lexical, tau = 0.4444 (conformal, alpha = 0.1)",
            "FAIL gate guard/*:guard:unsupported_rate<=0.05*measured 0.275*",
        )
    )
    records = [json.loads(line) for line in (pytester.path / "out.jsonl").read_text().splitlines()]
    flagged = [r for r in records if r.get("outcome") == "hallucinated"]
    assert len(flagged) == 10
    assert all(
        "UNVERIFIED]" in r["answer"] and "UNVERIFIED" not in r["raw_answer"] for r in flagged
    )
    audit = json.loads(flagged[0]["stages"][0]["raw"])
    assert audit["verifier"] == "lexical" and any(c["flagged"] for c in audit["citations"])


def test_reattribution_recall_at_k(pytester: pytest.Pytester, guard_models: None) -> None:
    target = copy_suite(pytester, "scifact-reattribution")
    lines = (target / "items.jsonl").read_text().splitlines()
    (target / "items.jsonl").write_text("\n".join(lines[:30]) + "\n")
    result = pytester.runpytest("--citebench", "-p", "no:cacheprovider")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        literal(
            "*citebench: reattribute*",
            "*ranker (model)*recall@1*recall@5*random @1 / @5",
            "guard/scifact-reattribution *citebench/bm25 *30 * [*] *1.000 [0.886, 1.000] "
            "*0.100 / 0.500",
        )
    )


def judge(request: dict[str, Any]) -> str:
    """A deterministic stand-in LLM judge behind the loopback stub."""
    prompt = request["messages"][0]["content"]
    claim = prompt.split("Claim: ", 1)[1].split("\n", 1)[0]
    return "SUPPORTED" if len(claim) % 2 else "UNSUPPORTED - the passage says otherwise."


def test_llm_judge_is_recorded_then_replayed_offline(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_citebench.testing.stubserver import StubServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    target = copy_suite(pytester, "scifact-verify")
    rows = (target / "items.jsonl").read_text().splitlines()
    (target / "items.jsonl").write_text("\n".join(rows[:12]) + "\n")
    calibration = copy_suite(pytester, "qasa-calibration")
    rows = (calibration / "items.jsonl").read_text().splitlines()
    (calibration / "items.jsonl").write_text("\n".join(rows[:5] + rows[-5:]) + "\n")
    args = ["--citebench", "-p", "no:cacheprovider", "--citebench-model", "openai/stub"]
    with StubServer(judge) as server:
        url = server.url
        recorded = pytester.runpytest(
            *args, "--citebench-api-base", url, "--citebench-record", "once"
        )
        assert server.calls == 12  # precomputed calibration scores never reach the model
        prompt = server.requests[0]["json"]["messages"][0]["content"]
    assert recorded.ret == 0
    assert prompt.startswith("You check whether a cited passage supports a claim.")
    assert len(list((pytester.path / "cassettes").rglob("*.yaml"))) == 12
    replayed = pytester.runpytest(*args, "--citebench-api-base", url)  # the stub is gone
    assert replayed.ret == 0
    table = [line for line in recorded.outlines if line.startswith("guard/scifact-verify  openai")]
    assert table and table == [
        line for line in replayed.outlines if line.startswith("guard/scifact-verify  openai")
    ]


# --------------------------------------------------------------------------- builders


def test_committed_suites_are_reproduced_by_the_builder(tmp_path: Path) -> None:
    built = scifact.build_scifact_suites(SCIFACT, QASA, tmp_path)
    assert [(b.name, b.items) for b in built] == [
        ("guard/scifact-verify", 208),
        ("guard/qasa-calibration", 1000),
        ("guard/scifact-reattribution", 137),
        ("guard/scifact-answers", 20),
    ]
    for suite in built:
        committed = SUITES / suite.directory.name
        for name in ("suite.toml", "items.jsonl"):
            assert (suite.directory / name).read_bytes() == (committed / name).read_bytes(), name
        load_suite(committed)


def test_cached_bm25_ranks_exactly_like_the_library() -> None:
    from pytest_citebench.papers.guard._text import bm25_rank

    rows = scifact.load_scifact(SCIFACT)[:40]
    passages = {i: r["passage"] for i, r in enumerate(rows)}
    cached = scifact._CachedBM25()
    for row in rows[:10]:
        assert cached.rank(row["claim"], passages) == bm25_rank(row["claim"], passages)


def test_build_calibration_from_a_user_file(
    tmp_path: Path, pytester: pytest.Pytester, guard_models: None
) -> None:
    scores = tmp_path / "scores.json"
    unsupported = [i / 40 for i in range(40)]
    scores.write_text(json.dumps({"verifier": "my-judge", "unsupported": unsupported}))
    out = pytester.path / "suites" / "mine"
    assert builders_guard.calibration_main([str(scores), "--out", str(out)]) == 0
    suite = load_suite(out)
    assert suite.name == "calibration/mine" and len(suite.items) == 40
    assert suite.items[0].fields["scored_by"] == "my-judge"
    result = pytester.runpytest("--citebench", "-p", "no:cacheprovider")
    assert result.ret == 0
    tau = conformal_threshold(unsupported, 0.1)
    result.stdout.fnmatch_lines(
        literal(
            "calibration/mine: 40 unsupported / 0 supported calibration points, scores "
            "precomputed by my-judge*",
            f"0.1 *0.90 *37/40*{tau:.4f}*",
        )
    )


def test_build_calibration_jsonl_points_scored_by_the_model(tmp_path: Path) -> None:
    points = tmp_path / "points.jsonl"
    points.write_text(
        json.dumps({"label": "unsupported", "claim": "c", "passage": "p"})
        + "\n"
        + json.dumps({"id": "s1", "label": "SUPPORT", "score": 0.9})
        + "\n"
    )
    built = builders_guard.build_calibration(
        points, tmp_path / "s", name="calibration/s", paper="p", url="u", licence="l"
    )
    items = [
        json.loads(line) for line in (built.directory / "items.jsonl").read_text().splitlines()
    ]
    assert items == [
        {"id": "p00001", "label": "unsupported", "claim": "c", "passage": "p"},
        {"id": "s1", "label": "supported", "score": 0.9},
    ]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"supported": [0.5]}))
    assert builders_guard.calibration_main([str(bad), "--out", str(tmp_path / "b")]) == 1


def test_calibrate_asks_the_model_when_no_score_is_given() -> None:
    task = guard_tasks.Calibrate()
    it = item({"label": "unsupported", "claim": "A causes B.", "passage": "No."})
    attempt = asyncio.run(task.solve(it, fixed("0.2"), suite_corpus=None))
    assert dict(task.score(it, attempt).metrics) == {
        "score": 0.2,
        "label": 0.0,
        "precomputed": 0.0,
    }
    pre = item({"label": "supported", "score": 0.7, "scored_by": "x"})
    attempt = asyncio.run(task.solve(pre, fixed("unused"), suite_corpus=None))
    assert attempt.final == Stage(
        "precomputed", '{"score": 0.7, "scored_by": "x"}', "score 0.7", False
    )
    assert isinstance(attempt, Attempt)


# --------------------------------------------------------------------------- the Paper object


def test_paper_declares_its_hooks_and_examples() -> None:
    from pytest_citebench.papers.guard import PAPER

    assert [c.name for c in PAPER.commands] == ["build-calibration", "build-guard-suites"]
    assert PAPER.environment_problems is settings.environment_problems
    assert PAPER.local_models is offline.local_models
    for task in PAPER.tasks:
        assert task.example is not None and set(task.fields) <= set(task.example), task.name
        assert not task.uses_corpus, task.name
    # The set metrics' NaN fallbacks name the same metrics, in the same order, as the docs.
    assert tuple(guard_tasks.Verify.set_metric_specs) == setstats.VALIDATION_METRICS
    assert tuple(guard_tasks.Calibrate.set_metric_specs) == setstats.CALIBRATION_METRICS
