from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# The installed suite packages (this checkout's 49,209 cases, installed editable) stay out of the
# fixture projects' runs with no path; tests/test_installed_suites.py turns them on where it means to.
os.environ["CITEBENCH_INSTALLED_SUITES"] = "0"

# pytester's in-process runs drop modules first imported during a run; numpy refuses to load twice
# and litellm leaves import-time state behind, so load them once here for the whole session.
import numpy  # noqa: F401
import rank_bm25  # noqa: F401
import vcr  # noqa: F401

from pytest_citebench.models.litellm_backend import litellm

litellm()
# Resolve litellm's lazily imported provider modules and nltk once, before any in-process run.
litellm().completion(
    model="openai/warmup", messages=[{"role": "user", "content": "x"}], mock_response="ok"
)
from pytest_citebench.papers.reasons.tasks import text_metrics  # noqa: E402

text_metrics("warm up", "warm")
# Every task module once, too: one first imported inside a run is dropped afterwards while the
# registry keeps its task, and the next run's import then registers it twice.
from pytest_citebench import registry  # noqa: E402

registry.names()

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
TINY = FIXTURES / "suites" / "tiny"


@pytest.fixture
def tiny(pytester: pytest.Pytester) -> Path:
    """The tiny suite copied into a fresh pytester directory as suites/tiny."""
    target = pytester.path / "suites" / "tiny"
    shutil.copytree(TINY, target)
    return target


@pytest.fixture
def rag_stub_answer() -> Callable[[int], Callable[[dict], str]]:
    """A stub generator for RAG runs: it checks that the prompt carries one block of exactly
    ``papers`` retrieved papers and answers with the first one's title."""

    def make(papers: int) -> Callable[[dict], str]:
        def answer(request: dict) -> str:
            context = [
                m
                for m in request["messages"]
                if m["content"].startswith("Here are research papers")
            ]
            assert len(context) == 1 and context[0]["content"].count("Title: ") == papers
            return context[0]["content"].split("Title: ", 1)[1].split("\n", 1)[0]

        return answer

    return make


def default_signals() -> None:
    """``preexec_fn`` for subprocesses a test interrupts: SIGINT and SIGTERM back to their
    defaults and unblocked. A child inherits an ignored or blocked signal from the process that
    forks it (here an xdist worker, whose libraries may have changed them), and Python keeps an
    inherited SIG_IGN for SIGINT, so the test's Ctrl-C would be lost."""
    import signal

    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT, signal.SIGTERM])
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def stub_args(url: str, *extra: str) -> list[str]:
    """The command line of a run against a loopback stub server (``openai/stub`` at ``url``),
    then ``extra``: one place for what every stub-run test passes."""
    return [
        "--citebench",
        "--citebench-model",
        "openai/stub",
        "--citebench-api-base",
        url,
        "-p",
        "no:cacheprovider",
        *extra,
    ]


def run_stub(pytester: pytest.Pytester, url: str, *extra: str) -> pytest.RunResult:
    """One in-process run of the plugin against a loopback stub server (``stub_args``): the one
    helper every stub-run test calls, so a change to how such runs start is made once."""
    return pytester.runpytest(*stub_args(url, *extra))


def outcomes(result: pytest.RunResult) -> dict[str, int]:
    """Outcome counts without 'warnings' (litellm's lazy imports warn about pydantic)."""
    return {k: v for k, v in result.parseoutcomes().items() if k != "warnings"}
