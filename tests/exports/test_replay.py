"""Replay (exports.replay): an export made after a convention is applied and a record resolved by
hand, replayed after a rule revision is activated, is rebuilt byte for byte from the history;
changing one stored annotation revision, or one gold decision, makes the replay name that item and
slot. Bad archives exit 2 with the reason; the API and the Exports page do the same."""

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

import nsmcore
from adjudication.gold.services import (
    convention_apply,
    convention_propose,
    convention_vote,
    gold_resolve,
    gold_sync,
)
from adjudication.models import GoldChange, GoldConstrual, GoldItem, Vote
from adjudication.rule_revisions.services import revision_activate, revision_propose
from annotator.models import AnnotationRevision
from annotator.sampling import item_set_from_items
from annotator.services import round_create
from exports.export import SCHEMA_NAME, export_start
from exports.models import Export
from exports.replay import ReplayInputError, replay_archive, replay_stored
from jobs.services import job_run
from nsmcore import emoexpl
from tests.explications import PRED
from tests.rules.data import moved

pytestmark = pytest.mark.django_db

#: the hand resolution makes t3-0 route to surprise under v1, to no-emotion under v2
OTHER_BODY = "yes" if PRED["body"] == "no" else "no"
BY_HAND = {"intensity": "very", "evaluation": "neither", "knowledge": "not-know", "realization": "happened"}


@pytest.fixture(autouse=True)
def _settings(settings, tmp_path):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"
    settings.NSM_CONVENTION_QUORUM = 2
    settings.NSM_EXPORT_BATCH_SIZE = 3  # two batches: the merge of archive and history crosses one


def export_now(user, round_) -> Export:
    job = export_start(user=user, round_=round_, verify=False, enqueue=False)
    job_run(job.pk)
    return Export.objects.get(job_id=job.pk)


def records(export: Export) -> dict[str, dict]:
    with zipfile.ZipFile(export.path) as zf:
        rows = [json.loads(line) for line in zf.read(emoexpl.JSONL_NAME).decode().splitlines()]
    return {r["source_id"]: r for r in rows}


