"""``--citebench-model answers:FILE``: answers produced elsewhere, scored like a live answer.

Why: teams hold answers from a batch API, another harness or a vendor's run. Each item gets the
raw text its line gives, and the task parses and scores it exactly as it would a model's reply
(for REASONS, as a replay would). An answers file is JSON lines::

    {"id": "ITEM_ID", "answer": "RAW TEXT"}               # any task of that item
    {"id": "ITEM_ID", "task": "detect", "answer": "..."}  # this task only (wins over the above)

An escalating task (SID, direct with metadata) gets the same text at every stage. An item with no
line is an *error* naming the file and the id, never a pass. A malformed line is one usage error
at the start of the run naming ``file:line``. Every record of the run keeps the file's sha256.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_citebench.api import Hint, Message, Reply, ToolSpec
from pytest_citebench.errors import ProviderError
from pytest_citebench.models import IN_PROCESS, Model, Traits

PREFIX = "answers:"
# In-process like a baseline, but its text comes from outside: a key pasted into an answer is
# scrubbed exactly as one a live model echoes.
ANSWERS_TRAITS = dataclasses.replace(IN_PROCESS, scrubs_answers=True)


class AnswersFileError(ValueError):
    """A line of an answers file that cannot be used; ``str()`` starts with ``file:line``."""


@dataclass(frozen=True)
class AnswerBook:
    """The answers of one file, by (task or None, item id)."""

    path: Path
    sha256: str
    answers: Mapping[tuple[str | None, str], str]
    # The file as read (``path`` is as the user wrote it): no output of the run may be it.
    source: Path | None = None

    def answer(self, task: str, item_id: str) -> str | None:
        """The task's own line for the item, else the item's task-less line, else None."""
        found = self.answers.get((task, item_id))
        return found if found is not None else self.answers.get((None, item_id))


def load_answers(path: str | Path, *, shown: str | None = None) -> AnswerBook:
    """Read and check an answers file; the first bad line raises naming ``file:line``.

    ``shown`` is the path as the user wrote it: messages and records name the file so."""
    from pytest_citebench import jsonl

    source = Path(path)
    path = Path(shown) if shown is not None else source
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise AnswersFileError(f"{path}: cannot read the answers file: {exc.strerror}") from None
    answers: dict[tuple[str | None, str], str] = {}
    first: dict[tuple[str | None, str], int] = {}
    try:
        for line, obj in jsonl.iter_objects(source):
            item_id, answer, task = obj.get("id"), obj.get("answer"), obj.get("task")
            problem = None
            if not isinstance(item_id, str) or not item_id:
                problem = "'id' must be a non-empty string (the item id)"
            elif not isinstance(answer, str):
                problem = "'answer' must be a string (the raw answer text)"
            elif task is not None and (not isinstance(task, str) or not task):
                problem = "'task', when given, must be a task name"
            elif set(obj) - {"id", "answer", "task"}:
                problem = f"unknown keys {sorted(set(obj) - {'id', 'answer', 'task'})}"
            if problem:
                raise AnswersFileError(f"{path}:{line}: {problem}")
            key = (task, str(item_id))
            if key in first:
                raise AnswersFileError(
                    f"{path}:{line}: a second answer for id {item_id!r}"
                    + (f" (task {task})" if task else "")
                    + f"; the first is on line {first[key]}"
                )
            first[key] = line
            answers[key] = str(answer)
    except jsonl.JsonlError as exc:
        where = f"{path}:{exc.line}" if exc.line is not None else str(path)
        raise AnswersFileError(f"{where}: {exc.problem}") from None
    if not answers:
        raise AnswersFileError(f"{path}: no answers in the file")
    return AnswerBook(path, hashlib.sha256(data).hexdigest(), answers, source)


@dataclass
class AnswersModel(Model):
    """A model whose every answer is a line of a file: local (no key, no cassette, no cost)."""

    book: AnswerBook = field(default_factory=lambda: AnswerBook(Path(), "", {}))

    @property
    def traits(self) -> Traits:
        return dataclasses.replace(ANSWERS_TRAITS, reads_prompt=False)

    def provenance(self) -> dict[str, str] | None:
        return {"file": str(self.book.path), "sha256": self.book.sha256}

    def input_files(self) -> tuple[tuple[str, Path], ...]:
        return ((f"--citebench-model {self.name}", self.book.source or self.book.path),)

    async def complete(self, messages: Sequence[Message], *, hint: Hint) -> str:
        raise ProviderError(
            f"{self.name}: an answers file answers items by id; it cannot stand behind a "
            "wrapper such as --citebench-rag"
        )

    async def converse(
        self, messages: Sequence[Message], *, hint: Hint, tools: Sequence[ToolSpec]
    ) -> Reply:
        raise ProviderError(
            f"{self.name}: an answers file holds one reply per item; a tool-using task needs a "
            "model that takes turns (a provider's model, a server on loopback, or the relay)"
        )

    async def answer_item(
        self, messages: Sequence[Message], *, hint: Hint, task: str, item_id: str
    ) -> str:
        found = self.book.answer(task, item_id)
        if found is None:
            raise ProviderError(
                f"{self.book.path}: no answer for id {item_id!r} (task {task}); add a line "
                f'{{"id": "{item_id}", "answer": ...}} or leave the item out of the run'
            )
        return found
