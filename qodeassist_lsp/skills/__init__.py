"""L3 skills engine: discovery and loading of Agent Skills."""
