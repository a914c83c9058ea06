"""L4 features: completion, chat and quick refactor; they never import each other."""
