"""Providers that are local agent programs on pipes (ACP agents, Claude Code, Gemini CLI).

`factory.make_provider` picks the provider class by the instance's ``client_api``. A package
``__init__`` imports none of its modules: a thread importing one of them directly while another
runs the ``__init__`` would deadlock on the import locks (tests/unit/test_import_graph.py).
"""
