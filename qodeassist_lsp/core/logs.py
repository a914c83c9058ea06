"""Logging for the whole process: one logger per layer, secrets redacted unconditionally.

Loggers are named ``qodeassist.<layer>`` (``qodeassist.wire``, ``qodeassist.session``,
``qodeassist.tools`` …); request log lines start with ``[<request id>]``. ``RedactingFilter``
runs on the handler, so even a careless log call cannot print a key.
"""

from __future__ import annotations

import logging
from typing import IO

from qodeassist_lsp.wire.errors import redact

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RedactingFilter(logging.Filter):
    """Removes ``Authorization``/``x-api-key``/``key=`` values from every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Render the message once, redacted, so arguments cannot reintroduce a secret."""
        message = record.getMessage()
        cleaned = redact(message)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        record.msg, record.args = cleaned, None
        return True


def configure_logging(level: str, stream: IO[str]) -> logging.Handler:
    """Send ``qodeassist.*`` logs at ``level`` to ``stream`` through the redacting filter."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(RedactingFilter())
    root = logging.getLogger("qodeassist")
    root.handlers = [handler]
    known = logging.getLevelNamesMapping()
    root.setLevel(known.get(level.upper(), logging.WARNING))
    root.propagate = False
    if level.upper() not in known:
        root.warning("unknown log level %r; using WARNING (use DEBUG, INFO, WARNING, ERROR)", level)
    return handler
