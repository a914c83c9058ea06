"""L5 presentation: the pygls language server, its handlers and custom methods."""
