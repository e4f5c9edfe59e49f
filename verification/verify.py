"""NLI verification jobs: every rendered line of a parser's explications (over an item set) or of
a round's gold, checked against the item's text. Judgements are cached in the database by model,
revision, text and line, so a second run costs no forward pass and a resumed run goes on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from adjudication.gold.services import gold_sync
from adjudication.models import GoldConstrual
from annotator.models import Item, ItemSet, ItemSetMember, ParserPrediction, Round
from jobs.kinds import JobError, JobKind, Params, job_kind_register
from jobs.models import Job
from jobs.services import job_create, job_stopped
from nsmcore.render import RENDERER_VERSION, render
from nsmcore.schema import Explication
from nsmcore.verifier import LineScore, Verifier, VerifierUnavailable, item_score, model_unavailable
from verification.models import LineVerification

VERIFY = "verify"
GOLD = "gold"
TEXT_FIELDS = (Round.TEXT_GENERATED, Round.TEXT_MASKED)


@dataclass(frozen=True)
class VerifyParams(Params):
    #: whose explications are checked: a parser's name, or "gold" (the round's resolved gold)
    source: str
    #: the NLI model asked for (a name or a local path); the job's engine is the one it loaded
    model: str
    text_field: str

    def validate(self) -> None:
        if not self.source:
            self.bad("source", _("empty; name the parser whose explications are verified, or 'gold'"))
        if self.text_field not in TEXT_FIELDS:
            fields = ", ".join(TEXT_FIELDS)
            self.bad(
                "text_field",
                _("unknown text field %(field)s; fields: %(fields)s")
                % {"field": repr(self.text_field), "fields": fields},
            )


class DbCache:
    """The verifier's cache in LineVerification rows."""

    def get_many(self, keys: Sequence[tuple[str, str, str]]) -> dict[tuple[str, str, str], LineScore]:
        if not keys:
            return {}
        model = keys[0][0]
        rows = LineVerification.objects.filter(
            model=model, text_sha__in={k[1] for k in keys}, line__in={k[2] for k in keys}
        ).values_list("text_sha", "line", "p_entailment", "p_neutral", "p_contradiction")
        wanted = set(keys)
        out = {}
        for text_sha, line, p_e, p_n, p_c in rows:
            key = (model, text_sha, line)
            if key in wanted:
                out[key] = LineScore(p_e, p_n, p_c)
        return out

    def set_many(self, scores: dict[tuple[str, str, str], LineScore]) -> None:
        LineVerification.objects.bulk_create(
            [
                LineVerification(
                    model=m, text_sha=t, line=line, p_entailment=s.p_entailment, p_neutral=s.p_neutral,
                    p_contradiction=s.p_contradiction,
                )
                for (m, t, line), s in scores.items()
            ],
            ignore_conflicts=True,
            batch_size=2000,
        )  # fmt: skip


SETTING = "NSM_VERIFIER_MODEL"
#: both translated where they are put into a message (a lazy string, formatted then)
HOW_TO_SET = gettext_lazy("set NSM_VERIFIER_MODEL to a local NLI model folder (docs/verifier.md)")
WITHOUT_VERIFICATION = gettext_lazy(
    "or export without verification (untick “Verify every line” on the Exports page, "
    "or `manage.py export_corpus --no-verify`)"
)


def verifier_setting_problem() -> str | None:
    """Why the configured verifier model cannot be used here, naming the setting; None when it
    can. Cheap (no weights, no network): the pages ask it to switch verification off."""
    model = settings.NSM_VERIFIER_MODEL
    problem = model_unavailable(model, download=settings.NSM_VERIFIER_DOWNLOAD)
    if problem is None:
        return None
    if problem.startswith(model):  # "X is not in the cache": the setting names X already
        problem = problem[len(model) :].lstrip()
    shown = f"{SETTING}={model}" if model else _("%(setting)s is empty") % {"setting": SETTING}
    return _("no usable NLI model: %(shown)s: %(problem)s; %(how)s") % {
        "shown": shown,
        "problem": problem,
        "how": HOW_TO_SET,
    }


