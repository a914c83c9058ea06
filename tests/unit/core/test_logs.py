import io
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from qodeassist_lsp.config.settings import LoggingSettings
from qodeassist_lsp.core.logs import BODY_LOGGER, apply_logging_settings, configure_logging


def test_secrets_are_redacted_even_from_careless_log_calls() -> None:
    stream = io.StringIO()
    configure_logging("DEBUG", stream)
    log = logging.getLogger("qodeassist.test")
    log.debug(
        "headers %s", {"Authorization": "Bearer sk-PLANTED-123", "x-api-key": "sk-ant-PLANTED"}
    )
    log.info("GET https://x/models?key=AIzaPLANTED&alt=sse")
    try:
        raise RuntimeError("failed with Authorization: Bearer sk-PLANTED-456")
    except RuntimeError:
        log.exception("boom")
    text = stream.getvalue()
    assert "PLANTED" not in text
    assert text.count("qodeassist.test") == 3


def test_unknown_level_falls_back_to_warning() -> None:
    stream = io.StringIO()
    configure_logging("chatty", stream)
    assert logging.getLogger("qodeassist").level == logging.WARNING
    assert "unknown log level 'chatty'" in stream.getvalue()


# --------------------------------------------------------------------------- [logging] settings
def _settings(**values: object) -> LoggingSettings:
    return LoggingSettings.model_validate(values)


@pytest.fixture
def stderr() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    configure_logging("WARNING", stream)
    yield stream
    configure_logging("WARNING", io.StringIO())  # closes the log file handlers of the test


def test_level_comes_from_the_settings_and_the_environment_wins(stderr: io.StringIO) -> None:
    log = logging.getLogger("qodeassist.test")
    apply_logging_settings(_settings(level="debug"))
    log.debug("debug line one")
    apply_logging_settings(_settings(level="debug"), env_level="ERROR")
    log.warning("warning line hidden by the environment")
    apply_logging_settings(_settings(level="error"))
    log.warning("warning line hidden by the setting")
    text = stderr.getvalue()
    assert "debug line one" in text
    assert "hidden" not in text


def test_log_file_is_appended_and_follows_a_reload(tmp_path: Path, stderr: io.StringIO) -> None:
    log = logging.getLogger("qodeassist.test")
    first, second = tmp_path / "logs" / "first.log", tmp_path / "second.log"
    first.parent.mkdir()
    first.write_text("kept\n", encoding="utf-8")
    apply_logging_settings(_settings(level="info", log_file="logs/first.log"), base_dir=tmp_path)
    log.info("to the first file, Authorization: Bearer sk-PLANTED-789")
    apply_logging_settings(_settings(level="info", log_file=str(second)), base_dir=tmp_path)
    log.info("to the second file")
    apply_logging_settings(_settings(level="info"), base_dir=tmp_path)
    log.info("to no file")
    one, two = first.read_text(encoding="utf-8"), second.read_text(encoding="utf-8")
    assert one.startswith("kept\n") and "to the first file" in one and "PLANTED" not in one
    assert "second" not in one and "to the second file" in two
    assert "to no file" not in one + two and "to no file" in stderr.getvalue()


def test_log_file_expands_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stderr: io.StringIO
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    apply_logging_settings(_settings(level="info", log_file="~/state/lsp.log"))
    logging.getLogger("qodeassist.test").info("at home")
    assert "at home" in (tmp_path / "state" / "lsp.log").read_text(encoding="utf-8")


def test_a_log_file_that_cannot_be_opened_is_a_warning(tmp_path: Path, stderr: io.StringIO) -> None:
    (tmp_path / "file").write_text("", encoding="utf-8")
    apply_logging_settings(_settings(log_file=str(tmp_path / "file" / "lsp.log")))
    logging.getLogger("qodeassist.test").warning("still logged")
    text = stderr.getvalue()
    assert "cannot open the log file" in text and "still logged" in text


def test_bodies_need_debug_and_log_requests(stderr: io.StringIO) -> None:
    body = logging.getLogger(BODY_LOGGER)
    apply_logging_settings(_settings(level="debug"))
    assert not body.isEnabledFor(logging.DEBUG)
    apply_logging_settings(_settings(level="info", log_requests=True))
    assert not body.isEnabledFor(logging.DEBUG)
    apply_logging_settings(_settings(level="debug", log_requests=True))
    assert body.isEnabledFor(logging.DEBUG)
    apply_logging_settings(_settings(level="info"), env_level="DEBUG")
    assert body.isEnabledFor(logging.DEBUG)
