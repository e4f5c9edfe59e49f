"""Each gold record remembers the version of every annotation it was checked against
(GoldItem.annotations_seen), so that gold_sync can mark it for review when one is revised.

Records opened before this migration get the versions their annotations had when the record was
opened (its first audit row), read from the annotation revisions: an annotation revised since
then is marked by the next gold_sync, as it would have been had the marker been kept all along."""

from django.db import migrations, models
from django.db.models import Min


def _annotations_at_opening(apps, schema_editor):
    GoldItem = apps.get_model("adjudication", "GoldItem")
    GoldChange = apps.get_model("adjudication", "GoldChange")
    AnnotationRevision = apps.get_model("annotator", "AnnotationRevision")
    opened = dict(GoldChange.objects.values("gold_id").annotate(at=Min("at")).values_list("gold_id", "at"))
    golds = list(GoldItem.objects.only("pk", "item_id", "round_id"))
    by_item = {(g.round_id, g.item_id): g for g in golds}
    seen: dict[int, dict[str, int]] = {g.pk: {} for g in golds}
    revisions = AnnotationRevision.objects.filter(
        annotation__assignment__status="done",
        annotation__assignment__item__gold__isnull=False,
    ).values_list(
        "annotation__assignment__round_id",
        "annotation__assignment__item_id",
        "annotation__assignment__annotator_id",
        "version",
        "created_at",
    )
    for round_id, item_id, annotator_id, version, created_at in revisions.iterator(chunk_size=5000):
        gold = by_item.get((round_id, item_id))
        if gold is None:
            continue  # the item's gold belongs to another round's annotations
        at = opened.get(gold.pk)
        if at is not None and created_at > at:
            continue  # saved after the record was opened: the next gold_sync marks it
        key = str(annotator_id)
        seen[gold.pk][key] = max(version, seen[gold.pk].get(key, 0))
    for gold in golds:
        gold.annotations_seen = seen[gold.pk]
    GoldItem.objects.bulk_update(golds, ["annotations_seen"], batch_size=2000)


class Migration(migrations.Migration):
    dependencies = [
        ("adjudication", "0003_agreement_snapshot"),
        ("annotator", "0004_assignment_order_idx"),
    ]

    operations = [
        migrations.AddField(
            model_name="golditem",
            name="annotations_seen",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="annotator id -> version of each annotation of the item, as gold_sync last saw it",
            ),
        ),
        migrations.RunPython(_annotations_at_opening, migrations.RunPython.noop),
    ]