def verifier_available(model: str) -> str:
    """The model a job will use (``model`` or the setting), refused at once, without loading it,
    when it cannot be there: a missing folder, a hub name not cached while downloads are off.
    Whether it loads, and has an entailment label, the job finds out."""
    if not model:
        problem = verifier_setting_problem()
        if problem:
            raise VerifierUnavailable(problem)
        return settings.NSM_VERIFIER_MODEL
    problem = model_unavailable(model, download=settings.NSM_VERIFIER_DOWNLOAD)
    if problem:
        raise VerifierUnavailable(
            _("cannot use the NLI model %(model)s: %(problem)s") % {"model": model, "problem": problem}
        )
    return model


def verifier_build(model: str = "", *, exporting: bool = False) -> Verifier:
    """The worker's verifier. A model that cannot be loaded fails here, at once (a hub name is
    read from the local cache unless NSM_VERIFIER_DOWNLOAD is on), with one message saying what to
    set, and for an export how to go on without verification."""
    try:
        return Verifier(
            model or settings.NSM_VERIFIER_MODEL,
            device=settings.NSM_VERIFIER_DEVICE,
            batch_size=settings.NSM_VERIFIER_BATCH_SIZE,
            threshold=settings.NSM_VERIFIER_THRESHOLD,
            local_files_only=not settings.NSM_VERIFIER_DOWNLOAD,
        )
    except VerifierUnavailable as error:
        hint = f"{HOW_TO_SET}, {WITHOUT_VERIFICATION}" if exporting else HOW_TO_SET
        raise VerifierUnavailable(
            _("%(error)s. To fix it, %(hint)s.") % {"error": error, "hint": hint}
        ) from None


def explications_for(job: Job, params: VerifyParams) -> list[tuple[int, str, list[dict[str, str]]]]:
    """(item id, text, explications) to verify: a round's gold construals, or the newest legal
    prediction of a parser for each item of an item set."""
    source = params.source
    if source == GOLD:
        round_ = job.round
        gold_sync(round_)  # items whose annotations all agree are gold without a visit to a page
        rows: dict[int, list[dict[str, str]]] = {}
        construals = GoldConstrual.objects.filter(gold__round=round_, gold__status="resolved").order_by(
            "index"
        )
        for item_id, slots in construals.values_list("gold__item_id", "slots"):
            rows.setdefault(item_id, []).append(slots)
        items = Item.objects.in_bulk(list(rows))
        return [(i, items[i].text_for(round_.text_field), rows[i]) for i in sorted(rows)]
    ids = list(
        ItemSetMember.objects.filter(item_set_id=job.item_set_id)
        .order_by("position")
        .values_list("item_id", flat=True)
    )
    newest: dict[int, dict[str, str]] = {}
    predictions = ParserPrediction.objects.filter(item_id__in=ids, parser=source, legal=True).order_by(
        "created_at"
    )
    for item_id, explication in predictions.values_list("item_id", "explication"):
        newest[item_id] = explication
    items = Item.objects.in_bulk(list(newest))
    return [(i, items[i].text_for(params.text_field), [newest[i]]) for i in ids if i in newest]


