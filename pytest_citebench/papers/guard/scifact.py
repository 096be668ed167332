"""Build the committed citation-guard suites (``suites/guard``) from SciFact and the QASA scores.

    python -m pytest_citebench build-guard-suites ../shared/data/scifact/scifact_test.jsonl \\
        ../shared/data/guard/qasa_calibration_scores.json --out suites/guard

Why a builder: which distractors, which order and the guard's tau must be reproducible from the
public data with a fixed seed. Pure Python (the lexical verifier and BM25 need no numpy).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_citebench.papers.guard._text import bm25_rank, content_terms
from pytest_citebench.papers.guard.builder import GUARD_ALPHA, BuiltSuite, write_suite
from pytest_citebench.papers.guard.offline import passage_sentences
from pytest_citebench.papers.guard.stats import conformal_k, conformal_threshold
from pytest_citebench.papers.guard.verdicts import parse_label
from pytest_citebench.papers.guard.verifiers import get_verifier

__all__ = ["build_scifact_suites", "load_scifact", "scifact_main"]

SCIFACT_SOURCE = {
    "paper": (
        "Wadden et al., Fact or Fiction: Verifying Scientific Claims (SciFact, EMNLP 2020); "
        "used as verifier-validation gold by Goo et al., Evaluating and Guarding Citation "
        "Faithfulness in Agentic Scientific Synthesis (citation-guard, arXiv 2607.20527)"
    ),
    "url": (
        "https://github.com/AkariAsai/ScholarQABench (data/single_paper_tasks/, SciFact test "
        "split); SciFact: https://github.com/allenai/scifact"
    ),
    "licence": (
        "SciFact claims CC BY 4.0 (allenai/scifact); ScholarQABench data ODC-By 1.0, code MIT. "
        "Credit SciFact and ScholarQABench when you ship a suite built from it."
    ),
}
QASA_SOURCE = {
    "paper": (
        "Goo et al., Evaluating and Guarding Citation Faithfulness in Agentic Scientific "
        "Synthesis (citation-guard, arXiv 2607.20527); QASA: Lee et al., ICML 2023"
    ),
    "url": (
        "https://github.com/GooTec/citation-guard (reproduce/data/qasa_calibration_scores.json, "
        "commit d155da8d8dfc1e97f0c226787b3451e5d68fe527)"
    ),
    "licence": "MIT (citation-guard); derived scores only, no QASA text",
}
QASA_SCORED_BY = "AttrScore-3B P(attributable) (citation-guard paper's deployed verifier)"
REATTRIBUTION_DISTRACTORS = 9
ANSWER_ITEMS = 20
ANSWER_PASSAGES = 3


# --------------------------------------------------------------------------- SciFact / QASA


def load_scifact(path: Path) -> list[dict[str, Any]]:
    """SciFact rows as ``{"claim", "title", "passage", "supported"}``, in file order."""
    from pytest_citebench import jsonl

    rows = []
    for _, obj in jsonl.iter_objects(path):
        gold = obj["gold_ctx"][0]
        rows.append(
            {
                "claim": obj["input"].strip(),
                "title": gold["title"].strip(),
                "passage": gold["text"].strip(),
                "supported": parse_label(obj["answer"]),
            }
        )
    return rows


def _abstracts(rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Unique gold abstracts by title, first occurrence wins (several claims share one)."""
    out: dict[str, str] = {}
    for row in rows:
        out.setdefault(row["title"], row["passage"])
    return out


def _verify_items(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"scifact-{i:03d}",
            "claim": row["claim"],
            "passage": row["passage"],
            "label": "supported" if row["supported"] else "unsupported",
            "title": row["title"],
        }
        for i, row in enumerate(rows)
    ]


