from collections import Counter

import pytest
from django.core.management import call_command

from annotator.models import Assignment, ItemSet
from annotator.sampling import DrawError, draw_ids, item_set_draw
from annotator.services import RoundError, round_create
from tests.factories import make_items

CANDIDATES = [(i, ["joy", "anger", "fear"][i % 3]) for i in range(60)]


def test_draw_is_deterministic_for_a_seed_and_stratified():
    a = draw_ids(CANDIDATES, seed=7, per_stratum=5)
    assert a == draw_ids(list(reversed(CANDIDATES)), seed=7, per_stratum=5)
    assert a != draw_ids(CANDIDATES, seed=8, per_stratum=5)
    labels = dict(CANDIDATES)
    assert Counter(labels[i] for i in a) == {"joy": 5, "anger": 5, "fear": 5}
    assert len(set(a)) == 15


def test_draw_errors_name_the_short_label():
    with pytest.raises(DrawError, match="not enough items for 25 per label: anger has 20"):
        draw_ids(CANDIDATES, seed=1, per_stratum=25)
    with pytest.raises(DrawError, match="asked for 61 items but only 60"):
        draw_ids(CANDIDATES, seed=1, size=61)


@pytest.mark.django_db
def test_item_sets_record_their_draw_and_can_be_disjoint_from_a_held_out_set(admin_user):
    make_items(n_copies=5)  # 20 items, 5 per label
    held_out = item_set_draw(name="eval", seed=1, per_stratum=1, tier=ItemSet.Tier.EVAL)
    train = item_set_draw(name="silver", seed=2, per_stratum=4, disjoint_from=held_out, created_by=admin_user)
    assert (train.seed, train.per_stratum, train.stratify_by, train.size) == (2, 4, "reference_label", 16)
    assert train.disjoint_from == held_out and train.created_by == admin_user
    assert not set(held_out.items.values_list("id", flat=True)) & set(
        train.items.values_list("id", flat=True)
    )
    with pytest.raises(DrawError, match="already exists"):
        item_set_draw(name="eval", seed=1, size=2)


@pytest.mark.django_db
def test_draw_item_set_command(capsys):
    make_items(n_copies=3)
    call_command("draw_item_set", "s12", "--seed", "3", "--per-label", "2", "--tier", "S")
    assert "s12: 8 items (seed 3)" in capsys.readouterr().out


@pytest.mark.django_db
def test_round_assigns_each_item_to_k_annotators_balanced(annotator, other_annotator, adjudicator):
    items = make_items(n_copies=3)
    item_set = item_set_draw(name="all", seed=1, size=12)
    round_ = round_create(name="r", item_set=item_set, annotators=[annotator, other_annotator, adjudicator])
    per_item = Counter(Assignment.objects.filter(round=round_).values_list("item_id", flat=True))
    assert set(per_item.values()) == {2} and len(per_item) == len(items)
    per_annotator = Counter(Assignment.objects.filter(round=round_).values_list("annotator_id", flat=True))
    assert sorted(per_annotator.values()) == [8, 8, 8]
    positions = list(
        Assignment.objects.filter(round=round_, annotator=annotator).values_list("position", flat=True)
    )
    assert sorted(positions) == list(range(8))


@pytest.mark.django_db
def test_round_errors(annotator, items):
    item_set = item_set_draw(name="x", seed=1, size=2)
    with pytest.raises(RoundError, match="2 annotators per item but the pool has 1"):
        round_create(name="r", item_set=item_set, annotators=[annotator])
    with pytest.raises(RoundError, match="needs the name of the parser"):
        round_create(
            name="r", item_set=item_set, annotators=[annotator], annotators_per_item=1, mode="prefilled"
        )


@pytest.mark.django_db
def test_a_silver_round_may_start_without_a_pool_but_a_human_one_may_not(items):
    item_set = item_set_draw(name="s", seed=1, size=4)
    silver = round_create(name="silver", item_set=item_set, annotators=[], pass_kind="silver")
    assert silver.assignments.count() == 0
    with pytest.raises(RoundError, match="pool has 0"):
        round_create(name="human", item_set=item_set, annotators=[])


@pytest.mark.django_db
def test_a_draw_in_the_browser_redirects_with_the_report_once_and_an_empty_form(client, admin_user):
    import re

    from django.urls import reverse

    make_items(n_copies=3)
    client.force_login(admin_user)
    url = reverse("manage_item_sets")
    response = client.post(url, {"name": "s8", "tier": "S", "seed": 3, "per_stratum": 2})
    assert response.status_code == 302 and response["Location"] == url
    assert ItemSet.objects.get(name="s8").size == 8
    body = client.get(url).content.decode()
    assert re.search(r'<li class="draw-report success">Drew s8: 8 items \(seed 3\)\.</li>', body)
    assert 'name="name" value=' not in body  # the form is empty again
    assert "draw-report" not in client.get(url).content.decode()  # shown once
    assert ItemSet.objects.count() == 1


@pytest.mark.django_db
def test_the_item_sets_page_says_per_label_shows_tiers_and_links_to_a_new_round(client, admin_user):
    import re

    from django.urls import reverse

    make_items(n_copies=3)
    item_set_draw(name="s8", seed=3, per_stratum=2, tier=ItemSet.Tier.SILVER)
    client.force_login(admin_user)
    body = client.get(reverse("manage_item_sets")).content.decode()
    row = re.search(r'<tr data-item-set="s8">.*?</tr>', body, re.S).group(0)
    assert "2 per label" in row and "reference_label" not in row
    assert "<td>S: silver model-annotator pass</td>" in row
    new_round = f"{reverse('manage_round_new')}?item_set={ItemSet.objects.get(name='s8').pk}"
    assert f'href="{new_round}"' in row
    assert "only items of this source; empty: all" in body
