"""Quick refactor of a selection."""
