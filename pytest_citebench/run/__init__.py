"""One ``pytest --citebench`` run's machinery, from start-up to the end-of-run notes.

``plugin.py`` holds the hooks and calls in here; nothing here is imported until ``--citebench`` is
given. In the order a run meets them:

- ``session.py``: the run's state in ``config.stash``; only wires the rooms below.
- ``startup.py``: usage checks before any model call (workers, keys, prices, gates, paths).
- ``sources.py``: which suite folders the run collects: the paths given, or the project's own
  plus the installed suite packages (entry-point group ``pytest_citebench.suites``), the project's
  winning a name both use; installed suites' test ids; no suite at all is one clear error.
- ``models.py``: the run's models, built from ``--citebench-model`` names (profile, RAG, answers
  files), each with this process's share of the concurrency and the cost cap.
- ``collection.py``: what collection asks of the run: tasks wanted, suites, derived suites, jobs.
- ``items.py``: suite files -> pytest items (a suite File, a Collector per task and variant).
- ``selection.py``, ``sharding.py``: which collected items this run (or this shard) keeps.
- ``scheduler.py``: when each case runs: engine or inline, prefetch, xdist queue, GC, close.
- ``runner.py``: the async engine: items run concurrently while pytest runs tests in order.
- ``workers.py``: xdist: this worker's slot, its share of run-wide budgets, deep queues.
- ``ledger.py``: the controller's records, the results file, resume, and when to stop.
- ``estimate.py``: ``--collect-only --citebench-estimate``: the calls and cost a run would make.
- ``diagnostics.py``: what the end of a run says beyond the scores: cassette misses (with the
  command that records them), models whose server queues requests.

The end of the run (aggregates, gates, baseline, verdict) is ``reports/conclude.py``'s, shared
with ``merge``.

May import: base (errors, safetext, jsonl, metricspec), api, registry, parsing, retrieval, doi,
recording, metrics, models, results, suites, reports, settings, papers.
"""
