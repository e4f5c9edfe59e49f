"""Domain errors become API answers in one place (config.errors.api_exception_handler): an error
that says its answer (``api_status``, ``api_body``) is raised through the views, not caught in each
one, so every endpoint answers it the same way and rolls its writes back."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from django.conf import settings
from django.db import transaction
from django.test import RequestFactory
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.models import ItemSet
from annotator.services import StaleSave
from jobs.kinds import JobError
from tests.app.test_layers import LAYERS

#: handlers that answer a domain error otherwise than it says, each for a reason
REMAPPED = {
    ("annotator.round_api", "RoundError"): "a pool change refused is a conflict about the annotator",
    ("annotator.import_api", "DrawError"): "an import's item set is named in its `item_set` field",
    ("annotator.import_api", "Refused"): "an import's round is named in its `round` field",
    ("jobs.api", "JobError"): "cancel or resume refused: the job's state conflicts (409)",
}


def api_modules():
    root = Path(settings.BASE_DIR)
    for app in LAYERS[1:]:
        for path in sorted((root / app).rglob("*api*.py")):
            yield ".".join(path.relative_to(root).with_suffix("").parts), path


def test_no_api_module_catches_an_error_that_says_its_own_answer():
    caught = []
    for name, path in api_modules():
        module = importlib.import_module(name)
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ExceptHandler) or node.type is None:
                continue
            types = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            for expr in types:
                error = getattr(module, ast.unparse(expr).split(".")[-1], None)
                if hasattr(error, "api_status") and (name, error.__name__) not in REMAPPED:
                    caught.append(f"{name}:{node.lineno} catches {error.__name__}")
    assert caught == []


class Writes(APIView):
    permission_classes = []
    error: Exception = JobError("")

    def post(self, request):
        with transaction.atomic():  # as every service that writes: raised through, nothing kept
            ItemSet.objects.create(name="half-written")
            raise self.error


@pytest.mark.django_db
@pytest.mark.parametrize(
    "error, status, body",
    [
        (JobError("no such parser"), 400, {"detail": "no such parser"}),
        (StaleSave(None, base_version=3), 409, {"current_version": 0}),
    ],
)
def test_a_domain_error_is_answered_as_it_says_and_nothing_is_written(error, status, body):
    answer: Response = Writes.as_view(error=error)(RequestFactory().post("/api/x/"))
    assert answer.status_code == status
    assert body.items() <= answer.data.items() and str(error) in answer.data.get("detail", str(error))
    assert not ItemSet.objects.filter(name="half-written").exists()
