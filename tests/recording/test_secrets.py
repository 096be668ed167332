"""API keys never reach what the plugin writes, and cassettes are untrusted input.

Hypothesis generates keys in the shapes of the common providers. Keys with a recognisable prefix
must be scrubbed by shape alone; generic ones (Azure's 32 hex, Cohere's and Mistral's bare
alphanumerics) only by value, so those are set in an environment variable named like
``*_API_KEY``, the way a user holds them. Each key goes into a header, a query parameter, the
request body and, echoed by the stub, the response and the error messages; then every file
written and the terminal output are scanned for it.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import string
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from pytest_citebench.errors import CitebenchError
from pytest_citebench.models.litellm_backend import litellm
from pytest_citebench.papers.reasons.tasks import text_metrics
from pytest_citebench.recording import Recorder, cassette_path
from pytest_citebench.testing.stubserver import StubServer

ALNUM = string.ascii_letters + string.digits
TLS = ssl.create_default_context()  # once: loading the CA bundle per client costs ~80 ms
SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
URLSAFE = ALNUM + "-_"


def warm_imports() -> None:
    """Keep litellm's lazy modules and nltk loaded across pytester's in-process runs (see
    tests/run/test_faults.py)."""
    litellm().completion(
        model="openai/warmup", messages=[{"role": "user", "content": "x"}], mock_response="ok"
    )
    text_metrics("warm up the metrics", "warm up")


warm_imports()


def _key(prefix: str, alphabet: str, size: int, suffix: str = "") -> st.SearchStrategy[str]:
    body = st.text(alphabet=alphabet, min_size=size, max_size=size)
    return body.map(lambda b: prefix + b + suffix)


# Shapes as the providers issue them (lengths as seen in the wild).
SHAPES: dict[str, st.SearchStrategy[str]] = {
    "openai": _key("sk-", ALNUM, 48),
    "openai_project": _key("sk-proj-", URLSAFE, 120),
    "anthropic": _key("sk-ant-api03-", URLSAFE, 93, "AA"),
    "google": _key("AIza", URLSAFE, 35),
    "groq": _key("gsk_", ALNUM, 52),
    "xai": _key("xai-", ALNUM, 80),
    "huggingface": _key("hf_", ALNUM, 34),
    "replicate": _key("r8_", ALNUM, 37),
    "perplexity": _key("pplx-", ALNUM, 48),
    "aws": _key("AKIA", string.ascii_uppercase + string.digits, 16),
    "azure": _key("", "0123456789abcdef", 32),
    "cohere": _key("", ALNUM, 40),
    "mistral": _key("", ALNUM, 32),
}
GENERIC = ("azure", "cohere", "mistral")  # no prefix: scrubbed only as an env var's value
KEYS = st.fixed_dictionaries(SHAPES).filter(lambda keys: len(set(keys.values())) == len(keys))
EXAMPLES_LIBRARY = 60
EXAMPLES_PLUGIN = 4
FUZZED = {"test_every_key_shape_scrubbed_from_cassettes": EXAMPLES_LIBRARY * len(SHAPES)}


def env_name(shape: str) -> str:
    return f"CITEBENCH_FUZZ_{shape.upper()}_API_KEY"


def forms(key: str) -> set[str]:
    """A key as it could appear in text: as is, and percent-encoded (in a URI)."""
    return {key, urllib.parse.quote(key, safe=""), urllib.parse.quote_plus(key)}


def strings(value: Any) -> Iterator[str]:
    """Every string inside a decoded YAML/JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, bytes):
        yield value.decode("utf-8", "replace")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings(v)


def leaks(keys: dict[str, str], root: Path, *texts: str) -> list[str]:
    """``shape: where`` for every key found in a file under ``root`` or in ``texts``.

    Files are read raw and, for YAML and JSON, decoded too: YAML folds long strings across
    lines, so a raw scan alone could miss a key that is there.
    """
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        raw = path.read_bytes().decode("utf-8", "replace")
        decoded = [raw]
        if path.suffix in (".yaml", ".yml"):
            decoded += list(strings(yaml.load(raw, Loader=SafeLoader)))
        elif path.suffix in (".jsonl", ".json"):
            for line in raw.splitlines():
                if line.strip():
                    decoded += list(strings(json.loads(line)))
        for shape, key in keys.items():
            if any(form in text for text in decoded for form in forms(key)):
                found.append(f"{shape}: {path.relative_to(root)}")
    for number, text in enumerate(texts):
        for shape, key in keys.items():
            if any(form in text for form in forms(key)):
                found.append(f"{shape}: output {number}")
    return found


def echo(request: dict[str, Any]) -> str:
    """The stub repeats the request's fields back, as a confused model (or an error) might."""
    return "echo " + " ".join(str(v) for k, v in sorted(request.items()) if k.startswith("f"))


