"""The schema fuzzer (issue 17): schemathesis reads the OpenAPI schema the app serves and sends
every operation requests it generates from it, valid and invalid, as an admin, an annotator, an
adjudicator and without credentials, through the real WSGI stack (middleware, CSRF, sessions)
on the test database. Every answer must be no server error, with a status code, content type,
headers and body the schema lists for that operation; and (issue 24) a request the schema allows
is not refused with a 400, nor one it refuses accepted: the schema says what the views accept.

Bounded for CI (a few minutes on 2 cores): few examples per operation (and, for an operation a
role's permission refuses before it reads anything, as few as without credentials), no shrinking, and
deterministic (a fixed seed, Hypothesis derandomized, no example database), so that a run fails
or passes the same way every time. Path parameters mostly name the seeded objects (a round with
submissions and gold, jobs, an export, a proposed rule set), so requests reach the views' work
and not only their 404.

It needs no service beyond the test database, so it runs in `make test` wherever that runs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
import schemathesis
from django.conf import settings
from django.contrib.auth.models import User
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import Client, RequestFactory
from django.urls import resolve
from django.utils.crypto import get_random_string
from rest_framework.exceptions import NotAuthenticated, PermissionDenied
from rest_framework.request import Request
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from adjudication.evaluation.figures import evaluation_passes
from adjudication.gold.services import convention_propose, convention_vote
from adjudication.rule_revisions.services import revision_propose
from annotator.models import Annotation, Assignment, Item, ItemSet, ParserPrediction, Round
from exports.export import export_start
from jobs.models import Job
from jobs.services import job_run
from rules.models import RuleSetVersion
from tests.rules.data import moved

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
# and the strict pair (ST202, ST201): a request the schema allows is accepted, one it refuses is
# refused (issue 24). NSM_FUZZ_LENIENT=1 leaves them out, to look for server errors alone.
STRICT = not os.environ.get("NSM_FUZZ_LENIENT")
if STRICT:
    CHECKS += [positive_data_acceptance, negative_data_rejection]

# Examples per operation and generation mode (valid, invalid). Raise it, or change the seed,
# locally to look harder (`NSM_FUZZ_EXAMPLES=200 NSM_FUZZ_SEED=3`), never in CI.
MAX_EXAMPLES = int(os.environ.get("NSM_FUZZ_EXAMPLES", "6"))
# Without credentials every operation answers 401 or 403 before it reads its input, whatever the
# input: a couple of examples each show that.
ANONYMOUS_EXAMPLES = 2
HTTP_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE"}
SEED = int(os.environ.get("NSM_FUZZ_SEED", "17"))
# How often a path parameter names a seeded object rather than what the fuzzer drew
SEEDED_SHARE = 0.75
# The API's main write, fuzzed harder and always on the user's own assignment (when they have
# one), so that every case reaches the checks and the save instead of a 404.
SUBMIT = "/api/assignments/{id}/annotation/"
PREFILL = "/api/jobs/prefill/"
PROPOSE = "/api/rule-sets/"


@dataclass(frozen=True)
class Credentials:
    """What a client sends to be someone: headers and cookies for ``case.call``."""

    headers: dict[str, str]
    cookies: dict[str, str]


def session_credentials(user: User) -> Credentials:
    """A signed-in browser: the session cookie, and the CSRF token as cookie and header (unsafe
    methods under session authentication need both, as for any script using a session)."""
    client = Client()
    client.force_login(user)
    csrf = get_random_string(32)
    return Credentials(
        headers={"X-CSRFToken": csrf},
        cookies={
            settings.SESSION_COOKIE_NAME: client.cookies[settings.SESSION_COOKIE_NAME].value,
            settings.CSRF_COOKIE_NAME: csrf,
        },
    )


# The one place that says how the fuzzer signs in; a token (`Authorization: Token ...`) is
# another function of the same shape.
SIGN_IN: Callable[[User], Credentials] = session_credentials


@dataclass(frozen=True)
class Seeded:
    """What the seeded database holds, by the resource a path parameter names."""

    rounds: list[int]
    item_sets: list[int]
    items: list[int]
    assignments: list[int]
    jobs: list[int]
    versions: list[str]
    assignments_of: dict[int, list[int]]  # by user id
    # what a query or body names by a string: stored names, passes, a rule set document
    round_names: list[str]
    item_set_names: list[str]
    annotator_names: list[str]
    parsers: list[str]
    evaluation_passes: list[str]
    documents: list[dict]  # not a dictionary's: those hold scalars (steer puts them in)

    def ids(self) -> dict[str, list[int] | list[str]]:
        return {
            "rounds": self.rounds,
            "item_sets": self.item_sets,
            "items": self.items,
            "assignments": self.assignments,
            "jobs": self.jobs,
            "versions": self.versions,
        }

    def names(self) -> dict[str, list]:
        return {
            "round_names": self.round_names,
            "item_set_names": self.item_set_names,
            "annotator_names": self.annotator_names,
            "parsers": self.parsers,
            "evaluation_passes": self.evaluation_passes,
        }


# Where a request names a stored object (an id or a name in its query or body), a schema-valid
# request can still name nothing, and the API rightly answers 400 ("no round named ..."): the
# schema cannot list the database's ids. With the strict checks, such parameters name seeded
# objects in every schema-valid request (a dictionary only offers its schema-valid entries to
# valid requests, and its invalid ones to invalid requests: ids and names are kept apart by
# type, so that an id is never offered as a string where an integer is due). Without them, they
# name seeded objects mostly, and the rest is the fuzzer's.
REFERENCES = {
    "GET /api/assignments/": {"query.round": "round_names"},
    "GET /api/exports/": {"query.round": "rounds"},
    "GET /api/jobs/": {"query.round": "rounds"},
    "GET /api/items/": {"query.item_set": "item_sets"},
    "POST /api/item-sets/": {"body.disjoint_from": "item_sets", "body.item_ids[*]": "items"},
    "POST /api/rounds/": {"body.item_set": "item_sets", "body.annotators[*]": "annotator_names"},
    "POST /api/rounds/{id}/annotators/": {"body.annotator": "annotator_names"},
    "POST /api/conventions/": {"body.round": "rounds"},
    "POST /api/contrasts/{set_id}/pairs/": {"body.item": "items"},
    "POST /api/rule-sets/": {"body.pilot_item_set": "item_set_names"},  # its document: steer()
    "GET /api/rule-sets/{version}/": {"query.pass": "parsers"},
    "GET /api/rounds/{round_id}/evaluation/": {
        "query.pass": "evaluation_passes",
        "query.compare": "evaluation_passes",
        "query.item_set": "item_set_names",
        "query.heldout": "item_set_names",
    },
    **{
        f"POST /api/jobs/{kind}/": {"body.round": "rounds", "body.item_set": "item_sets"}
        for kind in ("export", "prefill", "rawexport", "train", "verify")
    },
}


def refused_operations(api: dict[str, Any], user: User) -> list[str]:
    """The operations (``METHOD /path``) whose permission classes refuse ``user`` whatever the
    request carries: DRF checks them before the view reads a parameter or the body, so each case
    is the same 403, as without credentials, and needs the anonymous budget, not the role's. Read
    from the views themselves (APIView.check_permissions), so that a change of permission changes
    the budget with it."""
    refused = []
    for route, methods in api["paths"].items():
        match = resolve(re.sub(r"\{[^}]+\}", "1", route))
        view_class = getattr(match.func, "cls", None)
        if view_class is None:
            continue
        for method in methods:
            if method.upper() not in HTTP_METHODS:
                continue
            request = Request(RequestFactory().generic(method.upper(), route))
            request.user = user
            view = view_class(**getattr(match.func, "initkwargs", {}))
            view.request, view.args, view.kwargs, view.format_kwarg = request, (), match.kwargs, None
            try:
                view.check_permissions(request)
            except (PermissionDenied, NotAuthenticated):
                refused.append(f"{method.upper()} {route}")
    return refused


def exactly(labels: Iterable[str]) -> str:
    """A regular expression matching each of ``labels`` (``METHOD /path``) and nothing else."""
    return "^(?:" + "|".join(re.escape(label) for label in labels) + ")$"


def fuzz_config(seeded: Seeded, user: User | None, refused: Sequence[str] = ()) -> dict[str, Any]:
    """schemathesis's configuration (what a schemathesis.toml holds) for one user."""

    def mostly(dictionary: str) -> dict[str, Any]:
        return {"dictionary": dictionary, "probability": SEEDED_SHARE}

    own = seeded.assignments_of.get(user.pk, []) if user else []
    submit = [
        {
            "include-path": SUBMIT,
            "parameters": {"path.id": assignment},
            "generation": {"max-examples": 4 * MAX_EXAMPLES},
        }
        for assignment in own[:1]
    ]
    return {
        "seed": SEED,
        "generation": {
            "mode": "all",  # valid requests and invalid ones
            "max-examples": MAX_EXAMPLES if user else ANONYMOUS_EXAMPLES,
            "deterministic": True,
            "no-shrink": True,
            "database": "none",
            # the session cookie and CSRF token come from the credentials, not from the fuzzer
            "with-security-parameters": False,
        },
        "phases": {
            "examples": {"enabled": False},
            "stateful": {"enabled": False},
            # without credentials every operation answers 401 or 403 before it reads a parameter:
            # the coverage phase's boundary values (most of a role's requests) would test nothing
            "coverage": {"enabled": user is not None},
        },
        "dictionaries": {
            name: {"values": values} for name, values in (seeded.ids() | seeded.names()).items()
        },
        "parameters": {
            "path.round_id": mostly("rounds"),
            "path.version": mostly("versions"),
        },
        "operations": [
            # first: where several entries name one operation, the first that sets an option wins
            # one entry for a group of operations, not one each: schemathesis walks the entries
            # for each check of each case (9% of a role's run with one entry each, 6% now)
            *(
                [
                    {
                        "include-name-regex": exactly(refused),
                        "generation": {"max-examples": ANONYMOUS_EXAMPLES},
                        "phases": {"coverage": {"enabled": False}},
                    }
                ]
                if refused
                else []
            ),
            *submit,
            *(
                {
                    "include-name": label,  # method and path (two include- keys would be either)
                    "parameters": {
                        where: {"dictionary": name, "probability": 1.0 if STRICT else SEEDED_SHARE}
                        for where, name in bindings.items()
                    },
                }
                for label, bindings in REFERENCES.items()
            ),
            {
                "include-name-regex": exactly(CONSTRAINTS),
                "checks": {"positive_data_acceptance": {"expected-statuses": ACCEPTED_WITH_400}},
            },
            # the schema itself: two enums, and each answer builds the whole schema (a quarter of
            # the run's time with the full budget)
            {
                "include-path": "/api/schema/",
                "phases": {"coverage": {"enabled": False}},
                "generation": {"max-examples": 3},
            },
            *(
                {"include-path-regex": f"^/api/{name}/", "parameters": {"path.id": mostly(name)}}
                for name in ("items", "assignments", "jobs")
            ),
        ],
    }


