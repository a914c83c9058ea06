"""L3 MCP: a hub for external MCP servers' tools, and a server for ours (the ``mcp`` SDK).

The hub brings external MCP servers' tools into sessions; the server offers our tool kit to
MCP clients.

``definitions`` reads ``mcp.json``; ``approvals`` remembers which project servers the user let
start; ``connection`` keeps one server connected; ``hub`` runs them all and contributes their
tools (``remote_tool``); ``server`` and ``server_gate`` are ``qodeassist-lsp mcp serve``.
"""
