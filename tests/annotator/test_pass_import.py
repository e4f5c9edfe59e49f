import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from annotator.imports import ImportFileError, items_import
from annotator.model_output import pass_import, predictions_import
from annotator.models import Annotation, Assignment, Item, ParserPrediction, Round
from annotator.sampling import item_set_from_items
from tests.factories import PRED
from tests.shared_data import shared_data

pytestmark = pytest.mark.django_db


def _row(text_id, **slots):
    return json.dumps({"text_id": text_id, **PRED, **slots, "residue": "", "notes": "", "flags": []})


def test_a_pass_enters_a_round_as_one_non_login_annotator(items):
    round_ = Round.objects.create(
        name="silver", item_set=item_set_from_items(name="s", items=items), pass_kind="silver"
    )
    data = "\n".join(_row(i.source_id) for i in items)
    report = pass_import(data=data, round_=round_, annotator_name="model-a", source="test")
    assert (report.created, report.unchanged) == (len(items), 0)
    model = User.objects.get(username="model-a")
    assert not model.has_usable_password()
    assert Assignment.objects.filter(round=round_, annotator=model, status="done").count() == len(items)
    again = pass_import(data=data, round_=round_, annotator_name="model-a", source="test")
    assert (again.created, again.unchanged) == (0, len(items))


def test_a_pass_with_one_illegal_row_writes_nothing(items):
    round_ = Round.objects.create(name="silver", item_set=item_set_from_items(name="s", items=items))
    rows = [_row(i.source_id) for i in items[:-1]] + [_row(items[-1].source_id, body="maybe")]
    with pytest.raises(ImportFileError, match="line 4, column body: 'maybe' is not an allowed value"):
        pass_import(data="\n".join(rows), round_=round_, annotator_name="model-a", source="test")
    with pytest.raises(ImportFileError, match="no item 'zzz' in test"):
        pass_import(data=_row("zzz"), round_=round_, annotator_name="model-a", source="test")
    assert not Annotation.objects.exists() and not User.objects.filter(username="model-a").exists()


def test_predictions_import_keeps_illegal_ones_as_illegal(items):
    data = _row(items[0].source_id) + "\n" + _row(items[1].source_id, want="wish")
    report = predictions_import(data=data, parser="ext", source="test")
    assert report.created == 2
    legal = {p.item.source_id: p.legal for p in ParserPrediction.objects.select_related("item")}
    assert legal == {items[0].source_id: True, items[1].source_id: False}
    assert predictions_import(data=data, parser="ext", source="test").created == 0


def test_the_two_real_silver_passes_import_into_one_round(tmp_path, capsys):
    silver = shared_data("silver-156")
    items_import(data=(silver / "items.jsonl").read_bytes(), fmt="jsonl", source="crowd-enVent")
    item_set = item_set_from_items(name="S", items=list(Item.objects.all()))
    Round.objects.create(name="silver-156", item_set=item_set, pass_kind="silver", annotators_per_item=2)
    call_command(
        "import_pass", str(silver / "pass-a.jsonl"), "--round", "silver-156", "--annotator", "silver-a"
    )
    call_command(
        "import_pass", str(silver / "pass-b.jsonl"), "--round", "silver-156", "--annotator", "silver-b"
    )
    assert "156 created" in capsys.readouterr().out
    assert Annotation.objects.filter(assignment__round__name="silver-156").count() == 312
    flags = Annotation.objects.filter(assignment__annotator__username="silver-a").values_list(
        "flags", flat=True
    )
    assert sum("unrecoverable" in f for f in flags) > 0
