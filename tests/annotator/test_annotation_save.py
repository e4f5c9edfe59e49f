"""A save on PostgreSQL is one statement (annotator.queries.annotation_save): the same rows as the
ORM's transaction, the same claims. Run on PostgreSQL by tests/integration/test_postgres.py; the
race is run on SQLite too, where the ORM's transaction makes the claims."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.forms.models import model_to_dict

from annotator import annotation_writes
from annotator.models import Annotation, AnnotationRevision, Assignment
from annotator.services import StaleSave, annotation_submit
from tests.factories import PRED

ONLY_ON_POSTGRESQL = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="the one-statement save is PostgreSQL's; SQLite saves with the ORM",
)

REVISED = {**PRED, "intensity": "very", "notes": "second look"}


def rows(assignment: Assignment) -> tuple[dict, list[dict], str]:
    """What a save left: the annotation's columns, its revisions', the assignment's status (ids,
    times and the assignment itself apart)."""
    annotation = model_to_dict(Annotation.objects.get(assignment=assignment), exclude=["id", "assignment"])
    revisions = [
        model_to_dict(revision, exclude=["id", "annotation"])
        for revision in AnnotationRevision.objects.filter(annotation__assignment=assignment).order_by(
            "version"
        )
    ]
    return annotation, revisions, Assignment.objects.get(pk=assignment.pk).status


def saves(assignment: Assignment, user) -> list[tuple]:
    """A first save, a revision, a stale save: what each returned, then the rows."""
    returned = []
    for values, base_version in ((PRED, 0), (REVISED, 1)):
        a = annotation_submit(
            assignment=assignment, user=user, values=values, base_version=base_version, time_spent_ms=900
        )
        returned.append((a.version, a.slots(), a.notes, a.flags, a.kept_prefill, a.changed))
    with pytest.raises(StaleSave):
        annotation_submit(assignment=assignment, user=user, values=PRED, base_version=1)
    return [returned, rows(assignment)]


@ONLY_ON_POSTGRESQL
@pytest.mark.django_db
def test_the_one_statement_save_writes_what_the_orm_transaction_writes(
    prefilled_round, annotator, monkeypatch
):
    one, other = Assignment.objects.filter(round=prefilled_round, annotator=annotator).order_by("id")[:2]
    in_one_statement = saves(one, annotator)
    monkeypatch.setattr(annotation_writes, "annotation_save_in_one_statement", lambda: False)
    with_the_orm = saves(other, annotator)
    assert in_one_statement == with_the_orm
    returned, (annotation, revisions, status) = in_one_statement
    assert [r[0] for r in returned] == [1, 2] and status == Assignment.Status.DONE
    assert [r["version"] for r in revisions] == [1, 2] and annotation["intensity"] == "very"
    assert revisions[0]["created_by"] == annotator.pk and revisions[0]["time_spent_ms"] == 900


@pytest.mark.django_db(transaction=True)
def test_of_racing_first_saves_one_is_written_and_the_others_are_stale(prefilled_round, annotator):
    assignment = Assignment.objects.filter(round=prefilled_round, annotator=annotator).first()
    start, outcomes = threading.Barrier(4), []

    def save(n: int) -> None:
        try:
            start.wait()
            annotation_submit(
                assignment=assignment, user=annotator, values={**PRED, "notes": f"tab {n}"}, base_version=0
            )
            outcomes.append("saved")
        except StaleSave:
            outcomes.append("stale")
        finally:
            connection.close()

    threads = [threading.Thread(target=save, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["saved", "stale", "stale", "stale"]
    annotation, revisions, status = rows(assignment)
    assert len(revisions) == 1 and annotation["version"] == 1 and status == Assignment.Status.DONE
    assert revisions[0]["notes"] == annotation["notes"]  # the revision is the winner's
