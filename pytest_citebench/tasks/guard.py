"""citation-guard: verifier validation and guard tasks, registered here."""
