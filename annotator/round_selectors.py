"""Reads for the admin's round pages: progress per round and per annotator, which parsers can
prefill an item set, and which annotators already saw a set's items prefilled."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, User
from django.db.models import Count, Q, QuerySet
from django.utils.translation import gettext as _

from annotator.models import Assignment, Item, ItemSet, ParserPrediction, Round
from annotator.roles import ANNOTATOR
from annotator.selectors import Progress, read_from


def prefilled_seen(*, annotator_ids: Iterable[int], item_ids: Iterable[int]) -> set[tuple[int, int]]:
    """(annotator id, item id) pairs where the annotator has an assignment for the item in a
    prefilled round: they have seen the parser's explication of that item."""
    return set(
        Assignment.objects.filter(
            annotator_id__in=list(annotator_ids),
            # a queryset stays a subquery: an item set's thousands of ids need not travel twice
            item_id__in=item_ids if isinstance(item_ids, QuerySet) else list(item_ids),
            round__mode=Round.Mode.PREFILLED,
        ).values_list("annotator_id", "item_id")
    )


def prefill_overlap(*, item_set: ItemSet, annotators: Iterable[AbstractBaseUser]) -> dict[str, int]:
    """{username: how many of the set's items they saw prefilled}, only those with any, by name.
    A blind round over such items is no longer a clean control for anchoring."""
    names = {a.pk: a.get_username() for a in annotators}
    item_ids = item_set.members.values_list("item_id", flat=True)
    seen = prefilled_seen(annotator_ids=names, item_ids=item_ids)
    counts = Counter(names[annotator_id] for annotator_id, _ in seen)
    return dict(sorted(counts.items()))


def blind_pending(*, item_set: ItemSet, annotators: Iterable[AbstractBaseUser]) -> dict[str, int]:
    """{username: how many of the set's items they have still to do in a blind round}, only those
    with any, by name. A prefilled round over them would show the parser's explication of items
    the blind control arm still waits for."""
    names = {a.pk: a.get_username() for a in annotators}
    pending = Assignment.objects.filter(
        annotator_id__in=list(names),
        item_id__in=item_set.members.values_list("item_id", flat=True),
        round__mode=Round.Mode.BLIND,
    ).exclude(status=Assignment.Status.DONE)
    counts = Counter(names[annotator_id] for annotator_id in pending.values_list("annotator_id", flat=True))
    return dict(sorted(counts.items()))


def annotator_choices() -> QuerySet[User]:
    """Active users with the annotator role: who a round's pool is picked from."""
    return User.objects.filter(is_active=True, groups__name=ANNOTATOR).order_by("username").distinct()


FIELD_NAMES = dict(Round.TEXT_FIELDS)


@dataclass(frozen=True)
class ParserCoverage:
    parser: str
    covered: int
    size: int

    def label(self) -> str:
        return _("%(parser)s (legal predictions for %(covered)s of %(size)s items)") % {
            "parser": self.parser,
            "covered": self.covered,
            "size": self.size,
        }


def parser_coverage(item_set: ItemSet, text_field: str = "") -> list[ParserCoverage]:
    """Parsers with legal predictions for any of the set's items, with how many items each covers;
    with ``text_field``, only predictions read from that field (or from an unrecorded one): those
    a round showing that field prefills from."""
    size = item_set.members.count()
    rows = read_from(ParserPrediction.objects.filter(item__item_sets=item_set, legal=True), text_field)
    rows = rows.values("parser").annotate(covered=Count("item", distinct=True)).order_by("-covered", "parser")
    return [ParserCoverage(r["parser"], r["covered"], size) for r in rows]


def parsers_of_other_fields(item_set: ItemSet, text_field: str) -> dict[str, list[str]]:
    """{parser: the fields it read} for parsers whose legal predictions for the set were all read
    from another text field than ``text_field``: a round showing ``text_field`` gets no prefill
    from them (a prefill read from the generated text names the emotion the masked text hides)."""
    fields: dict[str, set[str]] = {}
    rows = ParserPrediction.objects.filter(item__item_sets=item_set, legal=True).values_list(
        "parser", "text_field"
    )
    for parser, field in rows.distinct():
        fields.setdefault(parser, set()).add(field)
    return {
        parser: sorted(read)
        for parser, read in sorted(fields.items())
        if text_field not in read and "" not in read
    }


