"""EntailmentJudgement leaves adjudication for verification in Django's state only: the table
(adjudication_entailmentjudgement), its rows, its constraint and its index stay."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("adjudication", "0005_gold_change_why_text"), ("verification", "0001_initial")]
TABLE = "adjudication_entailmentjudgement"


@pytest.mark.django_db(transaction=True)
def test_a_judgement_row_moves_to_the_verification_app_with_its_item_and_judge():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old_apps = executor.loader.project_state(BEFORE).apps
    judge = old_apps.get_model("auth", "User").objects.create(username="carol")
    item = old_apps.get_model("annotator", "Item").objects.create(
        source_id="e1", text="I passed the exam.", reference_label="joy"
    )
    old = old_apps.get_model("adjudication", "EntailmentJudgement").objects.create(
        item=item, text_field="text", text_sha="a" * 64, slot="feeling", value="good",
        line="someone feels something good", judge=judge, entailed=True,
    )  # fmt: skip

    executor = MigrationExecutor(connection)  # a fresh graph: the one above has the move unapplied
    executor.migrate(executor.loader.graph.leaf_nodes())
    new_apps = executor.loader.project_state(executor.loader.graph.leaf_nodes()).apps
    Judgement = new_apps.get_model("verification", "EntailmentJudgement")
    judgement = Judgement.objects.get(pk=old.pk)
    assert (judgement.item_id, judgement.judge_id, judgement.line, judgement.entailed) == (
        item.pk,
        judge.pk,
        "someone feels something good",
        True,
    )
    assert Judgement._meta.db_table == TABLE
    with pytest.raises(LookupError):
        new_apps.get_model("adjudication", "EntailmentJudgement")
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, TABLE)
    assert {"judgement_one_per_judge", "judgement_pair_idx"} <= set(constraints)
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgement.objects.create(
            item_id=item.pk, text_field="text", text_sha="a" * 64, slot="feeling", value="good",
            line="someone feels something good", judge_id=judge.pk, entailed=False,
        )  # fmt: skip