def record_one(root: Path, url: str, env: dict[str, str], **request: Any) -> httpx.Response:
    """One POST to ``url``'s chat endpoint, recorded (mode ``all``) into ``root/c.yaml`` with the
    environment variables ``env`` set while it runs."""
    recorder = Recorder(root, "all")
    with pytest.MonkeyPatch.context() as mp:
        for name, value in env.items():
            mp.setenv(name, value)
        recorder.activate()
        try:

            async def call() -> httpx.Response:
                with recorder.use(root / "c.yaml", "pytest"):
                    async with httpx.AsyncClient(verify=TLS) as client:
                        return await client.post(f"{url}/chat/completions", **request)

            return asyncio.run(call())
        finally:
            recorder.deactivate()


@given(keys=KEYS, offset=st.integers(min_value=0, max_value=3))
@settings(
    max_examples=EXAMPLES_LIBRARY,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_every_key_shape_scrubbed_from_cassettes(
    tmp_path_factory: pytest.TempPathFactory, keys: dict[str, str], offset: int
) -> None:
    """Recording layer, one HTTP call per example: each key lands in a header, the query, the
    body and the echoed response, rotating by ``offset``; the cassette holds none of them."""
    root = tmp_path_factory.mktemp("cassettes")
    headers = {"Authorization": f"Bearer {keys['openai']}", "api-key": keys["anthropic"]}
    query = {"key": keys["google"]}
    body: dict[str, Any] = {"model": "stub", "messages": [{"role": "user", "content": "hi"}]}
    for index, (_shape, key) in enumerate(sorted(keys.items())):
        where = (index + offset) % 4
        if where == 0:
            headers[f"x-citebench-{index}"] = key
        elif where == 1:
            query[f"q{index}"] = key
        else:  # the body, and from there echoed in the response (twice as likely: most common)
            body[f"f{index}"] = key
    env = {env_name(shape): keys[shape] for shape in GENERIC}
    with StubServer(echo) as server:
        response = record_one(root, server.url, env, params=query, headers=headers, json=body)
    assert response.status_code == 200
    assert (root / "c.yaml").is_file()
    assert leaks(keys, root) == []


def write_plugin_suite(root: Path) -> None:
    folder = root / "suites" / "keys"
    folder.mkdir(parents=True)
    (folder / "suite.toml").write_text(
        'name = "keys"\nversion = 1\ndescription = "generated by tests/recording/test_secrets.py"\n'
        'tasks = ["indirect"]\n\n[source]\npaper = "test"\nurl = "https://example.invalid"\n'
        'licence = "CC0-1.0"\n'
    )
    items = [
        {"id": i, "citing_title": "Keys", "sentence": f"row {i}", "cited_title": "Some Paper"}
        | {"cited_authors": "A. Author"}
        for i in ("answers", "echoes", "fails")
    ]
    (folder / "items.jsonl").write_text("\n".join(json.dumps(i) for i in items) + "\n")


def plugin_answer(request: dict[str, Any]) -> str:
    """'answers' answers, 'echoes' repeats the body's fields, 'fails' errors quoting them."""
    row = str(request["messages"][-1]["content"]).removeprefix("row ")
    fields = str(request.get("note"))
    if row == "fails":
        raise ValueError(f"invalid request fields: {fields}")  # the stub answers 500 with it
    return "Some Paper" if row == "answers" else f"Some Paper, requested by {fields}"


@given(keys=KEYS)
@settings(
    max_examples=EXAMPLES_PLUGIN,
    derandomize=True,
    database=None,
    deadline=None,
    phases=[Phase.generate],  # a whole pytest run per example: report, don't shrink
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_no_key_in_cassettes_results_junit_or_terminal(
    pytester: pytest.Pytester, keys: dict[str, str]
) -> None:
    """The whole plugin, in-process: keys in the Authorization header (OPENAI_API_KEY), other
    headers and the body (--citebench-param), echoed back in answers and in error messages."""
    for path in ("suites", "cassettes", "results.jsonl", "junit.xml"):
        target = pytester.path / path
        if target.is_dir():
            import shutil

            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    write_plugin_suite(pytester.path)
    prefixed = [s for s in SHAPES if s not in GENERIC and s != "openai"]
    headers = {"api-key": keys[prefixed[0]], "x-custom-auth": keys[prefixed[1]]}
    body = {"note": " ".join([keys[s] for s in prefixed[2:]] + [keys[s] for s in GENERIC])}
    with pytest.MonkeyPatch.context() as mp, StubServer(plugin_answer) as server:
        mp.setenv("OPENAI_API_KEY", keys["openai"])
        for shape in GENERIC:
            mp.setenv(env_name(shape), keys[shape])
        result = pytester.runpytest(
            "--citebench",
            "--citebench-model",
            "openai/stub",
            "--citebench-api-base",
            server.url,
            "--citebench-record",
            "all",
            "--citebench-retries",
            "0",
            "--citebench-param",
            f"extra_headers={json.dumps(headers)}",
            "--citebench-param",
            f"extra_body={json.dumps(body)}",
            "--citebench-results",
            "results.jsonl",
            "--junitxml",
            "junit.xml",
            "-rA",
            "-p",
            "no:cacheprovider",
        )
        sent = server.requests
    # The keys really went out: otherwise finding none of them proves nothing.
    assert sent and sent[0]["headers"]["authorization"] == f"Bearer {keys['openai']}"
    assert sent[0]["headers"]["api-key"] == headers["api-key"]
    assert sent[0]["json"]["note"] == body["note"]
    outcomes = {k: v for k, v in result.parseoutcomes().items() if k != "warnings"}
    # 'echoes' comes back with its keys scrubbed to <REDACTED>, which reads as a placeholder.
    assert outcomes == {"passed": 1, "unanswered": 1, "failed": 1}
    assert (pytester.path / "junit.xml").is_file()
    assert leaks(keys, pytester.path, result.stdout.str(), result.stderr.str()) == []


def test_malicious_cassette_never_runs_code_and_is_a_clear_error(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    pwned = pytester.path / "PWNED"
    path = cassette_path(
        pytester.path / "cassettes", "openai/stub", "tiny", 1, "indirect", "2001.00001-s1"
    )
    path.parent.mkdir(parents=True)
    path.write_text(f'!!python/object/apply:os.system ["touch {pwned}"]\n')
    result = pytester.runpytest(
        "--citebench",
        "--citebench-model",
        "openai/stub",
        "--citebench-api-base",
        "http://127.0.0.1:9/v1",
        "-k",
        "2001.00001-s1 and indirect",
        "-p",
        "no:cacheprovider",
    )
    assert not pwned.exists()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            f"*cassette *{path.relative_to(pytester.path)} could not be loaded: *"
            "python/object/apply:os.system*",
            "*delete it and record it again*",
            "*--citebench-record once*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize(
    "content",
    [
        b'!!python/object/apply:os.system ["touch PWNED"]\n',
        b"interactions:\n- request: !!python/object/new:os.system [touch PWNED]\n",
        b"!!python/name:os.system\n",
        b"\xff\xfe not utf-8",
        b"interactions: [",
        b"just a string",
        b"interactions:\n- request: {}\n  response: {}\n",
        b"interactions:\n- request: {method: GET, uri: http://x, body: null, headers: {}}\n"
        b"  response: {status: {code: nope}}\n",
        b'{"interactions": [{"request": {}, "response": {}}]}',
        b'{"interactions": [{"request": {"method": "GET", "uri": "http://x"}, '
        b'"response": {"status": {"code": 503}}}]}',
        b'{"interactions": "x" ' + b" " * (32 * 1024 * 1024) + b"}",
    ],
    ids=[
        "apply",
        "new",
        "name",
        "not-utf8",
        "bad-yaml",
        "scalar",
        "empty-request",
        "bad-status",
        "json-empty-request",
        "json-recorded-503",
        "json-too-big",
    ],
)
def test_untrusted_cassette_is_one_citebench_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "c.yaml"
    path.write_bytes(content)
    with pytest.raises(CitebenchError, match=r"could not be loaded: .*\n.*delete it"):
        Recorder(tmp_path, "none").load_cassette(path, "pytest x")
    assert not (tmp_path / "PWNED").exists()


def _scrub_unguarded(text: str, secrets: list[str]) -> str:
    """scrub_text as it was before its guards: every pattern run on every text."""
    from pytest_citebench.recording import scrub

    for secret in secrets:
        text = text.replace(secret, scrub.REDACTED)
    text = scrub._USERINFO.sub(rf"\1{scrub.REDACTED}@", text)
    text = scrub._KEY_QUERY.sub(rf"\1{scrub.REDACTED}", text)
    return scrub._KEY_SHAPES.sub(scrub.REDACTED, text)


# Short texts built from the pieces the patterns look for, so the guards' edges are reached.
PIECES = st.sampled_from(
    ["sk-", "AKIA", "Bearer ", "hf_", "@", "=", "?token", "&key", "://", "u:p", "a", "Z9", "-", " "]
)
SCRUBBABLE = st.one_of(
    st.lists(st.one_of(PIECES, st.text(ALNUM, max_size=17)), max_size=8).map("".join),
    SHAPES["openai"],
    SHAPES["aws"],
)


# A secret inside "<REDACTED>" itself ("REDACT") would make no scrub idempotent; none is.
SECRETS = st.text(ALNUM, min_size=6, max_size=8).filter(lambda s: s not in "<REDACTED>")


@given(text=SCRUBBABLE, secrets=st.lists(SECRETS, max_size=2))
@settings(max_examples=400, deadline=None)
def test_scrub_guards_change_no_result(text: str, secrets: list[str]) -> None:
    from pytest_citebench.recording import scrub_text

    once = scrub_text(text, secrets)
    assert once == _scrub_unguarded(text, secrets)
    # Idempotent: replay answers vcrpy's second filtering of a request from the first.
    assert scrub_text(once, secrets) == once
