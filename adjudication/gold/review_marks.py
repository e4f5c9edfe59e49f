"""Review marks on gold records: the reasons a record must be looked at again (an annotator
saved again after it was built, a convention it follows is being revised), kept as parts of one
reason so that taking one back (a revision withdrawn or rejected) leaves the others; and which
records' annotations changed since they were built (adjudication.gold.gold_sync marks them)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.cache import cache

from adjudication.agreement.analysis import round_signature
from adjudication.models import Convention, GoldItem
from adjudication.queries import rows_update
from annotator.models import Annotation, Assignment, Round
from annotator.versions import round_version


def revision_reason(revision: Convention) -> str:
    return f"C{revision.number} revised to v{revision.version}"


def unmark_revision(revision: Convention) -> None:
    """Take back the review marks a proposed revision set (it was withdrawn or rejected: the
    accepted version stands). Records marked for other reasons as well keep those."""
    part = revision_reason(revision)
    marked = (
        GoldItem.objects.select_for_update()
        .filter(round=revision.round_id, needs_review=True, review_reason__contains=part)
        .values_list("pk", "review_reason")
    )
    updated = []
    for pk, reason in marked:
        parts = reason_parts(reason)
        if part in parts:
            rest = [p for p in parts if p != part]
            updated.append(GoldItem(pk=pk, needs_review=bool(rest), review_reason=joined_reason(rest)))
    rows_update(GoldItem, ["needs_review", "review_reason"], updated)


def synced_key(round_id: int) -> str:
    return f"nsm:gold-synced:{round_id}"


def gold_revised(round_: Round) -> int:
    """How many gold records of the round ``gold_sync`` would mark for review now, their
    annotations revised since it last checked them. It only reads (a page shows it with the
    button that syncs), once per version of the round's annotations; none once ``gold_sync`` has
    seen this version."""
    version = round_version(round_.pk, round_signature)
    if cache.get(synced_key(round_.pk)) == version:
        return 0
    key = revised_key(round_.pk)
    found = cache.get(key)
    if found is not None and found[0] == version:
        return found[1]
    seen_now = annotation_versions(round_)
    markers = GoldItem.objects.filter(round=round_).values_list("item_id", "annotations_seen")
    count = sum(1 for item_id, before in markers if annotations_changed(seen_now, item_id, before))
    cache.set(key, (version, count), timeout=None)
    return count


def revised_key(round_id: int) -> str:
    return f"nsm:gold-revised:{round_id}"


def annotations_changed(seen_now: dict[int, dict[str, int]], item_id: int, before: dict[str, int]) -> bool:
    """Whether the item's submitted annotations differ from those its gold record last saw (an
    item with none submitted now is not gold_sync's to check)."""
    return item_id in seen_now and seen_now[item_id] != before


def annotation_versions(round_: Round) -> dict[int, dict[str, int]]:
    """item id -> {annotator id: version} of the round's submitted annotations (one query)."""
    out: dict[int, dict[str, int]] = {}
    rows = (
        Annotation.objects.filter(assignment__round=round_, assignment__status=Assignment.Status.DONE)
        .order_by()
        .values_list("assignment__item_id", "assignment__annotator_id", "version")
    )
    for item_id, annotator_id, version in rows:
        out.setdefault(item_id, {})[str(annotator_id)] = version
    return out


def mark_revised(pks: list[int], seen_now: dict[int, dict[str, int]]) -> None:
    """Mark for review the records whose annotations changed, naming each annotator who changed
    theirs (a reason about the same annotator replaces the older one); each now refers to the
    annotations as they stand. Read again under a lock, so a mark set meanwhile is kept."""
    if not pks:
        return
    rows = list(
        GoldItem.objects.select_for_update()
        .filter(pk__in=pks)
        .values_list("pk", "item_id", "annotations_seen", "needs_review", "review_reason")
    )
    ids = {int(a) for _, item_id, before, _, _ in rows for a in {*before, *seen_now.get(item_id, {})}}
    names = dict(get_user_model().objects.filter(pk__in=ids).values_list("pk", "username"))
    updated = []
    for pk, item_id, before, needs_review, reason in rows:
        now = seen_now.get(item_id, {})
        if now == before:
            continue  # another sync got there first
        parts = reason_parts(reason) if needs_review else []
        for annotator in sorted({*before, *now}, key=lambda a: names.get(int(a), a)):
            if before.get(annotator) == now.get(annotator):
                continue
            name = names.get(int(annotator), f"annotator {annotator}")
            parts = [p for p in parts if not _about_annotation_of(p, name)]
            if annotator not in now:
                parts.append(f"{name}'s annotation is no longer in")
            elif annotator not in before:
                parts.append(f"{name} added an annotation (v{now[annotator]})")
            else:
                parts.append(f"{name} revised their annotation to v{now[annotator]}")
        updated.append(
            GoldItem(pk=pk, needs_review=True, review_reason=joined_reason(parts), annotations_seen=now)
        )
    rows_update(GoldItem, ["needs_review", "review_reason", "annotations_seen"], updated)


# A review reason holds one part per thing to check ("C1 revised to v2; bob revised their
# annotation to v3"), so that taking one back (a revision withdrawn) leaves the others.
_SEPARATOR = "; "
_REASON_MAX = GoldItem._meta.get_field("review_reason").max_length
_MORE = "and more"


def reason_parts(reason: str) -> list[str]:
    return [p for p in reason.split(_SEPARATOR) if p]


def joined_reason(parts: list[str]) -> str:
    """The parts joined, within the field's length: parts that do not fit give way to "and more"
    (which keeps the record marked until it is resolved)."""
    kept = list(parts)
    while len(_SEPARATOR.join(kept)) > _REASON_MAX:
        kept = [*kept[: -2 if kept[-1] == _MORE else -1], _MORE]
    return _SEPARATOR.join(kept)


def _about_annotation_of(part: str, name: str) -> bool:
    return part in (f"{name}'s annotation is no longer in",) or part.startswith(
        (f"{name} revised their annotation to v", f"{name} added an annotation (v")
    )