def run_verify(job: Job, params: VerifyParams) -> bool:
    verifier = verifier_build(params.model)
    work = explications_for(job, params)
    Job.objects.filter(pk=job.pk).update(
        total=len(work), done=0, engine=verifier.model_id, engine_version=verifier.revision
    )
    cache = DbCache()
    size = max(1, settings.NSM_JOB_BATCH_SIZE)
    scores_all: list[float] = []
    lines_all = entailed_all = 0
    for start in range(0, len(work), size):
        if job_stopped(job.pk):
            return False
        batch = work[start : start + size]
        pairs, owners = [], []
        for k, (_item_id, text, explications) in enumerate(batch):
            for explication in explications:
                for line in render(Explication.from_dict(explication)):
                    pairs.append((text, line.text))
                    owners.append(k)
        scores = verifier.score(pairs, cache=cache)
        per_item: dict[int, list[LineScore]] = {}
        for owner, score in zip(owners, scores, strict=True):
            per_item.setdefault(owner, []).append(score)
        for k in range(len(batch)):
            value = item_score(per_item.get(k, []), verifier.threshold)
            if value is not None:
                scores_all.append(value)
        lines_all += len(scores)
        entailed_all += sum(s.entailed(verifier.threshold) for s in scores)
        with transaction.atomic():
            Job.objects.filter(pk=job.pk).update(done=F("done") + len(batch))
    summary: dict[str, Any] = {
        "items": len(work),
        "lines": lines_all,
        "entailed_lines": entailed_all,
        "mean_item_score": sum(scores_all) / len(scores_all) if scores_all else None,
        "items_at_zero": sum(1 for s in scores_all if s == 0),
        "threshold": verifier.threshold,
        "model": verifier.model_id,
        "revision": verifier.revision,
        # the wording the lines were checked in: a renderer version later re-renders them, and the
        # cache, keyed by the line text, judges the new lines anew (docs/renderer.md)
        "renderer_version": RENDERER_VERSION,
    }
    Job.objects.filter(pk=job.pk).update(summary=summary)
    return True


def job_verify_start(
    *,
    user,
    item_set: ItemSet | None = None,
    round_: Round | None = None,
    parser: str = "",
    model: str = "",
    text_field: str = "",
    enqueue: bool = True,
) -> Job:
    """Verify a parser's explications over an item set, or a round's gold. Only what is known
    without loading the model is refused here (no model folder, a hub name not cached): this runs
    in a web request. A model that cannot be loaded fails the job, at once, with the reason."""
    if (item_set is None) == (round_ is None):
        raise JobError(_("choose an item set (with a parser) or a round (its gold), not both"))
    if item_set is not None and not parser:
        raise JobError(_("choose the parser whose explications are verified"))
    try:
        model = verifier_available(model)
    except VerifierUnavailable as error:
        raise JobError(str(error)) from None
    source = GOLD if round_ is not None else parser
    params = VerifyParams(source=source, model=model, text_field=text_field or Round.TEXT_GENERATED)
    return job_create(
        VERIFY, user=user, item_set=item_set or round_.item_set, round_=round_,
        key=f"{source}|{model}", params=params, enqueue=enqueue,
    )  # fmt: skip


def describe_verify(job: Job, params: VerifyParams) -> str:
    what = _("the gold") if params.source == GOLD else format_html(_("parser <code>{}</code>"), params.source)
    model = format_html(_("model <code>{}</code>"), job.engine or params.model)
    if job.engine_version:
        model = format_html(_("{} revision <code>{}</code>"), model, job.engine_version)
    return format_html(_("{} · {} · reads {}"), what, model, params.text_field)


def verify_resume_problem(job: Job, params: VerifyParams) -> str | None:
    """The model the job was started with, gone since (a folder removed, a cache emptied)."""
    try:
        verifier_available(params.model)
    except VerifierUnavailable as error:
        return str(error)
    return None


job_kind_register(
    JobKind(
        name=VERIFY,
        resume_problem=verify_resume_problem,
        label=gettext_lazy("NLI verification"),
        params=VerifyParams,
        run=run_verify,
        describe=describe_verify,
        expected=(VerifierUnavailable,),
        status_template="verification/_status_verify.html",
        form="verification.forms.VerifyForm",
        form_template="verification/_verify_form.html",
        # the NLI model: a GPU machine may run a worker for this queue alone (docs/deploy.md)
        queue=lambda: settings.NSM_VERIFY_QUEUE,
    )
)
