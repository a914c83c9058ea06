"""L2 core: agents, the generic provider, sessions, history, events and typed errors."""
