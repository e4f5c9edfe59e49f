"""An empty instance shows its admin the steps to a first round (import, item set, round,
annotators), each with its link, the next one marked, and the checklist gone once all are done."""

import re

import pytest
from django.urls import reverse

from annotator.models import Item
from annotator.sampling import item_set_from_items

pytestmark = pytest.mark.django_db


def steps(page: str) -> dict[str, str]:
    found = re.findall(r'<li class="step (done|next|todo)" data-step="(\w+)"', page)
    return {name: state for state, name in found}


def test_an_empty_instance_leads_its_admin_step_by_step(client, admin_user, annotator):
    client.force_login(admin_user)
    page = client.get(reverse("home")).content.decode()
    assert steps(page) == {"import": "next", "item_set": "todo", "round": "todo", "annotators": "done"}
    assert reverse("manage_import") in page
    items = [Item.objects.create(source_id=f"f{k}", text="I won.", reference_label="joy") for k in range(3)]
    page = client.get(reverse("home")).content.decode()
    assert steps(page)["import"] == "done" and steps(page)["item_set"] == "next"
    item_set_from_items(name="first", items=items)
    assert steps(client.get(reverse("home")).content.decode())["round"] == "next"


def test_no_checklist_for_non_admins_or_once_a_round_exists(client, annotator, admin_user, prefilled_round):
    client.force_login(annotator)
    assert 'id="first-run"' not in client.get(reverse("home")).content.decode()
    client.force_login(admin_user)
    assert 'id="first-run"' not in client.get(reverse("home")).content.decode()
