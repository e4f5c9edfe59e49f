"""Entailment judgements by adjudicators and the verifier's calibration against them, on the
judgements of a tiny NLI model built here: figures checked against their pairwise definitions."""

import itertools
import re

import pytest

from adjudication.models import GoldConstrual
from annotator.models import Item
from jobs.services import job_run
from nsmcore.render import render
from nsmcore.schema import Explication
from nsmcore.tiny import build_tiny_nli
from nsmcore.verifier import text_key
from verification.calibration import calibration_report, gold_lines
from verification.models import EntailmentJudgement, LineVerification
from verification.verify import job_verify_start

pytest.importorskip("torch", reason="torch is in requirements.txt; this guards a partial install")


@pytest.fixture(scope="module")
def nli_path(tmp_path_factory):
    return str(
        build_tiny_nli(tmp_path_factory.mktemp("nli"), labels=("entailment", "neutral", "contradiction"))
    )


@pytest.fixture
def verified(gold_round, admin_user, nli_path, settings):
    settings.NSM_VERIFIER_DEVICE = "cpu"
    job = job_verify_start(user=admin_user, round_=gold_round, model=nli_path, enqueue=False)
    job_run(job.pk)
    return gold_round, LineVerification.objects.values_list("model", flat=True).distinct().get()


def probabilities(round_, model):
    """(item, line) -> p(entailment), for every gold line."""
    out = {}
    for item_id, lines in gold_lines(round_).items():
        sha = text_key(Item.objects.get(pk=item_id).text_for(round_.text_field))
        for line in lines:
            out[(item_id, line.text)] = LineVerification.objects.get(
                model=model, text_sha=sha, line=line.text
            ).p_entailment
    return out


def mark(client, round_, item_id, line, answer):
    return client.post(
        f"/adjudicate/rounds/{round_.pk}/judgements/{item_id}/",
        {"line": line, "entailed": answer},
        HTTP_HX_REQUEST="true",
    )


def pairwise_auc(pairs):
    pos = [p for p, y in pairs if y]
    neg = [p for p, y in pairs if not y]
    return sum(1.0 if a > b else 0.5 if a == b else 0 for a, b in itertools.product(pos, neg)) / (
        len(pos) * len(neg)
    )


def test_adjudicators_mark_each_gold_line(client, gold_round, adjudicator, annotator):
    client.force_login(adjudicator)
    page = client.get(f"/adjudicate/rounds/{gold_round.pk}/judgements/").content.decode()
    lines = gold_lines(gold_round)
    total = sum(len(v) for v in lines.values())
    assert f"<strong>0 / {total}</strong>" in page
    item_id, item_lines = next(iter(lines.items()))
    assert item_lines[0].text in page and "p(entailment)" not in page  # blind to the verifier
    response = mark(client, gold_round, item_id, item_lines[0].text, "yes")
    assert response.status_code == 200
    row = response.content.decode()
    assert row.startswith('<li class="judgement yes"') and 'aria-pressed="true"' in row
    mark(client, gold_round, item_id, item_lines[0].text, "no")  # a change of mind replaces it
    judgement = EntailmentJudgement.objects.get()
    assert (judgement.entailed, judgement.slot, judgement.judge) == (False, item_lines[0].slot, adjudicator)
    assert judgement.text_sha == text_key(Item.objects.get(pk=item_id).text_for(gold_round.text_field))
    assert (
        f"<strong>1 / {total}</strong>"
        in client.get(f"/adjudicate/rounds/{gold_round.pk}/judgements/").content.decode()
    )

    refused = mark(client, gold_round, item_id, "someone did something very bad", "yes")
    assert refused.status_code == 400 and "is not one of the gold lines" in refused.content.decode()
    assert mark(client, gold_round, item_id, item_lines[0].text, "maybe").status_code == 400
    client.force_login(annotator)
    assert mark(client, gold_round, item_id, item_lines[0].text, "yes").status_code == 403
    assert EntailmentJudgement.objects.count() == 1


