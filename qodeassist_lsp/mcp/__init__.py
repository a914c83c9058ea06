"""L3 MCP hub: the client side that consumes MCP servers and the server side that exposes tools."""
