import io
import logging

from qodeassist_lsp.core.logs import configure_logging


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