@pytest.fixture
def seeded(
    gold_round, one_job_of_each_kind, admin_user, annotator, other_annotator, adjudicator, other_adjudicator,
    settings, tmp_path,
):  # fmt: skip
    """A team's database: a prefilled round with both annotators' submissions and its gold
    resolved, an accepted convention, jobs of every kind, a finished export, a proposed rule set."""
    settings.NSM_EXPORT_DIR = tmp_path / "exports"
    convention = convention_propose(
        user=adjudicator, round_=gold_round, slot="agency", value_a="someone-else", value_b="i", chosen="i",
        rule="Only an explicit other doer makes agency someone-else.",
    )  # fmt: skip
    for user in (adjudicator, other_adjudicator):
        convention_vote(user=user, convention=convention, approve=True)
    export = export_start(user=admin_user, round_=gold_round, verify=False, enqueue=False)
    job_run(export.pk)
    assert Job.objects.get(pk=export.pk).status == Job.Status.DONE
    revision_propose(user=adjudicator, document=moved("no-emotion", 0), note="neutral first")
    assignments = list(Assignment.objects.order_by("pk").values_list("pk", "annotator_id"))
    return Seeded(
        rounds=list(Round.objects.values_list("pk", flat=True)),
        item_sets=list(ItemSet.objects.values_list("pk", flat=True)),
        items=list(Item.objects.values_list("pk", flat=True)),
        assignments=[pk for pk, _ in assignments],
        jobs=list(Job.objects.values_list("pk", flat=True)),
        versions=list(RuleSetVersion.objects.values_list("version", flat=True)),
        round_names=list(Round.objects.values_list("name", flat=True)),
        item_set_names=list(ItemSet.objects.values_list("name", flat=True)),
        annotator_names=[annotator.username, other_annotator.username],
        parsers=list(ParserPrediction.objects.values_list("parser", flat=True).distinct()),
        evaluation_passes=[p.key for p in evaluation_passes(gold_round)],
        documents=[moved("no-emotion", 1), moved("no-emotion", 2)],
        assignments_of={
            owner: [pk for pk, whose in assignments if whose == owner] for _, owner in assignments
        },
    )


