"""The vcrpy recorder: patches opened once per session, one cassette per item.

vcrpy patches HTTP libraries globally, and a cassette normally applies to whatever runs while it
is open. We issue many items' calls concurrently, so we open vcrpy's patches once with a *router*
cassette that forwards each request to the cassette of the item whose asyncio task made it (see
``recording.current``). One cassette per item keeps replay fast (vcrpy scans a cassette linearly)
and means two xdist workers never write the same file.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pytest_citebench.errors import NOT_RUN_REASON, CassetteNotSaved, CitebenchError
from pytest_citebench.recording.cassettes import (
    CassettePersister,
    CassetteSerializer,
    _interaction_problem,
)
from pytest_citebench.recording.current import _CURRENT, ItemCassette
from pytest_citebench.recording.scrub import (
    FILTER_HEADERS,
    FILTER_QUERY,
    _before_record_request,
    _before_record_response,
    snapshot_secrets,
)

RECORD_MODES = ("none", "once", "new_episodes", "all")
MATCH_ON = ("method", "uri", "body")


def _router_class() -> type:
    from vcr.cassette import Cassette

    class RouterCassette(Cassette):
        """Forwards vcrpy's questions to the current item's cassette; with none, refuses."""

        def _item(self) -> Any:
            current = _CURRENT.get()
            return current.cassette if current else None

        def can_play_response_for(self, request: Any) -> bool:
            item = self._item()
            return bool(item is not None and item.can_play_response_for(request))

        def play_response(self, request: Any) -> Any:
            current = _CURRENT.get()
            if current is not None:
                current.played += 1
            return self._item().play_response(request)

        def append(self, request: Any, response: Any) -> None:
            self._item().append(request, response)

        @property
        def write_protected(self) -> bool:
            item = self._item()
            return True if item is None else bool(item.write_protected)

        def filter_request(self, request: Any) -> Any:
            # Called on the refuse path (write-protected) and before recording; only the first
            # is a miss, which we note so the item's error can say exactly what to do.
            current = _CURRENT.get()
            item = self._item()
            filtered = item.filter_request(request) if item is not None else request
            if current is not None and filtered and item.write_protected:
                current.misses.append(request)
            return filtered

        def find_requests_with_most_matches(self, request: Any) -> list[Any]:
            item = self._item()
            return item.find_requests_with_most_matches(request) if item is not None else []

    return RouterCassette


@functools.cache
def _item_cassette_class() -> Any:
    from vcr.cassette import Cassette

    class ItemCassetteFile(Cassette):
        """vcrpy's cassette, minus the work replay repeats for nothing.

        vcrpy runs the request and response filters on every interaction it loads, and the
        request filter (a deep copy, then our scrub) three times per call it plays: the same
        request, filtered again by ``can_play_response_for``, ``__contains__`` and
        ``play_response``. Loaded interactions were filtered when they were recorded, and a
        request filtered once is the same request the second time, so both are skipped: together
        they were about a tenth of a replayed item's CPU.
        """

        _loading = False

        @classmethod
        def load(cls, **kwargs: Any) -> Any:
            cassette = cls(**kwargs)
            cassette._loading = True
            try:
                cassette._load()
            finally:
                cassette._loading = False
            return cassette

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            raw_filter: Any = self._before_record_request  # type: ignore[has-type]
            last: list[Any] = [None, None]  # the last request seen, and what the filter made of it

            def filter_once(request: Any) -> Any:
                # vcrpy filters the request, then filters what that returned again: filtering
                # is idempotent, so both are answered from the one result.
                if request is not last[0] and request is not last[1]:
                    last[0], last[1] = request, raw_filter(request)
                return last[1]

            self._before_record_request = filter_once

        def append(self, request: Any, response: Any) -> None:
            if self._loading:  # as recorded: it went through the filters when it was saved
                self.data.append((request, response))
                return
            super().append(request, response)

    return ItemCassetteFile


class Recorder:
    """Owns vcrpy for a session: patches on ``activate``, one cassette per item in ``use``."""

    def __init__(self, root: Path, mode: str = "none") -> None:
        if mode not in RECORD_MODES:
            raise ValueError(f"record mode {mode!r}: choose one of {', '.join(RECORD_MODES)}")
        self.root = root
        self.mode = mode
        self._exit: contextlib.ExitStack | None = None
        self._config: dict[str, Any] | None = None
        # Set when a cassette could not be written to ``root``: no further call is paid for.
        self.unwritable: str | None = None

    def _cassette_config(self) -> dict[str, Any]:
        if self._config is None:
            import vcr

            config = vcr.VCR(
                record_mode=self.mode,
                match_on=MATCH_ON,
                filter_headers=list(FILTER_HEADERS),
                filter_query_parameters=list(FILTER_QUERY),
                before_record_request=_before_record_request,
                before_record_response=_before_record_response,
                decode_compressed_response=True,
            ).get_merged_config()
            for key in ("path_transformer", "func_path_generator", "record_on_exception"):
                config.pop(key, None)
            config["serializer"] = CassetteSerializer
            config["persister"] = CassettePersister
            self._config = config
        return self._config

    def activate(self) -> None:
        """Patch HTTP once for the process (idempotent); called on the main thread, where the
        secrets to scrub are snapshotted."""
        if self._exit is not None:
            return
        from vcr.patch import CassettePatcherBuilder

        snapshot_secrets()

        router = _router_class()(path="<citebench-router>", record_mode="none")
        stack = contextlib.ExitStack()
        for patcher in CassettePatcherBuilder(router).build():
            stack.enter_context(patcher)
        self._exit = stack

    def deactivate(self) -> None:
        """Remove vcrpy's patches; idempotent, as every shutdown path may call it."""
        if self._exit is not None:
            self._exit.close()
            self._exit = None

    def load_cassette(self, path: Path, record_command: str) -> Any:
        """vcrpy's cassette at ``path`` (empty when there is none yet).

        Cassettes are untrusted input: anyone can commit one. vcrpy parses them with a safe YAML
        loader, so no tag runs code; anything that does not load as recorded HTTP is a
        CitebenchError that names the file and says what to do, never a traceback mid-replay.
        """

        def broken(reason: str) -> CitebenchError:
            reason = " ".join(reason.split())
            return CitebenchError(
                f"cassette {path} could not be loaded: {reason[:300]}\n"
                f"  delete it and record it again (needs the provider's key and network):\n"
                f"    {record_command} --citebench-record once"
            )

        try:
            cassette = _item_cassette_class().load(path=str(path), **self._cassette_config())
        except UnicodeDecodeError as exc:
            raise broken(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
        except OSError as exc:
            raise broken(str(exc)) from None
        except Exception as exc:  # malformed YAML, a refused tag, a wrong shape: all the same
            what = str(exc) if type(exc) is ValueError else f"{type(exc).__name__}: {exc}"
            raise broken(what) from None
        for number, (request, response) in enumerate(cassette.data, start=1):
            problem = _interaction_problem(request, response)
            if problem:
                raise broken(f"interaction {number}: {problem}")
        return cassette

    @contextlib.contextmanager
    def use(self, path: Path, record_command: str) -> Iterator[ItemCassette]:
        """Route this task's requests to ``path``; save it if the item finished and recorded."""
        cassette = self.load_cassette(path, record_command)
        if self.unwritable is not None and (self.mode != "once" or not cassette.data):
            # It would record: a call paid for and its cassette lost like the last one.
            raise CassetteNotSaved(
                f"{self.unwritable}; this item was not run, so nothing was paid for",
                reason=NOT_RUN_REASON,
            )
        state = ItemCassette(path, cassette, record_command)
        token = _CURRENT.set(state)
        try:
            yield state
        finally:
            _CURRENT.reset(token)
        # Saved only when the item finished: a half-recorded conversation would replay as a miss.
        if cassette.dirty:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                cassette._save()
            except OSError as exc:
                self.unwritable = (
                    f"cannot save cassettes in {self.root}: {exc.strerror or exc}; the run stops "
                    "before paying for more answers. Free space or make the folder writable (or "
                    "pass --citebench-cassettes DIR), then record the errored items again "
                    "(--citebench-resume RESULTS runs only those)"
                )
                raise CassetteNotSaved(
                    f"{self.unwritable}; this item's answer is kept in its record, unsaved "
                    f"({path.name} was not written)"
                ) from None
