"""Reports people read: one self-contained HTML file and a Markdown summary for CI.

Both are rendered from a ``ReportData`` built from the item records, the aggregates, the gate
results and (optionally) a baseline comparison, and from nothing else: no clock, no host name.
So a merged sharded run and a single-machine run of the same items produce the same report, and
a report can be re-rendered later from a results file (``python -m pytest_citebench merge``).

Importing this package is cheap (no numpy, no task modules); the renderers import what they need.

May import: errors, safetext, jsonl, metricspec, api, registry, recording (every report
is scrubbed), metrics, models, results. The end of a run (``conclude.py``: aggregates, gates,
baseline, verdict in one ``Conclusion``) is here, read by every report; ``comparison.py`` shows
the baseline comparison.
"""