def replay_command(path: Path, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("replay", str(path), *args, stdout=out)
    except CommandError as error:
        return error.returncode, out.getvalue() + str(error)
    return 0, out.getvalue()


@pytest.fixture
def first(submitted, adjudicator, other_adjudicator, admin_user, django_capture_on_commit_callbacks):
    """A convention applied (t1-0, t2-0), one record resolved by hand (t3-0), one unanimous (t4-0),
    the first export; then a rule revision is activated that changes t3-0's label."""
    gold_sync(submitted)
    convention = convention_propose(
        user=adjudicator, round_=submitted, slot="agency", value_a=PRED["agency"], value_b="someone-else",
        chosen="someone-else", rule="another person's act counts as someone else's",
    )  # fmt: skip
    convention_vote(user=adjudicator, convention=convention, approve=True)
    convention_vote(user=other_adjudicator, convention=convention, approve=True)
    assert convention_apply(user=adjudicator, convention=convention) == 2
    gold = GoldItem.objects.get(item__source_id="t3-0")
    gold_resolve(user=adjudicator, gold=gold, values=BY_HAND, why="nothing good or bad is said")
    export = export_now(admin_user, submitted)
    version = revision_propose(user=adjudicator, document=moved("no-emotion", 0), note="neutral first")
    with django_capture_on_commit_callbacks(execute=True):  # every process reads v2 once this commits
        revision_activate(user=admin_user, version=version)
    assert GoldConstrual.objects.get(gold=gold).label == "no-emotion"
    return export


def test_the_first_export_is_rebuilt_byte_for_byte_after_a_rule_revision(first, admin_user, submitted):
    stored = records(first)
    assert stored["t3-0"]["construals"][0]["routing"]["label"] == "surprise"
    assert stored["t3-0"]["construals"][0]["routing"]["rule_set_version"] == "1"
    assert stored["t1-0"]["construals"][0]["provenance"]["agency"] == {
        "source": "convention", "convention": 1, "version": 1, "by": "carol",
    }  # fmt: skip
    assert stored["t3-0"]["construals"][0]["provenance"]["evaluation"] == {
        "source": "adjudicated",
        "by": "carol",
    }

    code, out = replay_command(first.path)
    assert code == 0, out
    assert f"sha256 {first.sha256}" in out and "identical: the rebuilt archive is byte for byte" in out
    result = replay_stored(first)
    assert result.identical and result.replay_sha256 == first.sha256 == result.archive_sha256
    assert (result.records, result.replayed, result.differences.total) == (4, 4, 0)

    # the export after the revision routes t3-0 under v2, and replays too
    second = export_now(admin_user, submitted)
    assert records(second)["t3-0"]["construals"][0]["routing"] == {
        **records(second)["t3-0"]["construals"][0]["routing"], "label": "no-emotion", "rule_set_version": "2",
    }  # fmt: skip
    assert second.sha256 != first.sha256 and replay_stored(second).identical


def test_a_whole_corpus_export_replays_after_a_new_round_is_made(
    first, admin_user, submitted, items, annotator
):
    job = export_start(user=admin_user, round_=None, verify=False, enqueue=False)
    job_run(job.pk)
    whole = Export.objects.get(job_id=job.pk)
    assert whole.manifest["scope"] == "whole gold corpus" and whole.manifest["recipe"]["scope"] == {
        "round": None
    }
    later = item_set_from_items(name="later-set", items=items)  # the items gain a set, and a round
    round_create(name="later", item_set=later, annotators=[annotator], annotators_per_item=1,
                 allow_prefill_overlap=True)  # fmt: skip
    result = replay_stored(whole)
    assert result.identical, [d.text for d in result.differences.kept]


def test_the_recipe_says_how_the_export_was_made(first, submitted):
    recipe = first.manifest["recipe"]
    assert recipe["scope"] == {"round": "prefilled"}
    assert (
        recipe["as_of"]["gold_change"] == GoldChange.objects.filter(why__startswith="rule set").first().pk - 1
    )
    assert recipe["as_of"]["rule_set_activation"] == 1
    (round_,) = recipe["rounds"]
    assert round_ == {
        "name": "prefilled", "item_set": "set-p", "mode": "prefilled", "text_field": submitted.text_field,
        "annotators_per_item": 2, "pass_kind": "human", "show_routed_label": False, "prefill_parser": "lex",
        "prefill": [{"parser": "lex", "parser_version": "", "text_field": "", "predictions": 4}],
        "coders": ["alice", "bob"],
    }  # fmt: skip
    (item_set,) = recipe["item_sets"]
    assert (item_set["name"], item_set["tier"], item_set["members"]) == ("set-p", "other", 4)
    assert recipe["conventions"] == [{"label": "C1 v1", "approve": 2, "reject": 0}]
    assert recipe["guideline"]["conventions"] == ["C1 v1"] and recipe["guideline"]["prompt"]
    assert recipe["acceptance"] == {"quorum": 2, "majority": 0.5}
    assert recipe["rule_set"]["version"] == "1" and recipe["rule_set"]["rules"] == 13
    assert recipe["renderer_version"] == nsmcore.RENDERER_VERSION
    assert recipe["software_version"] == nsmcore.__version__


def test_a_changed_annotation_revision_is_named_by_item_and_slot(first):
    revision = AnnotationRevision.objects.filter(
        annotation__assignment__item__source_id="t4-0", annotation__assignment__annotator__username="alice"
    ).get()
    revision.slots = {**revision.slots, "trigger": "nothing"}
    revision.save()

    code, out = replay_command(first.path)
    assert code == 1
    assert "differs: test:t4-0 / construal 1 / trigger: explication: archive " in out
    result = replay_archive(first.path)
    assert not result.identical and result.replayed == 3  # annotators now disagree: t4-0 is open
    found = {(d.item, d.slot, d.field) for d in result.differences.kept}
    assert ("test:t4-0", "trigger", "explication") in found
    assert {d.item for d in result.differences.kept if d.item} == {"test:t4-0"}  # no other record
    assert ("", "", "manifest.counts.items") in found


def test_a_changed_gold_decision_is_named_by_item_and_slot(first):
    change = GoldChange.objects.get(why="nothing good or bad is said")
    change.after = {**change.after, "slots": {**change.after["slots"], "intensity": "plain"}}
    change.save()
    result = replay_stored(first)
    assert not result.identical
    ours = [d for d in result.differences.kept if d.item == "test:t3-0" and d.slot == "intensity"]
    assert ("explication", "very", "plain") in [(d.field, d.archive, d.replay) for d in ours]
    assert all(d.item in ("", "test:t3-0") for d in result.differences.kept)


def test_a_convention_its_votes_no_longer_accept_is_not_followed(first):
    Vote.objects.filter(adjudicator__username="dave").delete()  # one vote short of the quorum
    result = replay_stored(first)
    found = [(d.item, d.slot, d.field, d.replay) for d in result.differences.kept]
    assert ("test:t1-0", "agency", "explication", None) in found
    assert ("test:t2-0", "agency", "explication", None) in found
    assert ("", "", "manifest.conventions[0].label", "absent") in found
    assert any("C1 v1 was applied at" in note and "do not accept it" in note for note in result.notes)


def test_gold_edited_behind_the_audit_trail_is_named_in_the_next_export(first, admin_user, submitted):
    """A construal changed in the database without a decision: the next export carries it, the
    history does not give it, so its replay names the slot; the first export still replays."""
    construal = GoldConstrual.objects.get(gold__item__source_id="t4-0", index=1)
    construal.slots = {**construal.slots, "body": OTHER_BODY}
    construal.save()
    later = export_now(admin_user, submitted)
    result = replay_stored(later)
    assert ("test:t4-0", "body", "explication") in {
        (d.item, d.slot, d.field) for d in result.differences.kept
    }
    assert replay_stored(first).identical


def test_an_archive_without_a_recipe_is_dated_by_its_last_gold_change(first, tmp_path):
    """Archives made before exports carried a recipe: rebuilt as of their gold_as_of."""
    with zipfile.ZipFile(first.path) as zf:
        files = {name: zf.read(name) for name in zf.namelist()}
    manifest = json.loads(files[emoexpl.MANIFEST_NAME])
    del manifest["recipe"]
    old = tmp_path / "old.zip"
    with old.open("wb") as f:
        writer = emoexpl.ArchiveWriter(f)
        with writer.stream(emoexpl.JSONL_NAME) as out:  # as the export writes it
            out.write(files[emoexpl.JSONL_NAME].decode())
        writer.add(emoexpl.MANIFEST_NAME, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
        writer.add(emoexpl.CARD_NAME, emoexpl.dataset_card(manifest))
        writer.add(SCHEMA_NAME, files[SCHEMA_NAME])
        writer.close()
    result = replay_archive(old)
    assert result.identical and not result.recipe, [d.text for d in result.differences.kept]
    assert any("gold_as_of" in note for note in result.notes)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "nope.zip: no such file"),
        (b"just some text\n", "is not a zip archive"),
        ({"other.txt": "x"}, "not an EmoExpl archive: it holds no manifest.json + emoexpl.jsonl"),
        ({"manifest.json": "{", "emoexpl.jsonl": ""}, "its manifest is not JSON"),
        (
            {"manifest.json": "[" * 50_000 + "]" * 50_000, "emoexpl.jsonl": ""},
            "its manifest cannot be read: JSON nested too deeply to read",
        ),
        (
            {"manifest.json": '{"name": "EmoExpl", "n": ' + "9" * 5_001 + "}", "emoexpl.jsonl": ""},
            "its manifest cannot be read: JSON number too long to read",
        ),
        ({"manifest.json": '{"name": "Other"}', "emoexpl.jsonl": ""}, "its manifest does not name EmoExpl"),
        (
            {"manifest.json": '{"name": "EmoExpl", "format": "emoexpl/9"}', "emoexpl.jsonl": ""},
            "its format 'emoexpl/9' is not emoexpl/1",
        ),
        (
            {"manifest.json": '{"name": "EmoExpl", "format": "emoexpl/1"}', "emoexpl.jsonl": ""},
            "nothing tells when it was made",
        ),
        (
            {
                "manifest.json": '{"name": "EmoExpl", "format": "emoexpl/1", "recipe": {}}',
                "emoexpl.jsonl": "",
            },
            "the manifest's recipe lacks or garbles",
        ),
    ],
)
def test_bad_input_exits_2_with_the_reason(db, tmp_path, content, message):
    path = tmp_path / "nope.zip"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, dict):
        with zipfile.ZipFile(path, "w") as zf:
            for name, text in content.items():
                zf.writestr(name, text)
    code, out = replay_command(path)
    assert code == 2 and message in out, out
    with pytest.raises(ReplayInputError, match=r"nope\.zip"):
        replay_archive(path)


