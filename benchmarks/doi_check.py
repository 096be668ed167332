"""Time checking 1,000 DOIs (with claimed titles) replayed from vcrpy cassettes.

Target: <= 2 s for the replay, cassette loading included.

How: a loopback server answers 1,000 distinct DOIs; each DOI is assigned one of the real
recorded responses in fixtures/doi/ (bodies untouched) and the agency route answers for it in
Crossref's format (or with Crossref's real 404 body for the not-found templates).  The live
:class:`Resolver` checks every DOI once under ``vcr.use_cassette`` (10 cassettes of 100 DOIs, JSON
serializer, contact address filtered out), then :class:`CassetteResolver` replays them from an
index built over all cassettes, and the answers are compared with the recorded run.

vcrpy's own replay scans every interaction per request (NOTES §5: 52 ms per call at 500
interactions); ``--compare-vcrpy`` measures that on one cassette to show why the index exists.

Run: ``python benchmarks/doi_check.py [--n 1000] [--compare-vcrpy]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pytest_citebench.doi.offline import CASSETTE_FILTERS, CassetteResolver  # noqa: E402
from pytest_citebench.doi.records import RawResponse  # noqa: E402
from pytest_citebench.doi.resolve import Resolver  # noqa: E402
from pytest_citebench.testing.doi_replay import RecordedResponseServer  # noqa: E402

FIXTURES = REPO / "fixtures" / "doi"
SOURCES = {"agency", "crossref", "datacite"}
CHUNK = 100


def _templates() -> list[tuple[str, RawResponse, str | None]]:
    """(api, recorded response, registered title) for every Crossref/DataCite 200/404 file."""
    out = []
    for line in (FIXTURES / "index.jsonl").read_text("utf-8").splitlines():
        entry = json.loads(line)
        if entry["api"] in ("crossref", "datacite") and entry["status"] in (200, 404):
            rec = json.loads((FIXTURES / entry["file"]).read_text("utf-8"))
            raw = RawResponse.from_recording(rec["response"], rec["request"]["url"])
            out.append((entry["api"], raw, entry.get("title")))
    return out


def build_server(n: int) -> tuple[RecordedResponseServer, list[tuple[str, str | None]]]:
    templates = _templates()
    crossref_404 = next(raw for api, raw, _ in templates if api == "crossref" and raw.status == 404)
    plan: dict[str, tuple[str, RawResponse]] = {}
    items: list[tuple[str, str | None]] = []
    for i in range(n):
        api, raw, title = templates[i % len(templates)]
        doi = f"10.5555/citebench.bench.{i:05d}"
        plan[doi] = (api, raw)
        # Every other claimed title is the registered one, the rest a mixed-up title.
        claimed = title if i % 2 == 0 else "A mixed up title of two other papers"
        items.append((doi, claimed))

    def lookup(source: str, doi: str) -> list[RawResponse] | None:
        api, raw = plan[doi]
        if source == "agency":
            if raw.status == 404:
                return [crossref_404]
            body = json.dumps(
                {
                    "status": "ok",
                    "message-type": "work-agency",
                    "message": {"DOI": doi, "agency": {"id": api, "label": api}},
                }
            )
            return [RawResponse(200, {"content-type": "application/json"}, body)]
        return [raw] if source == api else None

    return RecordedResponseServer(lookup=lookup), items


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--compare-vcrpy", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="citebench-doi-bench-") as tmp:
        return run(args, Path(tmp))


def run(args: argparse.Namespace, tmp: Path) -> int:
    import vcr

    srv, items = build_server(args.n)
    my_vcr = vcr.VCR(serializer="json", **CASSETTE_FILTERS)
    with srv:
        urls = srv.resolver_kwargs()
        live = Resolver(**urls, sources=SOURCES, rate_limit=None, mailto="bench@example.org")
        t0 = time.perf_counter()
        recorded = []
        cassettes = []
        for start in range(0, len(items), CHUNK):
            path = tmp / f"doi-{start // CHUNK:03d}.json"
            cassettes.append(path)
            with my_vcr.use_cassette(str(path), record_mode="all"):
                recorded += [live.check(d, t).to_dict() for d, t in items[start : start + CHUNK]]
        record_s = time.perf_counter() - t0
    requests = sum(srv.hits.values())
    size_mb = sum(p.stat().st_size for p in cassettes) / 1e6

    t0 = time.perf_counter()
    replay = CassetteResolver(*cassettes, **urls, sources=SOURCES)
    load_s = time.perf_counter() - t0
    results = [replay.check(d, t).to_dict() for d, t in items]
    total_s = time.perf_counter() - t0
    assert results == recorded, "replay differs from the recorded run"
    exists = sum(r["exists"] is True for r in results)
    matches = sum(r["title_match"] is True for r in results)
    print(
        f"recorded {len(items)} DOIs ({requests} requests, {len(cassettes)} cassettes, "
        f"{size_mb:.1f} MB) in {record_s:.2f} s"
    )
    print(
        f"replayed {len(items)} DOI checks in {total_s:.3f} s "
        f"(cassette load {load_s:.3f} s, checks {total_s - load_s:.3f} s); "
        f"{exists} exist, {matches} title matches; target <= 2 s: "
        f"{'OK' if total_s <= 2.0 else 'MISSED'}"
    )

    if args.compare_vcrpy:
        first = items[:CHUNK]
        t0 = time.perf_counter()
        with my_vcr.use_cassette(str(cassettes[0]), record_mode="none"):
            plain = Resolver(**urls, sources=SOURCES, rate_limit=None)
            via_vcr = [plain.check(d, t).to_dict() for d, t in first]
        per = (time.perf_counter() - t0) / len(first)
        assert via_vcr == recorded[:CHUNK]
        print(
            f"vcrpy's own replay: {per * 1000:.1f} ms per DOI on a {CHUNK}-DOI cassette "
            f"(x{len(items)} = {per * len(items):.1f} s, and it grows with cassette size)"
        )
    return 0 if total_s <= 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
