"""Recording: every remote model call goes through vcrpy, one small cassette per item.

The package is split by concern, and this module re-exports the names callers use:

- ``paths``: where an item's cassette lives (``cassette_path``, ``safe_segment``);
- ``scrub``: secrets kept out of cassettes and out of everything printed (``scrub_text``);
- ``cassettes``: cassette files read as untrusted input, written with the client versions;
- ``current``: the cassette of the item running in this asyncio task, and its counters;
- ``notes``: an item's error note beside its cassette, never through a link;
- ``misses``: what a replay miss says, and the command that records every miss;
- ``recorder``: vcrpy's patches, opened once per session with a router cassette (``Recorder``).

Nothing secret reaches a cassette: auth headers and key-like query parameters are dropped, and
the values of key-like environment variables are replaced wherever they appear.

May import: errors.
"""

from __future__ import annotations

from pytest_citebench.recording.cassettes import (
    CLIENT_PACKAGES,
    MAX_CASSETTE_BYTES,
    MAX_CASSETTE_NODES,
    CassettePersister,
    CassetteSerializer,
    cassette_format,
    cassette_text,
    client_versions,
    recorded_versions,
)
from pytest_citebench.recording.current import (
    ItemCassette,
    answered_since,
    current_item,
    forget_since,
    miss_count,
    played_count,
    recorded_count,
)
from pytest_citebench.recording.misses import (
    API_BASE_UNKNOWN,
    LAST_FAILED,
    MISS_PREFIX,
    UNUSABLE_PREFIX,
    Rerun,
    api_base_of,
    miss_error,
    record_command,
    replay_command,
    request_differences,
    rerun_for,
    unusable_error,
)
from pytest_citebench.recording.paths import (
    HASH_DIGITS,
    SEGMENT_READABLE,
    cassette_path,
    error_note,
    safe_segment,
)
from pytest_citebench.recording.recorder import MATCH_ON, RECORD_MODES, Recorder
from pytest_citebench.recording.scrub import (
    ALLOWED_HEADERS,
    FILTER_HEADERS,
    FILTER_QUERY,
    REDACTED,
    add_secrets,
    credential_header,
    redact_params,
    scrub_decoded,
    scrub_text,
    scrub_uri,
    secret_param_values,
    secret_values,
    snapshot_secrets,
)

__all__ = [
    "ALLOWED_HEADERS",
    "API_BASE_UNKNOWN",
    "CLIENT_PACKAGES",
    "FILTER_HEADERS",
    "FILTER_QUERY",
    "HASH_DIGITS",
    "LAST_FAILED",
    "MATCH_ON",
    "MAX_CASSETTE_BYTES",
    "MAX_CASSETTE_NODES",
    "MISS_PREFIX",
    "RECORD_MODES",
    "REDACTED",
    "SEGMENT_READABLE",
    "UNUSABLE_PREFIX",
    "CassettePersister",
    "CassetteSerializer",
    "ItemCassette",
    "Recorder",
    "Rerun",
    "add_secrets",
    "answered_since",
    "api_base_of",
    "cassette_format",
    "cassette_path",
    "cassette_text",
    "client_versions",
    "credential_header",
    "current_item",
    "error_note",
    "forget_since",
    "miss_count",
    "miss_error",
    "played_count",
    "record_command",
    "recorded_count",
    "recorded_versions",
    "redact_params",
    "replay_command",
    "request_differences",
    "rerun_for",
    "safe_segment",
    "scrub_decoded",
    "scrub_text",
    "scrub_uri",
    "secret_param_values",
    "secret_values",
    "snapshot_secrets",
    "unusable_error",
]
