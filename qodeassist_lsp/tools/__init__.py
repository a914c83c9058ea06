"""L3 tool kit: the built-in tools sessions can offer to a model."""
