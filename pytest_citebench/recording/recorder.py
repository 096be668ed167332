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
    _scrub_body,
    clean_headers,
    clean_uri,
    secret_values,
    snapshot_secrets,
)

RECORD_MODES = ("none", "once", "new_episodes", "all")
MATCH_ON = ("method", "uri", "body")


def vcrpy_config(mode: str) -> dict[str, Any]:
    """vcrpy's own cassette settings for ours: its header and query filters and decoder, then
    our scrub. The recorder replaces the two filters with equivalents that copy less
    (``_request_filter``, ``_response_filter``); tests hold those to these."""
    import vcr

    config: dict[str, Any] = vcr.VCR(
        record_mode=mode,
        match_on=MATCH_ON,
        filter_headers=list(FILTER_HEADERS),
        filter_query_parameters=list(FILTER_QUERY),
        before_record_request=_before_record_request,
        before_record_response=_before_record_response,
        decode_compressed_response=True,
    ).get_merged_config()
    for key in ("path_transformer", "func_path_generator", "record_on_exception"):
        config.pop(key, None)  # the VCR object's own, not a cassette's
    return config


def _router_class() -> type:
    from vcr.cassette import Cassette

    class RouterCassette(Cassette):
        """Forwards vcrpy's questions to the current item's cassette; with none, refuses."""

        def _item(self) -> Any:
            current = _CURRENT.get()
            return current.cassette if current else None

        def can_play_response_for(self, request: Any) -> bool:
            item = self._item()
            if item is None or item.record_mode == "all":
                # vcrpy's answer in "all" is always no, after filtering the request and
                # matching it against the cassette for nothing.
                return False
            return bool(item.can_play_response_for(request))

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


def _request_filter() -> Any:
    """vcrpy's request filter for our settings (the header and query filters, then our scrub),
    in one pass over a shallow copy of the request instead of vcrpy's ``copy.deepcopy`` and its
    four passes.

    Why: the deep copy was about a seventh of what recording a live call cost here; with it
    gone, the passes (each building the headers or parsing the URI again) still took 288 us a
    call in the recording loop, 154 us in one pass with the memo. Every step
    assigns a new value (headers, URI, body) rather than changing one in place, so the original
    request is left as it was; the query filter is vcrpy's own, once per URI;
    tests/recording/test_recording_filter.py holds the result to vcrpy's own filter's."""
    import copy

    from vcr import filters
    from vcr.request import Request

    query = [(name, None) for name in FILTER_QUERY]
    dropped = frozenset(FILTER_HEADERS)

    def drop_query(uri: str) -> str:
        return str(filters.replace_query_parameters(Request("GET", uri, None, {}), query).uri)

    def before_record_request(request: Any) -> Any:
        secrets = secret_values()
        request = copy.copy(request)
        request.uri = clean_uri(request.uri, secrets, drop_query)
        request.body = _scrub_body(request.body, secrets, base64=False)
        request.headers = clean_headers(request.headers, secrets, dropped)
        return request

    return before_record_request


def _copy_response(response: dict[str, Any]) -> dict[str, Any]:
    """A copy of a recorded response that the response filter may change: it deletes headers
    and replaces header values and the body's text, never changing a value in place."""
    copied = dict(response)
    for part in ("status", "headers", "body"):
        if isinstance(copied.get(part), dict):
            copied[part] = dict(copied[part])
    return copied


def _response_filter() -> Any:
    """vcrpy's response filter for our settings (decode a compressed body, then our scrub),
    without the deep copy vcrpy's decoder makes of every response, compressed or not.

    Why: vcrpy's ``append`` deep-copies the response too (``_copy_response`` instead); the append
    was 123 us a call in the recording loop. A compressed response still goes through vcrpy's
    own decoder;
    tests/recording/test_recording_filter.py holds the result to vcrpy's own filter's."""
    from vcr import filters

    def before_record_response(response: Any) -> Any:
        headers = response.get("headers") or {}
        if any(name.lower() == "content-encoding" for name in headers):
            response = filters.decode_response(response)
        return _before_record_response(response)

    return before_record_response


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
            # vcrpy's append, copying only what the response filter changes (see
            # ``_response_filter``) instead of a deep copy.
            request = self._before_record_request(request)
            if not request:
                return
            response = self._before_record_response(_copy_response(response))
            if response is None:
                return
            self.data.append((request, response))
            self.dirty = True

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
            config = vcrpy_config(self.mode)
            config["before_record_request"] = _request_filter()
            config["before_record_response"] = _response_filter()
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
                cassette._save()  # the persister makes the folder (write_bytes_atomic)
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