@pytest.fixture
def keep_connection() -> Iterator[None]:
    """Django closes the database connection at the end of each request; the test's transaction
    lives on it, so (like Django's own test client) keep it open while the fuzzer calls the app.
    Not while Django's test client runs: it reconnects the handler when it is done."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture(params=["admin", "annotator", "adjudicator", "anonymous"])
def fuzz_user(request, admin_user, annotator, adjudicator) -> User | None:
    """Who the fuzzer is: each role's view of the API (the adjudicator's votes and proposals
    are theirs alone), and nobody (what every operation says to a request without credentials)."""
    users = {"admin": admin_user, "annotator": annotator, "adjudicator": adjudicator, "anonymous": None}
    return users[request.param]


@pytest.fixture
def credentials(fuzz_user) -> Credentials:
    return SIGN_IN(fuzz_user) if fuzz_user else Credentials(headers={}, cookies={})


@pytest.fixture
def api_schema(request, seeded, fuzz_user, credentials, admin_user):
    # schemathesis 4.32 renames the running test after each operation through `_nodeid`, which
    # pytest 9.2 no longer has (it keeps `_id`); give it one, or it stops before the first
    # operation. Reports name each operation through pytest's subtests all the same.
    if not hasattr(request.node, "_nodeid"):
        request.node._nodeid = request.node.nodeid
    client = Client()
    client.force_login(admin_user)  # the schema is the same for everyone who may read it
    served = client.get("/api/schema/", {"format": "json"})
    assert served.status_code == 200, served.content
    api = served.json()
    refused = refused_operations(api, fuzz_user) if fuzz_user else []
    config = schemathesis.Config.from_dict(fuzz_config(seeded, fuzz_user, refused))
    schema = schemathesis.openapi.from_dict(api, config=config)
    schema.app = WSGIHandler()  # what from_wsgi does; it cannot send the session cookie
    return schema


schema = schemathesis.pytest.from_fixture("api_schema")


# Where a schema-valid request can still be refused for what no schema says (how fields go
# together, a file's content), and the 400 naming it is right: positive_data_acceptance also
# expects a 400 there, and only there. Everything else a 400 refuses must be in the schema.
CONSTRAINTS = {
    "POST /api/imports/": "the file's content: UTF-8 rows of TSV, CSV or JSONL with the fields",
    "POST /api/conventions/": "value_a, value_b and chosen are values of the slot named",
    "POST /api/conventions/{convention_id}/revise/": "chosen is one of the convention's two values",
    "POST /api/jobs/export/": "verify (the default) needs a usable NLI model on this server",
    "POST /api/item-sets/": "item_ids or a draw (seed, with per_stratum or size), not both",
    "POST /api/jobs/prefill/": "one of item_set or round",
    "POST /api/jobs/train/": "one of item_set or round; passes of that round",
    "POST /api/jobs/verify/": "one of item_set or round",
    "POST /api/rounds/": "a pool of at least annotators_per_item annotators",
    "GET /api/rounds/{round_id}/conflicts/": "a and b are values of the slot named; q has a word",
    "GET /api/items/": "q, a search, has a word of letters or digits",
    "GET /api/rounds/{round_id}/gold/": "q, a search, has a word of letters or digits",
    "POST /api/contrasts/{set_id}/pairs/": (
        "the item exists; a target's value differs from the item's gold, and from agrees with gold or "
        "is given without it; expected is an emotion of the active rule set; an invariance pair has no "
        "target and no expected label, a flip pair has a target"
    ),
    "GET /api/rounds/{round_id}/evaluation/": "compare is not pass; swap's emotions differ and are rules",
    "GET /api/rounds/{round_id}/flows/": "a and b are two different passes of the round",
    "POST /api/exports/replay/": "an EmoExpl archive (the zip an export writes) this database can date",
    "POST /api/items/{id}/comments/": "round is a round of the item; reply_to a comment on it the user reads",
    "GET /api/profiles/": "round names a human round with submitted work",
    "GET /api/profiles/{username}/": "round names a human round with submitted work",
    "PATCH /api/rounds/{round_id}/quality/": "control_source names another round of the tool",
    "POST /api/rounds/{round_id}/quality/controls/": "control_source names another round with resolved gold",
    "PUT /api/rounds/{round_id}/queue/": "parser has predictions for the round's items",
    "POST /api/rounds/{round_id}/queue/retrain/": "the round has a queue and resolved gold",
    "POST /api/rounds/{round_id}/queue/recompute/": "the round has a queue",
    "POST /api/rounds/{round_id}/queue/simulate/": "the round has enough resolved gold with reference labels",
}
ACCEPTED_WITH_400 = ["2xx", "3xx", "400", "401", "403", "404", "409", "429", "5xx"]


def checks_for(case) -> list:
    """The checks, but where a case of the coverage phase names stored objects: its boundary
    values (0, "") name nothing, and the dictionaries do not reach that phase, so the 400 that
    says so is right; its invalid requests are still checked."""
    label = f"{case.method.upper()} {case.operation.path}"
    if case.meta is not None and case.meta.phase.name == "coverage" and label in REFERENCES:
        return [check for check in CHECKS if check is not positive_data_acceptance]
    return CHECKS


def steer(case, seeded: Seeded, own: list[int]) -> None:
    """Steer half the schema-valid bodies of three writes past their first refusal to the work
    behind it: an annotation save carries the version the user loaded (the save, 200, and not
    only the stale-save 409); a prefill names one seeded item set and no adapter folder (the
    job's creation, 201, or the same job active, 409; not only 400); a proposal carries a rule
    set document (every one: the schema cannot describe one). Only valid requests: steering an
    invalid one could take out what made it invalid."""
    body = case.body
    if case.meta is None or not case.meta.generation.mode.is_positive or not isinstance(body, dict):
        return
    path = case.operation.path
    drawn = body.get("base_version")
    if path == SUBMIT and own and type(drawn) is int and drawn % 2 == 0:
        version = Annotation.objects.filter(assignment_id=own[0]).values_list("version", flat=True)
        case.body = {**body, "base_version": version.first() or 0}
        return
    drawn = body.get("item_set")
    if path == PREFILL and type(drawn) is int and drawn % 2 == 0:
        chosen = seeded.item_sets[drawn // 2 % len(seeded.item_sets)]
        case.body = {k: v for k, v in body.items() if k not in ("round", "adapter")} | {"item_set": chosen}
        return
    if path == PROPOSE and case.method.upper() == "POST":
        drawn = len(repr(body))  # deterministic, unlike hash()
        case.body = {**body, "document": seeded.documents[drawn % len(seeded.documents)]}


@schema.parametrize()
def test_every_operation_answers_as_the_schema_says(case, credentials, keep_connection, seeded, fuzz_user):
    steer(case, seeded, seeded.assignments_of.get(fuzz_user.pk, []) if fuzz_user else [])
    case.call_and_validate(headers=credentials.headers, cookies=credentials.cookies, checks=checks_for(case))


@pytest.mark.django_db
def test_the_operations_a_role_is_refused_are_read_from_the_views(admin_user, annotator, adjudicator):
    client = Client()
    client.force_login(admin_user)
    api = client.get("/api/schema/", {"format": "json"}).json()
    for_annotator = refused_operations(api, annotator)
    assert "POST /api/rounds/" in for_annotator and "POST /api/jobs/export/" in for_annotator
    assert SUBMIT not in {label.split(" ", 1)[1] for label in for_annotator}
    assert "GET /api/assignments/" not in for_annotator
    # votes are the adjudicators' own: refused to an admin, as the API says
    assert set(refused_operations(api, admin_user)) < set(for_annotator)
    for_adjudicator = refused_operations(api, adjudicator)
    assert "POST /api/rounds/" in for_adjudicator and "POST /api/conventions/" not in for_adjudicator
