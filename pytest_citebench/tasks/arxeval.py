"""ArxEval (jumbled and mixed titles): tasks registered here."""
