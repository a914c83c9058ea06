"""Run the command line with ``python -m qodeassist_lsp``."""

from qodeassist_lsp.cli import main

raise SystemExit(main())
