"""The controller's ledger of one run: item records as they arrive, the results file they go
to, ``--citebench-resume``'s finished items, and when to stop (the file cannot be written, a
cassette cannot be saved, too many errors)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from pytest_citebench.results.files import same_file

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_citebench.results.files import ResultsWriter
    from pytest_citebench.run.runner import Job
    from pytest_citebench.settings import Options


class Ledger:
    """Records, the results writer, resume and stop; built in every process (a worker reads the
    resumed file to deselect the same items), writing only on the controller."""

    def __init__(self, options: Options, *, is_worker: bool, collect_only: bool) -> None:
        self.options = options
        self.records: list[dict[str, Any]] = []
        self.error_count = 0
        # Every item record of --citebench-resume, and nodeid -> finished record (errors are
        # not finished).
        self._resume_items: list[dict[str, Any]] = []
        self.resumed: dict[str, dict[str, Any]] = self._load_resume()
        self.resumed_replayed = False
        # Resumed records this run did again: made under another suite or scorer version.
        self.stale_resumed: dict[str, str] = {}
        # --citebench-shard: item records this shard owes (its cases plus the resumed ones).
        self.shard_expected: int | None = None
        # Why the run must stop now (the results file cannot be written), and what could not be
        # written once it was over (the aggregates, a report): each is one error, exit non-zero.
        self.stop_reason: str | None = None
        self.output_errors: list[str] = []
        self._writer: ResultsWriter | None = None
        self._is_worker = is_worker
        self._collect_only = collect_only

    def open(self) -> None:
        """The results file, opened and locked at start (see ``ResultsWriter``), and emptied
        only once the items run (``start``). Called last at start-up: nothing after it may fail,
        or the file would stay locked for nothing."""
        path = self.options.results
        if self._is_worker or path is None or self._collect_only:
            return
        from pytest_citebench.jsonl import FileBusy
        from pytest_citebench.results.files import ResultsWriter

        resume = self.options.resume
        keep = resume is not None and same_file(path, resume)
        try:
            # Resuming into its own file: the records read by _load_resume, not read again.
            self._writer = ResultsWriter(path, keep=keep, kept=self._resume_items if keep else None)
        except FileBusy:
            raise pytest.UsageError(
                f"--citebench-results {path}: another pytest --citebench run is writing this "
                "file (their records would interleave); wait for it to end or pass another path"
            ) from None
        except OSError as exc:
            raise pytest.UsageError(
                f"--citebench-results {path}: cannot open it for writing "
                f"({exc.strerror or exc}); pass a writable path"
            ) from None

    def start(self) -> None:
        """The items are about to run: the results file, locked since configure but left as it
        was (a run that failed before this point, a usage or collection error, must not empty
        it), is emptied now, unless the run resumes into it."""
        if self._writer is None:
            return
        from pytest_citebench.results.files import ResultsWriteError

        try:
            self._writer.start()
        except ResultsWriteError as exc:
            self._writer = None
            self.stop_reason = f"citebench: {exc}"

    def close(self) -> None:
        """For a run that never reached ``finish``: what was written stays, for resume."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _load_resume(self) -> dict[str, dict[str, Any]]:
        path = self.options.resume
        if path is None:
            return {}
        if not path.is_file():
            raise pytest.UsageError(f"--citebench-resume {path}: no such results file")
        from pytest_citebench.results.files import read_results

        try:
            items, _ = read_results(path)
        except ValueError as exc:
            raise pytest.UsageError(f"--citebench-resume: {exc}") from None
        self._resume_items = items  # all of them, errors too: ResultsWriter keeps them
        return {r["nodeid"]: r for r in items if r.get("outcome") != "error" and r.get("nodeid")}

    def replay_resumed(self, nodeids: list[str]) -> None:
        """Finished items of the resumed file that this run selected count as if they had just
        run (controller only): same records, same aggregates, written to the new results file
        (unless that file is the resumed one, which holds them already)."""
        self.resumed_replayed = True
        write = not (self._writer is not None and self._writer.keep)
        for nodeid in nodeids:
            self.add(self.resumed[nodeid], write=write)

    @staticmethod
    def stale_reason(record: dict[str, Any], job: Job) -> str | None:
        """Why a resumed record cannot stand for this run's item: its answer was scored against
        another suite version (other golds) or under other scoring rules. Such items run again."""
        from pytest_citebench.api import LEGACY_SCORER_VERSION

        version = record.get("suite_version")
        if version != job.suite_version:
            return f"suite {job.item.suite} v{version} -> v{job.suite_version}"
        scorer = str(record.get("scorer_version") or LEGACY_SCORER_VERSION)
        if scorer != job.task.scorer_version:
            return f"scorer {scorer} -> {job.task.scorer_version}"
        return None

    def should_stop(self) -> str | None:
        """Why to stop the run: the results file cannot be written (more calls would be paid
        for and lost), a cassette cannot be saved, or errors passed ``--citebench-max-errors``
        (the provider is down, and more calls would only add errors)."""
        if self.stop_reason is not None:
            return self.stop_reason
        limit = self.options.max_errors
        if limit is not None and self.error_count > limit:
            return (
                f"citebench: {self.error_count} items ended in an error, more than "
                f"--citebench-max-errors {limit}; the provider looks down"
            )
        return None

    def add(self, record: dict[str, Any], line: str | None = None, *, write: bool = True) -> None:
        """Written to the results file as it arrives, so an interrupted run can be resumed.
        ``line``: the record as ``jsonl.dumps`` wrote it (a case's report carries it), written
        as it is; ``write=False``: the file holds it already (a resumed record, same file)."""
        from pytest_citebench.errors import STOPPING_REASONS

        self.records.append(record)
        if record.get("outcome") == "error":
            self.error_count += 1
            if record.get("reason") in STOPPING_REASONS and self.stop_reason is None:
                self.stop_reason = f"citebench: {str(record.get('error')).splitlines()[0]}"
        if self._writer is None or not write:
            return
        from pytest_citebench.results.files import ResultsWriteError

        try:
            if line is None:
                self._writer.write(record)
            else:
                self._writer.write_line(line)
        except ResultsWriteError as exc:
            self._writer = None
            self.stop_reason = f"citebench: {exc}"

    def finish(self, aggregates: Sequence[Any]) -> None:
        """The run is over: the aggregates (and a shard's record) close the results file."""
        if self._writer is None:
            return
        from pytest_citebench.results.files import ResultsWriteError

        tail = [agg.to_record() for agg in aggregates]
        if self.options.shard is not None and self.shard_expected is not None:
            tail.append(self.shard_record())
        writer, self._writer = self._writer, None
        try:
            writer.finish(self.records, tail)
        except ResultsWriteError as exc:
            self.output_errors.append(str(exc))

    def shard_record(self) -> dict[str, Any]:
        """What ``merge`` needs to tell a complete set of shards from a partial one: the spec and
        how many item records this shard owed. Written last, so a shard killed before the end
        has no such record and its file is flagged at merge."""
        assert self.options.shard is not None
        return {
            "type": "shard",
            "shard": self.options.shard.spec,
            "index": self.options.shard.index,
            "total": self.options.shard.total,
            "expected": self.shard_expected,
        }
