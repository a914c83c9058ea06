"""The codebase index: SQLite FTS5 over tree-sitter chunks, plus a symbol table, per workspace.

`model` holds the types every user of the index reads (the completion context, the chat tools,
next edits); the engine (store, chunker, scanner) lives beside it.
"""