@pytest.mark.parametrize("head_kept", [True, False])
def test_a_record_nested_too_deeply_is_a_difference_not_a_crash(first, tmp_path, head_kept):
    """Found by a security probe: a replayed archive whose first record was nested 50,000 deep
    made the upload a 500 (RecursionError). With its head kept the record is matched to its item
    and compared; without, it is a record that is not JSON."""
    path = tmp_path / "deep.zip"
    with zipfile.ZipFile(first.path) as source, zipfile.ZipFile(path, "w") as target:
        for name in source.namelist():
            data = source.read(name)
            if name == "emoexpl.jsonl":
                lines = data.decode().splitlines()
                deep = "[" * 50_000 + "]" * 50_000
                if head_kept:
                    lines[0] = lines[0][:-1] + ',"deep":' + deep + "}"
                else:
                    lines[0] = lines[0][: lines[0].index('"source_id":')] + '"deep": ' + deep + "}"
                data = "\n".join(lines).encode() + b"\n"
            target.writestr(name, data)
    result = replay_archive(path)
    assert not result.identical and result.as_dict()["differences"]


def test_the_command_keeps_the_rebuilt_archive_and_prints_json(first, tmp_path):
    code, out = replay_command(first.path, "--json", "--out", str(tmp_path))
    assert code == 0
    body = json.loads(out)
    assert (
        body["identical"] is True and body["differences"] == [] and body["as_of"]["rule_set_activation"] == 1
    )
    assert (tmp_path / first.filename).read_bytes() == first.path.read_bytes()
    code, out = replay_command(first.path, "--out", str(tmp_path / "no" / "such.zip"))
    assert code == 2 and "--out: no folder" in out


