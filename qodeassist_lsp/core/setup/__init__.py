"""``qodeassist-lsp setup``: find local model servers, propose a configuration, write it.

``probe`` finds servers and models (I/O over httpx), ``plan`` decides what to configure (pure),
``apply`` writes it through tomlkit and validates the result, ``hint`` tells ``doctor`` when a
local server is running that no pipeline uses.
"""
