import pytest

from adjudication.gold import convention_propose, convention_vote


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