def _qasa_items(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for prefix, label, key in (
        ("u", "unsupported", "unsupported_p_attr_scores"),
        ("s", "supported", "supported_p_attr_scores"),
    ):
        for i, score in enumerate(data[key], start=1):
            items.append(
                {
                    "id": f"qasa-{prefix}{i:03d}",
                    "label": label,
                    "score": float(score),
                    "scored_by": QASA_SCORED_BY,
                }
            )
    return items


def _reattribution_items(rows: Sequence[Mapping[str, Any]], seed: int) -> list[dict[str, Any]]:
    """Supported claims only: gold abstract + random other abstracts, in a seeded order."""
    rng = random.Random(seed)
    pool = _abstracts(rows)
    titles = sorted(pool)
    items = []
    for i, row in enumerate(rows):
        if not row["supported"]:
            continue
        others = [t for t in titles if t != row["title"]]
        candidates = [row["title"], *rng.sample(others, REATTRIBUTION_DISTRACTORS)]
        rng.shuffle(candidates)
        items.append(
            {
                "id": f"scifact-{i:03d}",
                "claim": row["claim"],
                "passages": [pool[t] for t in candidates],
                "gold": candidates.index(row["title"]) + 1,
                "titles": candidates,
            }
        )
    return items


class _CachedBM25:
    """``guard._text.bm25_rank`` with each text's terms computed once.

    The builder ranks the same 182 abstracts for every claim; re-tokenising them each time made
    the build (and its reproduction test) ten times slower. Same formula, same iteration order,
    same tie-break, so the ranking is identical (a test checks it against ``bm25_rank``).
    """

    def __init__(self, *, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._cache: dict[str, tuple[list[str], Counter[str], frozenset[str]]] = {}

    def _doc(self, text: str) -> tuple[list[str], Counter[str], frozenset[str]]:
        if text not in self._cache:
            terms = content_terms(text)
            self._cache[text] = (terms, Counter(terms), frozenset(terms))
        return self._cache[text]

    def rank(self, query: str, passages: Mapping[int, str]) -> list[tuple[int, float]]:
        docs = {pid: self._doc(text) for pid, text in passages.items()}
        if not docs:
            return []
        q = content_terms(query)
        n_docs = len(docs)
        avgdl = sum(len(d[0]) for d in docs.values()) / n_docs or 1.0
        df: Counter[str] = Counter()
        for d in docs.values():
            df.update(d[2])
        scored: list[tuple[int, float]] = []
        for pid, (terms, tf, _) in docs.items():
            norm = self.k1 * (1.0 - self.b + self.b * len(terms) / avgdl)
            s = 0.0
            for t in q:
                f = tf.get(t, 0)
                if f:
                    idf = math.log(1.0 + (n_docs - df[t] + 0.5) / (df[t] + 0.5))
                    s += idf * f * (self.k1 + 1.0) / (f + norm)
            scored.append((pid, s))
        scored.sort(key=lambda x: (-x[1], x[0]))
        return scored


_BM25 = _CachedBM25()


def _context(row: Mapping[str, Any], pool: Mapping[str, str], rng: random.Random) -> list[str]:
    """A retrieval-like context: the gold abstract and its BM25 nearest neighbours (by the
    claim), shuffled so the gold is not always [1]."""
    others = {i: pool[t] for i, t in enumerate(sorted(pool)) if t != row["title"]}
    near = [pid for pid, _ in _BM25.rank(row["claim"], others)[: ANSWER_PASSAGES - 1]]
    titles = sorted(pool)
    context = [row["title"], *(titles[pid] for pid in near)]
    rng.shuffle(context)
    return context


def _question(claim: str) -> str:
    return f"What do these studies report about the following claim? {claim}"


def _miscited_scores(
    rows: Sequence[Mapping[str, Any]], pool: Mapping[str, str], rng: random.Random
) -> list[float]:
    """Calibration negatives for the guard's tau: what the offline answerer writes when it lifts
    a sentence from one passage and cites another.

    For each held-out context, the answerer cites the passage that best matches the question;
    the two best-matching sentences of every *other* passage are scored by the lexical verifier
    against the cited passage. Such pairs resemble the answerer's own mis-citations, which is
    the condition the conformal guarantee needs.
    """
    verifier = get_verifier("lexical")
    pairs: list[tuple[str, str]] = []
    for row in rows:
        titles = _context(row, pool, rng)
        passages = {i: pool[t] for i, t in enumerate(titles, start=1)}
        question = _question(row["claim"])
        cited = bm25_rank(question, passages)[0][0]
        for pid, text in passages.items():
            if pid == cited:
                continue
            sentences = passage_sentences(text)
            ranked = bm25_rank(question, dict(enumerate(sentences)))
            pairs += [(sentences[i], passages[cited]) for i, s in ranked[:2] if s > 0]
    return verifier.score_many(pairs)


def _answer_items(rows: Sequence[Mapping[str, Any]], seed: int) -> tuple[list[dict[str, Any]], str]:
    rng = random.Random(seed)
    pool = _abstracts(rows)
    by_title: dict[str, int] = {}
    for i, row in enumerate(rows):
        by_title.setdefault(row["title"], i)
    chosen = sorted(rng.sample(sorted(by_title.values()), ANSWER_ITEMS))
    held_out = [row for i, row in enumerate(rows) if i not in set(chosen)]
    negatives = _miscited_scores(held_out, pool, random.Random(seed + 1))
    tau = conformal_threshold(negatives, GUARD_ALPHA)
    k = conformal_k(len(negatives), GUARD_ALPHA)
    calibration = (
        f"split-conformal tau at alpha={GUARD_ALPHA:g}: k={k} of {len(negatives)} lexical "
        f"scores of mis-cited sentences from {len(held_out)} held-out SciFact contexts "
        "(a passage's top sentences cited to the passage that best matches the question)"
    )
    items = []
    for i in chosen:
        row = rows[i]
        titles = _context(row, pool, rng)
        items.append(
            {
                "id": f"scifact-{i:03d}",
                "question": _question(row["claim"]),
                "passages": [pool[t] for t in titles],
                "verifier": "lexical",
                "tau": tau,
                "alpha": GUARD_ALPHA,
                "calibration": calibration,
                "claim": row["claim"],
                "label": "supported" if row["supported"] else "unsupported",
                "gold": titles.index(row["title"]) + 1,
                "titles": titles,
            }
        )
    return items, calibration


def build_scifact_suites(
    scifact: Path, qasa: Path, out: Path, *, seed: int = 0
) -> list[BuiltSuite]:
    """The four committed suites under ``out`` (normally ``suites/guard``)."""
    rows = load_scifact(scifact)
    qasa_data = json.loads(qasa.read_text(encoding="utf-8"))
    n_pos = sum(r["supported"] for r in rows)
    built: list[BuiltSuite] = []

    d = out / "scifact-verify"
    n = write_suite(
        d,
        name="guard/scifact-verify",
        description=(
            f"Verifier validation on SciFact gold: {len(rows)} claims with their one gold "
            f"abstract ({n_pos} supported, {len(rows) - n_pos} contradicted); the "
            "citation-guard paper's n = 208 set. Run verifier models side by side."
        ),
        tasks=["verify"],
        source=SCIFACT_SOURCE,
        items=_verify_items(rows),
        comment=(
            "Built by: python -m pytest_citebench build-guard-suites <scifact_test.jsonl> "
            "<qasa_calibration_scores.json> --out suites/guard\n"
            "Negatives are contradicted claims (hard: same topic, same words)."
        ),
    )
    built.append(BuiltSuite("guard/scifact-verify", d, n))

    d = out / "qasa-calibration"
    n = write_suite(
        d,
        name="guard/qasa-calibration",
        description=(
            "Split-conformal calibration demo: the citation-guard paper's AttrScore-3B scores "
            f"for {len(qasa_data['unsupported_p_attr_scores'])} unsupported (easy in-paper "
            f"distractors) and {len(qasa_data['supported_p_attr_scores'])} supported QASA "
            "claim-passage pairs. Scores are precomputed: the model under test is not asked."
        ),
        tasks=["calibrate"],
        source=QASA_SOURCE,
        items=_qasa_items(qasa_data),
        comment=(
            "Built by: python -m pytest_citebench build-guard-suites (see scifact-verify).\n"
            "The calibration negatives are easy distractors: the guarantee transfers only to\n"
            "deployment negatives that resemble them (see docs/guard.md)."
        ),
    )
    built.append(BuiltSuite("guard/qasa-calibration", d, n))

    d = out / "scifact-reattribution"
    items = _reattribution_items(rows, seed)
    n = write_suite(
        d,
        name="guard/scifact-reattribution",
        description=(
            f"Re-attribution: {len(items)} supported SciFact claims, each with its gold abstract "
            f"among {REATTRIBUTION_DISTRACTORS + 1} candidates (the others: random abstracts of "
            f"other claims, seed {seed}). recall@1 / @5 with Wilson CIs."
        ),
        tasks=["reattribute"],
        source=SCIFACT_SOURCE,
        items=items,
        comment="Built by: python -m pytest_citebench build-guard-suites (see scifact-verify).",
    )
    built.append(BuiltSuite("guard/scifact-reattribution", d, n))

    d = out / "scifact-answers"
    items, calibration = _answer_items(rows, seed)
    n = write_suite(
        d,
        name="guard/scifact-answers",
        description=(
            f"The guard on generated answers: {len(items)} SciFact claims as questions, each "
            f"with {ANSWER_PASSAGES} passages (the gold abstract and its BM25 nearest "
            "neighbours). The model answers with [n] citations; the lexical verifier flags "
            f"citations at tau = {items[0]['tau']:.4g}."
        ),
        tasks=["guard"],
        source=SCIFACT_SOURCE,
        items=items,
        comment=(
            "Built by: python -m pytest_citebench build-guard-suites (see scifact-verify).\n"
            f"tau: {calibration}."
        ),
    )
    built.append(BuiltSuite("guard/scifact-answers", d, n, f"tau = {items[0]['tau']:.6g}"))
    return built


def scifact_main(argv: Sequence[str] | None = None) -> int:
    """``python -m pytest_citebench build-guard-suites SCIFACT QASA --out suites/guard``."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_citebench build-guard-suites",
        description="Rebuild the committed citation-guard suites (deterministic, seed 0).",
    )
    parser.add_argument("scifact", type=Path, help="scifact_test.jsonl (ScholarQABench)")
    parser.add_argument("qasa", type=Path, help="qasa_calibration_scores.json (citation-guard)")
    parser.add_argument("--out", type=Path, default=Path("suites/guard"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        built = build_scifact_suites(args.scifact, args.qasa, args.out, seed=args.seed)
    except (OSError, ValueError, KeyError) as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return 1
    for suite in built:
        print(suite.line())
    return 0
