"""The Celery worker logs through the same redacting formatter as the web process."""

import logging

from memory.redaction import RedactingFormatter
from memoryweb.celery import app as celery_app


def test_a_worker_keeps_the_redacting_log_handler():
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        # what `celery worker` does at start-up to set up its logging
        celery_app.log.setup_logging_subsystem(loglevel="INFO")
        console = [h for h in root.handlers if h.get_name() == "console"]
        assert console and isinstance(console[0].formatter, RedactingFormatter)
        assert not [h for h in root.handlers if h not in before], "the worker added handlers of its own"
    finally:
        for handler in list(root.handlers):
            if handler not in before:
                root.removeHandler(handler)
        celery_app.log.already_setup = False