def field_mismatch_problem(item_set: ItemSet, parser: str, text_field: str) -> str | None:
    """Why ``parser`` cannot prefill a round over the set showing ``text_field``: its predictions
    were read from another field; None when it has some read from this one (or unrecorded)."""
    other = parsers_of_other_fields(item_set, text_field).get(parser)
    if not other:
        return None
    read = _(" and ").join(f"{f!r} ({FIELD_NAMES.get(f, f)})" for f in other)
    matching = ", ".join(c.parser for c in parser_coverage(item_set, text_field)) or _("none yet")
    return _(
        "%(parser)s's predictions for this set read %(read)s, but the round shows %(field)s "
        "(%(field_name)s): its annotators would be prefilled from another text. Prefill the set reading "
        "%(field)s first (a prefill job), or choose a parser that read it: %(matching)s"
    ) % {
        "parser": parser,
        "read": read,
        "field": repr(text_field),
        "field_name": FIELD_NAMES.get(text_field, text_field),
        "matching": matching,
    }


@dataclass(frozen=True)
class RoundRow:
    round: Round
    progress: Progress
    pool_size: int


def rounds_with_progress() -> list[RoundRow]:
    """Every round, newest first, with its assignment counts, in one query."""
    rounds = (
        Round.objects.select_related("item_set")
        .annotate(
            n_assigned=Count("assignments", filter=Q(assignments__control=False), distinct=True),
            n_done=Count(
                "assignments", filter=Q(assignments__status="done", assignments__control=False), distinct=True
            ),
            n_skipped=Count(
                "assignments",
                filter=Q(assignments__status="skipped", assignments__control=False),
                distinct=True,
            ),
            n_pool=Count("pool", distinct=True),
        )
        .order_by("-created_at", "-pk")
    )
    return [RoundRow(r, Progress(r.n_assigned, r.n_done, r.n_skipped), r.n_pool) for r in rounds]


@dataclass(frozen=True)
class AnnotatorRow:
    user: User
    progress: Progress
    in_pool: bool


def round_annotators(round_: Round) -> list[AnnotatorRow]:
    """Each annotator with work in the round or in its pool, with their done / skipped / pending."""
    counts = {
        row["annotator"]: row
        for row in Assignment.objects.filter(round=round_, control=False)
        .values("annotator")
        .annotate(
            assigned=Count("pk"),
            done=Count("pk", filter=Q(status="done")),
            skipped=Count("pk", filter=Q(status="skipped")),
        )
    }
    pool = set(round_.pool.values_list("pk", flat=True))
    users = User.objects.filter(pk__in=pool | set(counts)).order_by("username")
    empty = {"assigned": 0, "done": 0, "skipped": 0}
    return [
        AnnotatorRow(
            u,
            Progress(*(counts.get(u.pk, empty)[k] for k in ("assigned", "done", "skipped"))),
            u.pk in pool,
        )
        for u in users
    ]


@dataclass(frozen=True)
class Step:
    name: str
    title: str
    url_name: str
    done: bool
    state: str = "todo"  # done, next (the first not done) or todo


def first_run_steps() -> list[Step] | None:
    """The steps an empty instance needs before its first round can be annotated, in order, with
    the first one not done marked next; None once a round exists (the checklist is gone)."""
    if Round.objects.exists():
        return None
    raw = [
        ("import", _("Import items (a TSV, CSV or JSONL file)"), "manage_import", Item.objects.exists()),
        ("item_set", _("Draw an item set from them"), "manage_item_sets", ItemSet.objects.exists()),
        ("round", _("Create a round over the set"), "manage_round_new", False),
        ("annotators", _("Give people the annotator role"), "manage_users", annotator_choices().exists()),
    ]
    first_open = next((step[0] for step in raw if not step[3]), None)
    return [
        Step(name, title, url_name, done, "done" if done else "next" if name == first_open else "todo")
        for name, title, url_name, done in raw
    ]
