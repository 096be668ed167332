"""Results: the item records of a run and what is computed from them.

Aggregation (``aggregate``), the results file (``files``), gates, the baseline comparison,
shard merging and re-scoring: every module here works on records, with no model and no pytest
run, so a results file can be judged again later.
"""
