"""The HTTP host (``serve --http``): an OpenAI-compatible API, MCP over HTTP and a web chat.

A presentation layer beside ``lsp/``: it composes the same runtime and chat feature, so a script
or a browser chats through the same sessions, tools, permissions and histories as an editor.
"""
