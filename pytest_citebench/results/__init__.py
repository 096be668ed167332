"""Results: the item records of a run and what is computed from them.

The record schema (``record``), aggregation (``aggregate``), the results file (``files``), gates
and the baseline comparison (``compare``): every module here works on records, with no model and
no pytest run, so a results file can be judged again later. What a run or a command does with
them is above: the run's ledger in ``run/``, merging and re-scoring in ``commands/``, the end of
a run and every report in ``reports/``.

May import: errors, safetext, jsonl, metricspec, api, registry, metrics (the statistics).
"""
