"""`manage.py serve` runs one gunicorn worker more than the cores, from 2 to 8 (its docstring has
the load benchmark's figures against gunicorn's 2 x cores + 1)."""

import os

import pytest

from server.management.commands.serve import Command, default_web_workers


@pytest.mark.parametrize(("cores", "workers"), [(1, 2), (2, 3), (4, 5), (7, 8), (64, 8), (None, 2)])
def test_one_worker_more_than_the_cores_from_two_to_eight(monkeypatch, cores, workers):
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert default_web_workers() == workers


def test_nsm_web_workers_overrides_the_default(monkeypatch):
    monkeypatch.setenv("NSM_WEB_WORKERS", "6")
    options = Command().create_parser("manage.py", "serve").parse_args([])
    assert options.workers == 6