# The API -------------------------------------------------------------------------------------------


def test_the_api_replays_a_stored_export_and_an_upload(first, client, admin_user):
    client.force_login(admin_user)
    response = client.post(reverse("api_export_replay", args=[first.pk]))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["identical"] is True and body["archive_sha256"] == first.sha256 == body["replay_sha256"]
    detail = client.get(reverse("api_export", args=[first.pk])).json()
    assert detail["recipe"]["rule_set"]["version"] == "1" and detail["replay"].endswith(
        f"/{first.pk}/replay/"
    )

    AnnotationRevision.objects.filter(
        annotation__assignment__item__source_id="t4-0", annotation__assignment__annotator__username="bob"
    ).update(slots={**PRED, "want": "not-want"})
    with first.path.open("rb") as f:
        response = client.post(reverse("api_export_replay_upload"), {"archive": f})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["identical"] is False and body["archive"] == first.filename
    want = {"item": "test:t4-0", "construal": 1, "slot": "want", "field": "explication"}
    assert {**want, "archive": PRED["want"], "replay": None} in body["differences"]


def test_the_api_refuses_bad_archives_and_others(first, client, admin_user, adjudicator, tmp_path):
    client.force_login(admin_user)
    response = client.post(reverse("api_export_replay_upload"), {"archive": io.BytesIO(b"not a zip")})
    assert response.status_code == 400 and "is not a zip archive" in response.json()["detail"]
    assert response.json()["archive"] == [response.json()["detail"]]
    response = client.post(reverse("api_export_replay_upload"), {})
    assert response.status_code == 400 and "archive" in response.json()
    assert client.post(reverse("api_export_replay", args=[9999])).status_code == 404
    first.path.rename(tmp_path / "moved.zip")
    response = client.post(reverse("api_export_replay", args=[first.pk]))
    assert response.status_code == 404 and "no longer on the server" in response.json()["detail"]
    client.force_login(adjudicator)
    assert client.post(reverse("api_export_replay", args=[first.pk])).status_code == 403


def test_a_raw_export_is_not_replayed(submitted, client, admin_user, settings):
    from exports.raw_export import raw_export_start

    job = raw_export_start(user=admin_user, round_=submitted, format="jsonl", enqueue=False)
    job_run(job.pk)
    raw = Export.objects.get(job_id=job.pk)
    client.force_login(admin_user)
    response = client.post(reverse("api_export_replay", args=[raw.pk]))
    assert response.status_code == 400 and "only an EmoExpl archive is replayed" in response.json()["detail"]
    assert f'id="replay-{raw.pk}"' not in client.get(reverse("exports")).content.decode()


# The pages -----------------------------------------------------------------------------------------


def test_the_history_page_replays_a_stored_export(first, client, admin_user):
    client.force_login(admin_user)
    page = client.get(reverse("exports")).content.decode()
    assert f'id="replay-{first.pk}"' in page and 'id="replay-result"' in page
    response = client.post(reverse("export_replay", args=[first.pk]), headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert 'id="replay-verdict"' in html and "identical" in html and first.sha256 in html

    AnnotationRevision.objects.filter(annotation__assignment__item__source_id="t4-0").update(
        slots={**PRED, "body": OTHER_BODY}
    )  # both annotators alike: t4-0 resolves otherwise
    response = client.post(reverse("export_replay", args=[first.pk]))  # without JavaScript: a page
    html = response.content.decode()
    assert response.status_code == 200 and "<html" in html and 'id="replay-differences"' in html
    assert "test:t4-0" in html and "<code>body</code>" in html and "differs" in html


def test_the_export_page_shows_the_recipe(first, client, admin_user, adjudicator):
    client.force_login(admin_user)
    html = client.get(reverse("export_detail", args=[first.pk])).content.decode()
    assert 'id="export-recipe"' in html and 'id="recipe-rounds"' in html and "set-p" in html
    assert "C1 v1 (2 for, 0 against)" in html and f'id="replay-{first.pk}"' in html
    client.force_login(adjudicator)
    assert client.get(reverse("export_detail", args=[first.pk])).status_code == 403
    assert client.post(reverse("export_replay", args=[first.pk])).status_code == 403


def test_a_file_gone_is_a_400_naming_it_on_the_page(first, client, admin_user, tmp_path):
    first.path.rename(tmp_path / "moved.zip")
    client.force_login(admin_user)
    response = client.post(reverse("export_replay", args=[first.pk]), headers={"HX-Request": "true"})
    assert response.status_code == 400 and "is no longer on the server" in response.content.decode()
