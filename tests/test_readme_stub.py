"""Issue 36: the README documents the users' stub server with a command sequence (start it,
record against it, replay with it stopped). This runs that block as written, so the README
cannot drift from what works: only the port is swapped for a free one."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

MARKER = "<!-- stub-dry-run:"


def readme_block() -> str:
    """The bash block right after the marker comment in README.md."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    after = text[text.index(MARKER) :]
    found = re.search(r"```bash\n(.*?)```", after, re.S)
    assert found is not None, "no bash block after the stub-dry-run marker"
    return found.group(1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_readme_stub_server_sequence_records_and_replays(tmp_path: Path) -> None:
    block = readme_block()
    assert "python -m pytest_citebench.testing.stubserver" in block
    assert block.count("--citebench-record once") == 1 and "kill $STUB" in block
    # The commands run where a user runs them: a folder holding the repository's suites.
    (tmp_path / "suites").symlink_to(REPO / "suites")
    script = "set -e\n" + block.replace("8099", str(free_port()))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    env["PYTEST_ADDOPTS"] = "-p no:randomly -p no:cacheprovider"
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    assert len(re.findall(r"=+ 27 hallucinated in ", out)) == 2, out[-4000:]
    cassettes = list((tmp_path / "stub-cassettes").rglob("*.yaml"))
    assert len(cassettes) == 27
    # Recorded with no key at all (the environment's keys were removed above): on loopback
    # the placeholder is sent, and not even it reaches a cassette.
    assert "_API_KEY=" not in block
    assert not any("placeholder" in c.read_text(encoding="utf-8") for c in cassettes)


pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the README block is bash")
