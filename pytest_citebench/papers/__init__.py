"""The built-in papers, one folder each; the core reaches them only through the registry.

May import: errors, safetext, jsonl, metricspec, api, registry, parsing, retrieval, doi, recording,
metrics, models, results, suites, reports, settings (a paper reads its own options).
"""
