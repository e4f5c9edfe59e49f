"""A parser pass against gold on a held-out item set, beside the baselines: the service, the page
section and its CSV, the API's ``parser_vs_gold`` and ``manage.py evaluate --heldout``.

The fixture round (written for these tests) holds twelve items, all with reference labels, texts
and the 21 appraisal ratings:

    item  label  held out  gold (alice = bob)       parser clf (newest)
    t1-t6 guilt shame pride anger guilt pride: training items (no gold needed)
    x7    shame  no, but in another eval-tier set: never trained on
    h1    guilt  yes       GUILT                    GUILT
    h2    shame  yes       SHAME                    GUILT (v0 said SHAME)   others_know wrong
    h3    pride  yes       PRIDE                    PRIDE with body 'maybe' (illegal; body wrong)
    h4    anger  yes       ANGER                    NO_RULE                 eval_target wrong
    h5    guilt  yes       open (alice/bob differ)  unreadable (None)

So on the 4 scored items (h1-h4): others_know, eval_target and body 3/4 right, every other slot
4/4; legality 3/5 (h1, h2, h4 of the five predictions); the routed label right on h1 only
(1/4), abstaining on h3 (illegal) and h4 (no rule): abstention 2/4, selective accuracy 1/2.
Alpha by hand (nominal, two coders): agency agrees everywhere with variation -> 1.0; others_know
and eval_target have one disagreeing pair among seven of one value and one of another -> 0.0;
experiencer and body (h3's value is out of set, so missing) show no variation -> undefined.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from adjudication.evaluation.figures import EvaluationRequestError
from adjudication.evaluation.parser import APPRAISAL, LABEL_CLASSIFIER, PATHWAY, parser_vs_gold
from adjudication.gold.services import gold_sync
from adjudication.models import GoldItem
from annotator.imports import items_import
from annotator.models import Assignment, Item, ItemSet, ParserPrediction, Round
from annotator.sampling import item_set_from_items
from annotator.services import annotation_submit, round_create
from nsmcore.baselines import APPRAISALS, train_appraisal_baseline, train_label_classifier
from tests.adjudication.evaluation_fixture import (
    ANGER,
    GUILT,
    NO_RULE,
    PRIDE,
    SHAME,
    csv_rows,
)
from tests.adjudication.evaluation_fixture import evaluation_csv_url as csv_url
from tests.adjudication.evaluation_fixture import evaluation_url as url

LABELS = {
    "t1": "guilt", "t2": "shame", "t3": "pride", "t4": "anger", "t5": "guilt", "t6": "pride",
    "x7": "shame", "h1": "guilt", "h2": "shame", "h3": "pride", "h4": "anger", "h5": "guilt",
}  # fmt: skip
TEXTS = {
    "guilt": "I hurt my friend and I keep thinking I should not have done it",
    "shame": "everyone saw me fail and I wanted to disappear",
    "pride": "I won the prize after months of work",
    "anger": "he lied to me on purpose and I was furious",
}
# Each label its own rating profile, shifted a little per item so no two rows are equal.
PROFILE = {"guilt": 1, "shame": 2, "pride": 4, "anger": 5}
GOLD = {"h1": GUILT, "h2": SHAME, "h3": PRIDE, "h4": ANGER}
PARSER = {"h1": GUILT, "h2": GUILT, "h3": {**PRIDE, "body": "maybe"}, "h4": NO_RULE, "h5": None}
HELD = ["h1", "h2", "h3", "h4", "h5"]


def ratings(sid: str) -> dict[str, int]:
    base = PROFILE[LABELS[sid]]
    shift = int(sid[1])
    return {name: max(1, min(5, base + (k + shift) % 3 - 1)) for k, name in enumerate(APPRAISALS)}


@pytest.fixture
def round_(annotator, other_annotator) -> Round:
    lines = [
        json.dumps({"text_id": sid, "emotion": label, "text": f"{TEXTS[label]} ({sid})", **ratings(sid)})
        for sid, label in LABELS.items()
    ]
    items_import(data="\n".join(lines), fmt="jsonl", source="pe-test")
    by_id = {i.source_id: i for i in Item.objects.filter(source="pe-test")}
    round_set = item_set_from_items(name="pe-round-set", items=[by_id[s] for s in LABELS], tier="H")
    item_set_from_items(name="pe-heldout", items=[by_id[s] for s in HELD], tier=ItemSet.Tier.EVAL)
    item_set_from_items(name="pe-other-eval", items=[by_id["x7"]], tier=ItemSet.Tier.EVAL)
    round_ = round_create(name="pe-round", item_set=round_set, annotators=[annotator, other_annotator])
    values = {
        annotator: {**GOLD, "h5": GUILT},
        other_annotator: {**GOLD, "h5": SHAME},
    }
    for user, by_sid in values.items():
        for a in Assignment.objects.filter(round=round_, annotator=user, item__source_id__in=HELD):
            annotation_submit(assignment=a, user=user, values=by_sid[a.item.source_id], base_version=0)
    gold_sync(round_)
    assert GoldItem.objects.filter(round=round_, status="resolved").count() == 4
    ParserPrediction.objects.create(item=by_id["h2"], parser="clf", parser_version="v0", explication=SHAME,
                                    legal=True)  # fmt: skip
    for sid, explication in PARSER.items():
        ParserPrediction.objects.create(
            item=by_id[sid], parser="clf", parser_version="v1", explication=explication,
            legal=explication is not None and sid != "h3",
        )  # fmt: skip
    return round_


def heldout() -> ItemSet:
    return ItemSet.objects.get(name="pe-heldout")


def training_items() -> list[Item]:
    return list(
        Item.objects.filter(source="pe-test", source_id__in=["t1", "t2", "t3", "t4", "t5", "t6"]).order_by(
            "id"
        )
    )


def scored_items() -> list[Item]:
    return list(Item.objects.filter(source="pe-test", source_id__in=["h1", "h2", "h3", "h4"]).order_by("id"))


def test_per_slot_accuracy_and_legality_are_the_hand_counted_ones(round_):
    result = parser_vs_gold(round_, "parser:clf", heldout=heldout())
    assert (result.scored, result.without_gold, result.without_prediction) == (4, 1, 0)
    accuracy = {s.slot: (s.accuracy.k, s.accuracy.n) for s in result.slots}
    wrong_once = {"others_know", "eval_target", "body"}
    assert accuracy == {slot: (3 if slot in wrong_once else 4, 4) for slot in accuracy}
    assert len(accuracy) == 12
    assert (result.legality.k, result.legality.n) == (3, 5)
    others_know = next(s for s in result.slots if s.slot == "others_know")
    assert (round(others_know.accuracy.low, 2), round(others_know.accuracy.high, 2)) == (0.19, 0.99)


def test_alpha_per_slot_is_the_hand_computed_one_and_undefined_without_variation(round_):
    slots = {s.slot: s for s in parser_vs_gold(round_, "parser:clf", heldout=heldout()).slots}
    assert slots["agency"].alpha == pytest.approx(1.0)
    assert slots["others_know"].alpha == pytest.approx(0.0)
    assert slots["eval_target"].alpha == pytest.approx(0.0)
    for name in ("experiencer", "body"):
        assert slots[name].alpha is None and slots[name].alpha_undefined.startswith("no variation")


def test_the_routed_label_is_scored_against_the_reference_labels(round_):
    pathway = parser_vs_gold(round_, "parser:clf", heldout=heldout()).labels[0]
    assert pathway.model == PATHWAY
    assert (pathway.accuracy.k, pathway.accuracy.n) == (1, 4)
    assert (pathway.abstention.k, pathway.abstention.n) == (2, 4)
    assert (pathway.selective_accuracy.k, pathway.selective_accuracy.n) == (1, 2)


def test_the_baselines_are_trained_on_the_other_non_eval_items_and_scored_on_the_held_out_ones(round_):
    rows = {r.model: r for r in parser_vs_gold(round_, "parser:clf", heldout=heldout()).labels}
    train, scored = training_items(), scored_items()
    truth = [i.reference_label for i in scored]
    # x7 (in another eval-tier set) and h1-h5 (held out) are left out of training: six items
    texts = train_label_classifier([i.masked_text for i in train], [i.reference_label for i in train], seed=0)
    expected_text = sum(
        p == t for p, t in zip(texts.predict([i.masked_text for i in scored]), truth, strict=True)
    )
    rated = train_appraisal_baseline(
        [i.appraisals for i in train], [i.reference_label for i in train], seed=0
    )
    expected_rated = sum(
        p == t for p, t in zip(rated.predict([i.appraisals for i in scored]), truth, strict=True)
    )
    for model, expected in ((LABEL_CLASSIFIER, expected_text), (APPRAISAL, expected_rated)):
        row = rows[model]
        assert row.trained_on == 6
        assert (row.accuracy.k, row.accuracy.n) == (expected, 4)
        assert row.accuracy.low is not None and row.abstention is None
    # the appraisal baseline records how its C was chosen (issue 26), the classifier has no note
    assert rows[LABEL_CLASSIFIER].note == "" and rows[APPRAISAL].note == rated.chosen
    assert rows[APPRAISAL].note.startswith("C=")


def test_without_a_held_out_set_there_is_nothing_to_train_the_baselines_on_and_it_says_so(round_):
    result = parser_vs_gold(round_, "parser:clf")
    assert result.held_out == "pe-round-set" and result.scored == 4 and result.without_gold == 8
    for row in result.labels[1:]:
        assert row.accuracy is None and row.trained_on == 0
        assert row.note.startswith("too few training items: 0")


def test_a_held_out_item_without_its_ratings_gives_no_appraisal_figure(round_):
    Item.objects.filter(source="pe-test", source_id="h2").update(appraisals={"suddenness": 3})
    Item.objects.filter(source="pe-test", source_id="t1").update(appraisals={})
    rows = {r.model: r for r in parser_vs_gold(round_, "parser:clf", heldout=heldout()).labels}
    assert rows[APPRAISAL].accuracy is None
    assert rows[APPRAISAL].note.startswith("1 of the 4 scored items lack some of the 21 appraisal ratings")
    assert rows[LABEL_CLASSIFIER].accuracy.n == 4


def test_a_training_item_without_ratings_is_left_out_of_the_appraisal_baseline_and_said(round_):
    Item.objects.filter(source="pe-test", source_id="t1").update(appraisals={})
    row = {r.model: r for r in parser_vs_gold(round_, "parser:clf", heldout=heldout()).labels}[APPRAISAL]
    assert row.trained_on == 5 and row.accuracy.n == 4
    assert row.note.endswith("; 1 training items without all 21 ratings left out")


def test_a_new_prediction_is_seen_through_the_cache(round_):
    assert {s.slot: s.accuracy.k for s in parser_vs_gold(round_, "parser:clf", heldout=heldout()).slots}[
        "others_know"
    ] == 3
    h2 = Item.objects.get(source="pe-test", source_id="h2")
    ParserPrediction.objects.create(item=h2, parser="clf", parser_version="v2", explication=SHAME, legal=True)
    result = parser_vs_gold(round_, "parser:clf", heldout=heldout())
    assert {s.slot: s.accuracy.k for s in result.slots}["others_know"] == 4
    assert result.labels[0].accuracy.k == 2


def test_only_a_parser_pass_is_scored_against_gold(round_):
    with pytest.raises(EvaluationRequestError, match="pass gold is not a parser pass"):
        parser_vs_gold(round_, "gold", heldout=heldout())


# The page, its CSV, the API, the command ------------------------------------------------------


@pytest.fixture
def adjudicator_client(client, adjudicator):
    client.force_login(adjudicator)
    return client


def test_the_page_shows_the_parser_section_for_a_parser_pass(adjudicator_client, round_):
    response = adjudicator_client.get(url(round_, "pass=parser:clf&orders=10&heldout=pe-heldout"))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="parser-vs-gold"' in html
    assert "4 of the 5 items of pe-heldout scored; 1 without resolved gold in round pe-round" in html
    slots = html.split('id="parser-slots-table"')[1].split("</table>")[0]
    assert slots.count("<tr data-slot=") == 12
    others = slots.split('data-slot="others_know"')[1].split("</tr>")[0]
    assert "0.750" in others and "3/4" in others and "[0.19, 0.99]" in others
    experiencer = slots.split('data-slot="experiencer"')[1].split("</tr>")[0]
    assert "undefined" in experiencer and "no variation" in experiencer
    labels = html.split('id="parser-labels-table"')[1].split("</table>")[0]
    legality = labels.split('data-figure="legality"')[1].split("</tr>")[0]
    assert "0.600" in legality and "3/5" in legality
    for model in (PATHWAY, LABEL_CLASSIFIER, APPRAISAL):
        assert f'data-model="{model}" data-figure="accuracy"' in labels
    classifier = labels.split(f'data-model="{LABEL_CLASSIFIER}"')[1].split("</tr>")[0]
    assert "/4</td>" in classifier and '<td class="num">6</td>' in classifier


def test_the_page_has_no_parser_section_for_another_pass(adjudicator_client, round_):
    response = adjudicator_client.get(url(round_, "pass=gold&orders=10&heldout=pe-heldout"))
    assert response.status_code == 200
    assert 'id="parser-vs-gold"' not in response.content.decode()


def test_the_parser_tables_download_as_csv_with_their_evidence(adjudicator_client, round_):
    query = "pass=parser:clf&orders=10&heldout=pe-heldout"
    slots = csv_rows(adjudicator_client.get(csv_url(round_, "parser_slots", query)))
    assert len(slots) == 12
    others = next(r for r in slots if r["slot"] == "others_know")
    assert (others["k"], others["n"], others["value"]) == ("3", "4", "0.7500")
    assert float(others["alpha"]) == pytest.approx(0.0, abs=1e-9)
    assert (others["held_out"], others["tier"], others["items"], others["without_gold"]) == (
        "pe-heldout", "eval", "4", "1",
    )  # fmt: skip
    labels = csv_rows(adjudicator_client.get(csv_url(round_, "parser_labels", query)))
    figures = {(r["model"], r["figure"]): r for r in labels}
    assert (figures[(PATHWAY, "legality")]["k"], figures[(PATHWAY, "legality")]["n"]) == ("3", "5")
    assert figures[(PATHWAY, "selective accuracy")]["n"] == "2"
    assert figures[(LABEL_CLASSIFIER, "accuracy")]["n"] == "4"
    assert figures[(APPRAISAL, "accuracy")]["trained_on"] == "6"
    wrong_pass = adjudicator_client.get(csv_url(round_, "parser_slots", "pass=gold"))
    assert wrong_pass.status_code == 400 and "needs a parser pass" in wrong_pass.content.decode()


def test_a_bad_held_out_set_is_a_400_naming_it(adjudicator_client, round_):
    response = adjudicator_client.get(url(round_, "pass=parser:clf&heldout=nowhere"))
    assert response.status_code == 400
    assert "heldout &#x27;nowhere&#x27;: there is no item set of that name" in response.content.decode()
    api = adjudicator_client.get(f"/api/rounds/{round_.pk}/evaluation/?pass=parser:clf&heldout=nowhere")
    assert api.status_code == 400
    assert api.json()["detail"].startswith("heldout 'nowhere': there is no item set of that name")
    assert "pe-heldout" in api.json()["detail"]


def test_the_api_includes_parser_vs_gold_for_a_parser_pass(adjudicator_client, round_):
    base = f"/api/rounds/{round_.pk}/evaluation/"
    doc = adjudicator_client.get(f"{base}?pass=parser:clf&orders=10&heldout=pe-heldout").json()
    found = doc["parser_vs_gold"]
    assert found["held_out"] == {"name": "pe-heldout", "tier": "eval", "size": 5}
    assert (found["scored"], found["without_gold"]) == (4, 1)
    assert {s["slot"]: s["accuracy"]["k"] for s in found["slots"]}["body"] == 3
    assert found["legality"]["k"] == 3
    assert [r["model"] for r in found["labels"]] == [PATHWAY, LABEL_CLASSIFIER, APPRAISAL]
    assert found["labels"][1]["accuracy"]["n"] == 4
    assert "parser_vs_gold" not in adjudicator_client.get(f"{base}?pass=gold&orders=10").json()


def test_the_command_prints_the_parser_tables(round_, tmp_path):
    out = io.StringIO()
    target = tmp_path / "report.json"
    call_command(
        "evaluate", "--round", "pe-round", "--pass", "parser:clf", "--heldout", "pe-heldout",
        "--orders", "10", "--json", str(target), stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert (
        "Parser against gold [eval, n=4, rule set v1, pass pe-round/parser:clf vs gold on pe-heldout]" in text
    )
    assert "4 of the 5 items of pe-heldout scored; 1 without resolved gold in round pe-round" in text
    assert "  others_know   0.750 [0.19, 0.99]  (3/4)" in text
    assert "undefined: no variation" in text
    assert "legality            0.600 [0.15, 0.95]  (3/5)" in text
    assert "selective accuracy  0.500 [0.01, 0.99]  (1/2)" in text
    assert f"  {LABEL_CLASSIFIER:20}accuracy" in text and "trained on 6" in text
    assert json.loads(target.read_text())["parser_vs_gold"]["scored"] == 4


def test_the_command_says_why_a_baseline_has_no_figure(round_):
    out = io.StringIO()
    call_command("evaluate", "--round", "pe-round", "--pass", "parser:clf", "--orders", "0", stdout=out)
    assert "- (too few training items: 0" in out.getvalue()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pass", "parser:clf", "--heldout", "nowhere"], "heldout 'nowhere': there is no item set"),
        (["--pass", "gold", "--heldout", "pe-heldout"], "parser-vs-gold is for a parser pass, not gold"),
    ],
)
def test_the_command_exits_2_on_a_bad_held_out_set(round_, tmp_path, args, message):
    target = tmp_path / "out.json"
    with pytest.raises(CommandError, match=message) as raised:
        call_command("evaluate", "--round", "pe-round", *args, "--orders", "0", "--json", str(target))
    assert raised.value.returncode == 2
    assert not target.exists()


def trained_classifier(folder, item_ids):
    from nsmcore.parsers.classifier_training import train_classifier

    examples = [
        (f"{TEXTS[label]} ({sid})", {**(GUILT if label == "guilt" else PRIDE)})
        for sid, label in LABELS.items()
    ]
    model = train_classifier(examples[:6], seed=0)
    model.save(folder, meta={"data": {"item_ids": item_ids}})
    return f"classifier:{folder}"


def predict_held(round_, parser):
    for item in Item.objects.filter(source="pe-test", source_id__in=HELD):
        ParserPrediction.objects.create(
            item=item, parser=parser, parser_version="v1", explication=GUILT, legal=True
        )


def test_a_parser_is_not_scored_on_items_it_was_trained_on(round_, tmp_path):
    # trained on the round (h1 and h2 among its gold), then the eval set was drawn over them
    parser = trained_classifier(tmp_path / "m", ["h1", "h2", "t1"])
    predict_held(round_, parser)
    with pytest.raises(
        EvaluationRequestError, match=r"trained on 2 of the 5 held-out items of pe-heldout: h1, h2"
    ):
        parser_vs_gold(round_, f"parser:{parser}", heldout=heldout())
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError, match="trained on 2 of the 5 held-out items"):
        call_command(
            "evaluate",
            "--round",
            round_.name,
            "--pass",
            f"parser:{parser}",
            "--heldout",
            "pe-heldout",
            stdout=out,
            stderr=err,
        )


def test_a_parser_trained_elsewhere_is_scored(round_, tmp_path):
    parser = trained_classifier(tmp_path / "m", ["t1", "t2"])
    predict_held(round_, parser)
    result = parser_vs_gold(round_, f"parser:{parser}", heldout=heldout())
    assert result.scored == 4


def test_the_evaluation_page_refuses_a_parser_on_its_training_items(round_, tmp_path, adjudicator_client):
    parser = trained_classifier(tmp_path / "m", ["h3"])
    predict_held(round_, parser)
    response = adjudicator_client.get(url(round_, f"pass=parser:{parser}&heldout=pe-heldout"))
    assert response.status_code == 400
    assert "trained on 1 of the 5 held-out items of pe-heldout: h3" in response.content.decode()


def _registered(name, trained, predictions):
    """A registered parser trained on ``trained`` items (source pe-test ids, or fillers), with
    its predictions on the held-out items."""
    from registry.services import parser_register

    parser = parser_register(
        name=name, backend="classifier", folder=f"/srv/{name}", card={},
        trained_on=[["pe-test" if sid in LABELS else "other", sid] for sid in trained],
    )  # fmt: skip
    by_id = {i.source_id: i for i in Item.objects.filter(source="pe-test")}
    for sid, explication in predictions.items():
        ParserPrediction.objects.create(
            item=by_id[sid], parser=parser.parser_name, parser_version="v", explication=explication,
            legal=explication is not None and sid != "h3",
        )  # fmt: skip
    return parser


def test_registered_parsers_are_scored_on_the_held_out_set_by_training_size(adjudicator_client, round_):
    from adjudication.evaluation.parser_curve import registered_curve
    from rules.rulesets import active_rule_set

    small = _registered("clf", ["t1", "t2"], PARSER)
    large = _registered("clf-more", [f"f{k}" for k in range(40)], {**GOLD, "h5": None})
    _registered("clf-leaky", ["h1"], GOLD)  # trained on a held-out item: listed, not scored
    curve = registered_curve(round_, heldout(), active_rule_set())
    assert [(p.spec, p.trained, p.scored) for p in curve] == [
        ("clf-leaky@1", 1, 0), ("clf@1", 2, 4), ("clf-more@1", 40, 4),
    ]  # fmt: skip
    assert "trained on 1 of the 5 held-out items" in curve[0].refused and curve[0].routed is None
    # by hand: clf gets others_know, eval_target and body wrong once in 48 slot values, routes h1 only
    assert curve[1].slot_accuracy == pytest.approx(45 / 48) and (curve[1].routed.k, curve[1].routed.n) == (
        1,
        4,
    )
    assert curve[2].slot_accuracy == 1.0 and (curve[2].routed.k, curve[2].routed.n) == (4, 4)
    # selective: over the items the rules routed (issue 26's scale chart); clf abstains on two
    assert (curve[1].selective.k, curve[1].selective.n) == (1, 2)
    assert (curve[2].selective.k, curve[2].selective.n) == (4, 4)
    assert small.trained_count == 2 and large.trained_count == 40
    # the page draws them (a dot per scored parser and figure), the API and the command list them
    html = adjudicator_client.get(
        url(round_, "pass=parser:clf&orders=10&heldout=pe-heldout")
    ).content.decode()
    chart = html.split('id="learning-curve"')[1].split("</svg>")[0]
    assert chart.count("<circle") == 6 and "items trained on" in chart  # per-slot, routed, selective
    table = html.split('id="parser-curve-table"')[1].split("</table>")[0]
    assert 'data-parser="clf-leaky@1"' in table and "not scored" in table
    row = table.split('data-parser="clf-more@1"')[1].split("</tr>")[0]
    assert '<td class="num slots">1.000</td><td class="num routed">1.000</td>' in row
    doc = adjudicator_client.get(
        f"/api/rounds/{round_.pk}/evaluation/?pass=parser:clf&orders=10&heldout=pe-heldout"
    ).json()
    found = [(r["parser"], r["routed_accuracy"], r["selective_accuracy"]) for r in doc["registered_parsers"]]
    assert found == [("clf-leaky@1", None, None), ("clf@1", 0.25, 0.5), ("clf-more@1", 1.0, 1.0)]
    out = io.StringIO()
    call_command("evaluate", "--round", "pe-round", "--pass", "parser:clf", "--heldout", "pe-heldout",
                 "--orders", "10", stdout=out)  # fmt: skip
    text = out.getvalue()
    assert "Registered parsers by training size" in text
    assert "clf-more@1" in text and "slots 1.000  routed 1.000" in text and "not scored: parser" in text
    assert "selective 1.000 [" in text


def test_predictions_read_from_the_other_text_are_not_scored(adjudicator_client, round_):
    """The round shows the masked text; a newer prediction read from the generated text (which
    names the emotion) must not replace the masked one in any figure."""
    from adjudication.evaluation.figures import pass_items
    from adjudication.evaluation.parser_curve import registered_curve
    from rules.rulesets import active_rule_set

    assert round_.text_field == Round.TEXT_MASKED
    before = parser_vs_gold(round_, "parser:clf", heldout=heldout())
    h2 = Item.objects.get(source="pe-test", source_id="h2")
    ParserPrediction.objects.create(
        item=h2,
        parser="clf",
        parser_version="v2",
        explication=SHAME,
        legal=True,
        text_field=Round.TEXT_GENERATED,
    )
    after = parser_vs_gold(round_, "parser:clf", heldout=heldout())
    others = {s.slot: (s.accuracy.k, s.accuracy.n) for s in after.slots}["others_know"]
    assert others == (3, 4) and after.slots == before.slots
    from adjudication.evaluation.figures import pass_named

    items = {i["id"]: i["explication"] for i in pass_items(round_, pass_named(round_, "parser:clf"))}
    assert items["h2"] == GUILT  # the masked reading, not the newer generated one
    registered = _registered("clf-gen", ["t1"], {"h1": GUILT})
    ParserPrediction.objects.filter(parser=registered.parser_name).update(text_field=Round.TEXT_GENERATED)
    assert registered.spec not in [p.spec for p in registered_curve(round_, heldout(), active_rule_set())]


def test_the_page_scores_a_parsers_own_label_distribution_when_its_predictions_carry_one(
    adjudicator_client, round_
):
    page = adjudicator_client.get(url(round_, "pass=parser:clf&orders=10")).content.decode()
    assert "own distribution" not in page  # the fixture's predictions carry none
    raw = json.dumps({"decoding": "joint", "label_mass": {"guilt": 0.6, "shame": 0.4}})
    by_id = {i.source_id: i for i in Item.objects.filter(source="pe-test")}
    for sid, explication in PARSER.items():  # a newer version of the parser, with distributions
        ParserPrediction.objects.create(
            item=by_id[sid], parser="clf", parser_version="v3", explication=explication, raw_output=raw,
            legal=explication is not None and sid != "h3",
        )  # fmt: skip
    page = adjudicator_client.get(url(round_, "pass=parser:clf&orders=10")).content.decode()
    row = page.split("own distribution</td>")[1].split("</tr>")[0]
    assert row.count('<td class="num">') == 6
    doc = adjudicator_client.get(f"/api/rounds/{round_.pk}/evaluation/?pass=parser:clf&orders=10").json()
    schemes = [s["scheme"] for s in doc["distributional"]["scores"]]
    assert schemes[-1] == "parser's own distribution"
