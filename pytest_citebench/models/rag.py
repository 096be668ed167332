"""RAG around any generator (REASONS §4.1): retrieve papers from the suite's corpus for the
item's query and put them in the prompt, then ask the wrapped model.

*naive*: BM25 top-2, as the paper's Table 4. *advanced*: bi-encoder candidates re-ranked by the
cross-encoder trained here (``train-reranker``), top-k configurable (paper: 40). The wrapped
model's name carries the design (``openai/gpt-4o-mini+rag-naive``), so node ids, cassettes and
every report row say which one answered.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pytest_citebench.api import (
    Hint,
    Message,
    NamedTemplate,
    Reply,
    ShownPaper,
    ToolSpec,
    show_papers,
)
from pytest_citebench.errors import CitebenchError
from pytest_citebench.models import Model, Traits, blocking

RAG_KINDS = ("naive", "advanced")
DEFAULT_K = {"naive": 2, "advanced": 40}
RETRIEVER: dict[str, Literal["bm25", "rerank"]] = {"naive": "bm25", "advanced": "rerank"}

RAG_CONTEXT = NamedTemplate(
    "rag.context",
    "Here are research papers retrieved from a library that may be relevant; the answer may or "
    "may not be among them. Use them only if they fit.\n\n$papers",
)
PAPER_ENTRY = NamedTemplate(
    "rag.paper", "[$rank] Title: $title\nAuthors: $authors\nAbstract: $abstract"
)


def format_papers(hits: Sequence[object]) -> str:
    """Retrieved papers as the prompt shows them, numbered so the model can cite by rank."""
    entries = []
    for rank, hit in enumerate(hits, start=1):
        paper = hit.paper  # type: ignore[attr-defined]
        entries.append(
            PAPER_ENTRY.render(
                rank=str(rank), title=paper.title, authors=paper.authors, abstract=paper.abstract
            )
        )
    return "\n\n".join(entries)


# An entry as PAPER_ENTRY writes it, read up to its abstract; a title may hold a line break
# (arXiv's own titles do).
_ENTRY = re.compile(
    "^"
    + re.escape(PAPER_ENTRY.text.split("$abstract")[0])
    .replace(re.escape("$rank"), r"(\d+)")
    .replace(re.escape("$title"), "(.*?)")
    .replace(re.escape("$authors"), "(.*?)"),
    re.S | re.M,
)


def read_papers(messages: Sequence[Message]) -> list[ShownPaper]:
    """The numbered papers the last retrieved context in a conversation shows, read back from
    the messages as sent (a cassette's request, an answerer's prompt): what "[2]" meant for
    answers recorded without the list beside them."""
    head = RAG_CONTEXT.text.split("$papers", 1)[0]
    contexts = [m.content for m in messages if m.role == "user" and m.content.startswith(head)]
    if not contexts:
        return []
    found = _ENTRY.findall(contexts[-1][len(head) :])
    return [ShownPaper(int(rank), title, authors) for rank, title, authors in found]


def augment(messages: Sequence[Message], context: str) -> list[Message]:
    """The retrieved papers go in a user turn just before the question (the last user turn)."""
    out = list(messages)
    last_user = max((i for i, m in enumerate(out) if m.role == "user"), default=len(out))
    out.insert(last_user, Message("user", RAG_CONTEXT.render(papers=context)))
    return out


@dataclass
class RagModel(Model):
    """A model whose every call is preceded by retrieval from the item's suite corpus."""

    base: Model = field(default_factory=lambda: Model("citebench/bm25"))
    kind: str = "naive"
    k: int = 2

    @classmethod
    def wrap(cls, base: Model, kind: str, k: int | None = None) -> RagModel:
        """Named ``<base>+rag-<kind>``, so its cassettes and rows never mix with the base's."""
        if kind not in RAG_KINDS:
            raise ValueError(f"--citebench-rag {kind!r}: choose one of {', '.join(RAG_KINDS)}")
        return cls(
            name=f"{base.name}+rag-{kind}",
            params=base.params,
            api_base=base.api_base,
            retry=base.retry,
            replay_only=base.replay_only,
            concurrency=base.concurrency,
            base=base,
            kind=kind,
            k=k or DEFAULT_K[kind],
        )

    @property
    def traits(self) -> Traits:
        """The base model decides: retrieval itself always runs in-process."""
        return self.base.traits

    def input_files(self) -> tuple[tuple[str, Path], ...]:
        """The base model's: retrieval reads only the suite's corpus."""
        return self.base.input_files()

    async def converse(
        self, messages: Sequence[Message], *, hint: Hint, tools: Sequence[ToolSpec]
    ) -> Reply:
        """A tool-using task retrieves through its own search tool: RAG around it is refused."""
        raise CitebenchError(
            f"{self.name}: a tool-using task searches with its own tools; run it without "
            "--citebench-rag (--citebench-rag none keeps the plain model)"
        )

    async def complete(self, messages: Sequence[Message], *, hint: Hint) -> str:
        """Retrieval runs in a thread so the engine's loop keeps serving other items meanwhile."""
        if hint.corpus is None:
            raise CitebenchError(
                f"suite {hint.suite!r} has no corpus; RAG needs 'corpus = ...' in its suite.toml"
            )
        from pytest_citebench.retrieval import get_retriever

        retriever = get_retriever(RETRIEVER[self.kind], hint.corpus)
        query = " ".join([hint.query, *hint.extra.values()])
        hits = await blocking(retriever.search, query, k=self.k)
        # The task judging the reply learns what "[2]" is (a reply may cite by number).
        show_papers(
            [
                ShownPaper(rank, hit.paper.title, hit.paper.authors)
                for rank, hit in enumerate(hits, start=1)
            ]
        )
        return await self.base.complete(augment(messages, format_papers(hits)), hint=hint)