def test_calibration_figures_follow_their_definitions(client, verified, adjudicator, other_adjudicator):
    round_, model = verified
    p = probabilities(round_, model)
    ordered = sorted(p.items(), key=lambda kv: kv[1])
    cut = ordered[len(ordered) // 2][1]
    client.force_login(adjudicator)
    for (item_id, line), prob in p.items():
        mark(client, round_, item_id, line, "yes" if prob >= cut else "no")
    report = calibration_report(round_, model)
    assert report.judged_lines == len(p) and report.ties == 0 and report.unverified == 0
    assert report.auc == 1.0  # judgements that follow the probabilities are separated perfectly
    assert report.best.threshold == cut and report.best.accuracy == 1.0

    # a second judge disagrees on the two lowest lines: one becomes a tie, left out
    client.force_login(other_adjudicator)
    (low_key, _), (next_key, _) = ordered[0], ordered[1]
    mark(client, round_, *low_key, "yes")
    report = calibration_report(round_, model)
    assert report.ties == 1 and report.judged_lines == len(p) - 1 and report.judges == 2
    # a third opinion flips the second-lowest line to "entailed": no longer separable
    client.force_login(adjudicator)
    mark(client, round_, *next_key, "yes")
    expected = [(prob, prob >= cut or key == next_key) for key, prob in p.items() if key != low_key]
    report = calibration_report(round_, model)
    assert report.auc == pytest.approx(pairwise_auc(expected)) and report.auc < 1.0

    # item scores at the threshold in use, and how well they tell a correct routed label
    scores = {}
    for item_id, lines in gold_lines(round_).items():
        scores[item_id] = sum(p[(item_id, line.text)] >= 0.5 for line in lines) / len(lines)
    assert report.item_scores == sorted(scores.values()) and sum(report.histogram) == 4
    routed = {
        c.gold.item_id: c.label == c.gold.item.reference_label
        for c in GoldConstrual.objects.filter(index=1, abstention="").select_related("gold__item")
    }
    assert report.routed_items == len(routed) and report.routed_correct == sum(routed.values())
    both = [(scores[i], ok) for i, ok in routed.items()]
    if {ok for _, ok in both} == {True, False}:
        assert report.label_auc == pytest.approx(pairwise_auc(both))
    else:
        assert report.label_auc is None  # one class only: undefined, never 0.5

    page = client.get(f"/adjudicate/rounds/{round_.pk}/calibration/").content.decode()
    assert 'id="roc-chart"' in page and 'id="item-score-histogram"' in page
    assert f"{report.auc:.3f}" in page and model in page
    api = client.get(f"/api/rounds/{round_.pk}/calibration/").json()
    assert api["roc_auc"] == report.auc and api["best_threshold"]["threshold"] == report.best.threshold
    assert api["item_score_histogram"]["counts"] == report.histogram
    assert client.get(f"/api/rounds/{round_.pk}/calibration/?model=other@x").status_code == 404
    refused = client.get(f"/adjudicate/rounds/{round_.pk}/calibration/?model=other@x")
    assert refused.status_code == 400 and "model: Select a valid choice. other@x" in refused.content.decode()


def test_before_any_verification_the_report_says_what_to_do(client, gold_round, admin_user, annotator):
    client.force_login(admin_user)
    page = client.get(f"/adjudicate/rounds/{gold_round.pk}/calibration/").content.decode()
    assert 'id="calibration-empty"' in page and "run a verification job" in page
    client.force_login(annotator)
    assert client.get(f"/adjudicate/rounds/{gold_round.pk}/calibration/").status_code == 403


def test_marking_a_line_updates_the_counter_in_the_same_response(client, gold_round, adjudicator):
    client.force_login(adjudicator)
    total = sum(len(v) for v in gold_lines(gold_round).values())
    item_id, item_lines = next(iter(gold_lines(gold_round).items()))
    body = mark(client, gold_round, item_id, item_lines[0].text, "yes").content.decode()
    assert body.startswith('<li class="judgement yes"')
    assert (
        '<p id="judgement-progress" hx-swap-oob="true">' in body and f"<strong>1 / {total}</strong>" in body
    )
    # a page without JavaScript posts the form and comes back to the page, counter and all
    plain = client.post(
        f"/adjudicate/rounds/{gold_round.pk}/judgements/{item_id}/",
        {"line": item_lines[1].text, "entailed": "no", "page": "1"},
    )
    assert plain.status_code == 302 and plain["Location"].endswith(
        f"/rounds/{gold_round.pk}/judgements/?page=1"
    )
    assert EntailmentJudgement.objects.count() == 2


def test_lines_of_a_second_construal_say_which_construal(client, gold_round, adjudicator):
    client.force_login(adjudicator)
    gold = GoldConstrual.objects.filter(gold__round=gold_round, index=2).get().gold
    first, second = (
        {line.text for line in render(Explication.from_dict(c.slots))} for c in gold.construals.all()
    )
    page = client.get(f"/adjudicate/rounds/{gold_round.pk}/judgements/").content.decode()
    section = re.search(rf'data-item="{gold.item.source_id}">(.*?)</section>', page, re.S).group(1)
    for line in second - first:
        assert re.search(
            rf'data-line="{re.escape(line)}">\s*<span class="tag construal">construal 2</span>', section
        )
    for line in first - second:
        assert re.search(
            rf'data-line="{re.escape(line)}">\s*<span class="tag construal">construal 1</span>', section
        )
    assert section.count('class="tag construal"') == len(first ^ second) > 0
    one = re.search(r'data-item="t1-0">(.*?)</section>', page, re.S).group(1)
    assert "construal" not in one
