"""qodeassist-lsp: LLM code completion, quick refactor and chat for every LSP editor."""

__version__ = "0.1.0.dev0"
