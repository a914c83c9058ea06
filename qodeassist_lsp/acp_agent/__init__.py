"""``qodeassist-lsp acp``: the chat feature behind the Agent Client Protocol (SPEC §8).

A presentation layer beside ``lsp``: it composes the same runtime, tool kit, edit manager,
skills, MCP hub and `ChatService` the language server composes, and speaks ACP through the
``agent-client-protocol`` SDK (imported as ``acp``; hence this package's name).
"""
