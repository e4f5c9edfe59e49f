"""Production logging (config.log): a page refused on purpose (404, 403) is one line in the log,
not a traceback (the walkthrough found a page of stack for each 403); a server error keeps its."""

import io
import logging

import pytest
from django.urls import reverse

from config.log import RefusalsWithoutTraceback, stderr_logging


@pytest.fixture
def production_log():
    """The production handler's filter and format, on a buffer, for Django's request log."""
    config = stderr_logging("INFO")
    assert config["handlers"]["stderr"]["filters"] == ["refusals"]
    assert config["filters"]["refusals"]["()"] == "config.log.RefusalsWithoutTraceback"
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter(config["formatters"]["plain"]["format"]))
    handler.addFilter(RefusalsWithoutTraceback())
    logger = logging.getLogger("django.request")
    logger.addHandler(handler)
    yield buffer
    logger.removeHandler(handler)


def test_a_page_outside_ones_role_is_one_line_in_the_log(client, annotator, production_log):
    client.force_login(annotator)
    assert client.get(reverse("jobs")).status_code == 403
    assert client.get("/no-such-page/").status_code == 404
    log = production_log.getvalue()
    assert "WARNING django.request: Forbidden (Permission denied): /jobs/" in log
    assert "WARNING django.request: Not Found: /no-such-page/" in log
    assert "Traceback" not in log, log


def test_a_server_error_keeps_its_traceback(production_log):
    logger = logging.getLogger("django.request")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logger.error("Internal Server Error: /x/", exc_info=True, extra={"status_code": 500})
        logger.warning("Forbidden: /y/", exc_info=True, extra={"status_code": 403})
    log = production_log.getvalue()
    assert log.count("Traceback") == 1 and "RuntimeError: boom" in log and "Forbidden: /y/" in log
