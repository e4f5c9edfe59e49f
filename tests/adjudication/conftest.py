import json
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from rest_framework.test import APIClient

from adjudication.gold.services import convention_propose, convention_vote


@pytest.fixture
def accepted(submitted, adjudicator, other_adjudicator):
    """An accepted convention on the submitted round: agency i over someone-else."""
    convention = convention_propose(
        user=adjudicator, round_=submitted, slot="agency", value_a="someone-else", value_b="i", chosen="i",
        rule="Only an explicit other doer makes agency someone-else.",
    )  # fmt: skip
    for user in (adjudicator, other_adjudicator):
        convention = convention_vote(user=user, convention=convention, approve=True)
    return convention


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(schema))


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def all_but_bobs_last(prefilled_round, annotator, other_annotator):
    """The prefilled round with every annotation in but bob's of item t4-0: three items ready for
    gold, one waiting."""
    from annotator.models import Assignment
    from annotator.services import annotation_submit
    from tests.explications import PRED

    for user in (annotator, other_annotator):
        for a in Assignment.objects.filter(round=prefilled_round, annotator=user).order_by("item_id"):
            if user == other_annotator and a.item.source_id == "t4-0":
                continue  # bob has not done this one yet
            annotation_submit(assignment=a, user=user, values=dict(PRED), base_version=0)
    return prefilled_round
