"""Logging for the whole process: one logger per layer, secrets redacted unconditionally.

Loggers are named ``qodeassist.<layer>`` (``qodeassist.wire``, ``qodeassist.session``,
``qodeassist.tools`` …); request log lines start with ``[<request id>]``. ``RedactingFilter``
runs on every handler, so even a careless log call cannot print a key.

``configure_logging`` sets up stderr at process start (from ``QODEASSIST_LOG_LEVEL``);
``apply_logging_settings`` then applies ``[logging]`` once the configuration is loaded, and again
on every reload: the level (the environment variable, when set, wins), the optional log file and
whether request/response bodies (the ``qodeassist.wire.body`` logger) are written.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import IO, TYPE_CHECKING

from qodeassist_lsp.wire.errors import redact

if TYPE_CHECKING:  # the server's start path imports this module before pydantic is loaded
    from qodeassist_lsp.config.settings import LoggingSettings

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LEVEL_ENV = "QODEASSIST_LOG_LEVEL"
"""The environment variable that overrides ``[logging] level``."""
BODY_LOGGER = "qodeassist.wire.body"
"""Request and response bodies; written only at DEBUG with ``log_requests`` (or the env var)."""

_ROOT = "qodeassist"


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


class LogFileHandler(logging.FileHandler):
    """The handler that appends to ``[logging] log_file`` (replaced when the path changes)."""


def configure_logging(level: str, stream: IO[str]) -> logging.Handler:
    """Send ``qodeassist.*`` logs at ``level`` to ``stream`` through the redacting filter."""
    handler = logging.StreamHandler(stream)
    _dress(handler)
    root = logging.getLogger(_ROOT)
    for old in root.handlers:
        old.close()
    root.handlers = [handler]
    root.propagate = False
    root.setLevel(_level_number(level))
    logging.getLogger(BODY_LOGGER).setLevel(logging.NOTSET)
    return handler


def apply_logging_settings(
    settings: LoggingSettings, *, env_level: str | None = None, base_dir: Path | None = None
) -> None:
    """Apply ``[logging]``: level (``env_level`` wins when set), log file, request bodies.

    A relative ``log_file`` is taken relative to ``base_dir`` (the config directory). A file
    that cannot be opened is reported as a warning; logging to stderr goes on.
    """
    root = logging.getLogger(_ROOT)
    level = _level_number(env_level or settings.level)
    root.setLevel(level)
    bodies = settings.log_requests or bool(env_level and env_level.upper() == "DEBUG")
    body_level = logging.NOTSET if bodies and level <= logging.DEBUG else logging.INFO
    logging.getLogger(BODY_LOGGER).setLevel(body_level)
    _use_log_file(root, _log_path(settings.log_file, base_dir))


def _log_path(value: str, base_dir: Path | None) -> Path | None:
    if not value.strip():
        return None
    path = Path(value.strip()).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    return path.absolute()


def _use_log_file(root: logging.Logger, path: Path | None) -> None:
    current = [h for h in root.handlers if isinstance(h, LogFileHandler)]
    if path is not None and any(Path(h.baseFilename) == path for h in current):
        return
    for handler in current:
        root.removeHandler(handler)
        handler.close()
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = LogFileHandler(path, mode="a", encoding="utf-8")
    except OSError as exc:
        root.warning("cannot open the log file %s (%s); logging to stderr only", path, exc)
        return
    _dress(handler)
    root.addHandler(handler)


def _dress(handler: logging.Handler) -> None:
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(RedactingFilter())


def _level_number(name: str) -> int:
    known = logging.getLevelNamesMapping()
    number = known.get(name.upper())
    if number is None:
        logging.getLogger(_ROOT).warning(
            "unknown log level %r; using WARNING (use DEBUG, INFO, WARNING, ERROR)", name
        )
        return logging.WARNING
    return number
