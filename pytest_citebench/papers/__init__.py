"""The built-in papers, one folder each; the core reaches them only through the registry."""
