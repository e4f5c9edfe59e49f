import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotator.imports import MAX_REPORTED, ImportFileError, items_import, read_items, read_jsonl
from annotator.models import Item
from tests.shared_data import shared_data

pytestmark = pytest.mark.django_db
HEADER = "\ttext_id\temotion\tgenerated_text\thidden_emo_text\tsuddenness\tintensity\tage"


def tsv(*rows: str) -> str:
    return "\n".join([HEADER, *rows]) + "\n"


GOOD_TSV = tsv(
    "0\t11\tjoy\tI felt joy when I passed.\tI felt ... when I passed.\t3\t4\t31",
    "1\t12\tanger\tI was angry at the bus driver.\tI was ... at the bus driver.\t5\t5\t40",
)


def test_tsv_import_keeps_texts_label_appraisals_and_metadata_but_not_demographics():
    report = items_import(data=GOOD_TSV, fmt="tsv")
    assert (report.rows, report.created, report.unchanged) == (2, 2, 0)
    item = Item.objects.get(source_id="11")
    assert item.text == "I felt joy when I passed."
    assert item.masked_text == "I felt ... when I passed."
    assert item.reference_label == "joy"
    assert item.appraisals == {"suddenness": 3}
    assert item.metadata == {"intensity": "4"}
    assert "age" not in item.metadata


def test_reimporting_the_same_file_creates_nothing_and_says_so():
    items_import(data=GOOD_TSV, fmt="tsv")
    report = items_import(data=GOOD_TSV, fmt="tsv")
    assert (report.created, report.unchanged) == (0, 2)
    assert "0 items created, 2 already present and unchanged" in report.summary()
    assert Item.objects.count() == 2


@pytest.mark.parametrize(
    "data, fmt, expected",
    [
        (tsv("0\t11\tjoy\t\tI felt ...\t3\t4\t1"), "tsv", "line 2, column generated_text: missing or empty"),
        (tsv("0\t11\telation\tx\ty\t3\t4\t1"), "tsv", "line 2, column emotion: 'elation' is not an emotion"),
        (
            tsv("0\t11\tjoy\tx\ty\tlots\t4\t1"),
            "tsv",
            "line 2, column suddenness: 'lots' is not a whole-number",
        ),
        (
            tsv("0\t11\tjoy\tx\ty\t1\t1\t1", "1\t11\tjoy\tz\tw\t1\t1\t1"),
            "tsv",
            "line 3, column text_id: '11' repeats line 2",
        ),
        (tsv("0\t11\tjoy\tx\ty\t1\t1\t1\textra"), "tsv", "line 2: more fields than the 8 headers"),
        (
            '{"text_id": "1", "emotion": "joy", "text": "x"}\n{"text_id": 2,',
            "jsonl",
            "line 2: malformed JSON",
        ),
        ('["not", "an", "object"]', "jsonl", "line 1: expected a JSON object"),
        ("text_id,emotion\n5,joy\n", "csv", "line 1: no generated_text or text column; the header has"),
        ("", "csv", "no rows"),
        ("x", "xml", "unknown format 'xml'"),
    ],
)
def test_bad_files_are_refused_whole_naming_line_and_column(data, fmt, expected):
    with pytest.raises(ImportFileError) as caught:
        items_import(data=data, fmt=fmt)
    assert expected in str(caught.value)
    assert Item.objects.count() == 0


def test_one_bad_row_among_good_ones_writes_nothing():
    rows = [f"{i}\t{i}\tjoy\ttext {i}\tmasked {i}\t1\t1\t1" for i in range(50)]
    rows.append("50\t50\tjoy\ttext\tmasked\tx\t1\t1")
    with pytest.raises(ImportFileError, match="line 52, column suddenness"):
        items_import(data=tsv(*rows), fmt="tsv")
    assert Item.objects.count() == 0


def test_an_existing_id_with_different_text_is_refused_not_overwritten():
    items_import(data=GOOD_TSV, fmt="tsv")
    changed = GOOD_TSV.replace("I felt joy when I passed.", "Edited text")
    with pytest.raises(ImportFileError, match="'11' already exists in crowd-enVent with a different text"):
        items_import(data=changed, fmt="tsv")
    assert Item.objects.get(source_id="11").text == "I felt joy when I passed."


def test_jsonl_with_one_text_uses_it_for_both_and_csv_works():
    items_import(data='{"id": "a", "label": "fear", "text": "I was ... of dogs."}\n', fmt="jsonl", source="s")
    item = Item.objects.get(source_id="a")
    assert item.masked_text == item.text == "I was ... of dogs."
    rows = read_items('text_id,emotion,text,masked_text\n1,joy,"A, with comma",B\n', "csv")
    assert rows[0]["text"] == "A, with comma"


def test_the_real_crowd_envent_copy_imports_all_5400_rows():
    crowd = shared_data("crowd-enVent")
    total = 0
    for split in ("train", "val", "test"):
        report = items_import(data=(crowd / f"crowd-enVent-{split}.tsv").read_bytes(), fmt="tsv")
        total += report.created
    assert total == 5400
    assert Item.objects.filter(reference_label="guilt").count() == 225
    sample = Item.objects.exclude(appraisals={}).first()
    assert len(sample.appraisals) == 21


def test_import_items_command_reports_and_refuses(tmp_path, capsys):
    good = tmp_path / "items.tsv"
    good.write_text(GOOD_TSV)
    call_command("import_items", str(good))
    assert "2 items created" in capsys.readouterr().out
    assert set(Item.objects.values_list("source", flat=True)) == {"crowd-enVent"}
    jsonl = tmp_path / "pilot-notes.jsonl"
    jsonl.write_text('{"text_id": "p1", "emotion": "joy", "text": "I was glad."}\n')
    call_command("import_items", str(jsonl))  # the same default source as the browser's
    assert Item.objects.get(source_id="p1").source == "pilot-notes"
    bad = tmp_path / "bad.tsv"
    bad.write_text(tsv("0\t99\tjoy\t\tmasked\t1\t1\t1"))
    with pytest.raises(CommandError, match="nothing imported"):
        call_command("import_items", str(bad))
    odd = tmp_path / "x.docx"
    odd.write_text("")
    with pytest.raises(CommandError, match="cannot tell the format"):
        call_command("import_items", str(odd))


def _preview(client, path, **extra):
    with path.open("rb") as fh:
        return client.post(reverse("manage_import"), {"file": fh, "source": "crowd-enVent", **extra})


def _confirm_fields(body: str) -> dict[str, str]:
    form = re.search(r'<form[^>]*id="import-confirm".*?</form>', body, re.S).group(0)
    return dict(re.findall(r'<input type="hidden" name="(token|sha256)" value="([^"]+)"', form))


def test_only_admins_reach_the_import_pages(client, annotator, tmp_path):
    client.force_login(annotator)
    assert client.get(reverse("manage_import")).status_code == 403
    good = tmp_path / "items.tsv"
    good.write_text(GOOD_TSV)
    assert _preview(client, good).status_code == 403
    assert (
        client.post(reverse("manage_import_confirm"), {"token": "x" * 32, "sha256": "0" * 64}).status_code
        == 403
    )
    assert not Item.objects.exists()


def test_the_preview_shows_rows_counts_and_writes_nothing(client, admin_user, tmp_path, settings):
    settings.NSM_IMPORT_STAGING_DIR = tmp_path / "var" / "import-staging"
    items_import(
        data=tsv("0\t11\tjoy\tI felt joy when I passed.\tI felt ... when I passed.\t3\t4\t31"), fmt="tsv"
    )
    client.force_login(admin_user)
    good = tmp_path / "items.tsv"
    good.write_text(
        tsv(
            "0\t11\tjoy\tI felt joy when I passed.\tI felt ... when I passed.\t3\t4\t31",
            "1\t12\tanger\tI was angry at the bus driver.\tI was ... at the bus driver.\t5\t5\t40",
            "2\t13\tanger\tI was furious when the train left.\tI was ... when the train left.\t5\t5\t40",
        )
    )
    response = _preview(client, good)
    assert response.status_code == 200
    body = response.content.decode()
    assert Item.objects.count() == 1  # the preview wrote nothing
    row = re.search(r'<tr data-source-id="12">.*?</tr>', body, re.S).group(0)
    assert (
        "anger" in row and "I was angry at the bus driver." in row and "I was ... at the bus driver." in row
    )
    assert "new" in row
    assert "already present" in re.search(r'<tr data-source-id="11">.*?</tr>', body, re.S).group(0)
    counts = re.search(r'<dl class="facts" id="import-counts">.*?</dl>', body, re.S).group(0)
    assert re.search(r"<dt>rows</dt><dd>3</dd>", counts)
    assert re.search(r"<dt>new</dt><dd>2</dd>", counts)
    assert re.search(r"<dt>already present</dt><dd>1</dd>", counts)
    labels = re.search(r'<table class="rules" id="import-labels">.*?</table>', body, re.S).group(0)
    assert re.search(
        r'<tr data-label="anger"><td>anger</td><td class="num">2</td><td class="num">2</td></tr>', labels
    )
    assert re.search(
        r'<tr data-label="joy"><td>joy</td><td class="num">1</td><td class="num">0</td></tr>', labels
    )
    fields = _confirm_fields(body)
    assert len(fields["token"]) >= 32 and len(fields["sha256"]) == 64
    assert list(settings.NSM_IMPORT_STAGING_DIR.glob("*.upload")), "the upload waits under var/"


def test_confirming_writes_exactly_what_was_previewed_and_the_token_is_then_spent(
    client, admin_user, tmp_path, settings
):
    settings.NSM_IMPORT_STAGING_DIR = tmp_path / "var" / "import-staging"
    client.force_login(admin_user)
    good = tmp_path / "items.tsv"
    good.write_text(GOOD_TSV)
    fields = _confirm_fields(_preview(client, good).content.decode())
    response = client.post(reverse("manage_import_confirm"), fields, follow=True)
    assert response.redirect_chain == [(reverse("manage_import"), 302)]
    assert "2 items created" in response.content.decode()
    assert set(Item.objects.values_list("source_id", flat=True)) == {"11", "12"}
    assert not list(settings.NSM_IMPORT_STAGING_DIR.iterdir())
    again = client.post(reverse("manage_import_confirm"), fields)
    assert again.status_code == 400 and "upload the file again" in again.content.decode()
    assert Item.objects.count() == 2


def test_a_bad_file_shows_its_errors_and_no_confirm_button(client, admin_user, tmp_path, settings):
    settings.NSM_IMPORT_STAGING_DIR = tmp_path / "var" / "import-staging"
    client.force_login(admin_user)
    bad = tmp_path / "bad.tsv"
    bad.write_text(tsv("0\t77\tjoy\tx\ty\tnope\t1\t1", "1\t78\telation\tx\ty\t1\t1\t1"))
    response = _preview(client, bad)
    assert response.status_code == 400
    body = response.content.decode()
    problems = re.search(r'<div class="error" id="import-problems".*?</div>', body, re.S).group(0)
    assert "line 2, column suddenness" in problems and "line 3, column emotion" in problems
    assert 'id="import-confirm"' not in body
    assert not Item.objects.exists()
    assert not settings.NSM_IMPORT_STAGING_DIR.exists() or not list(settings.NSM_IMPORT_STAGING_DIR.iterdir())


@pytest.mark.parametrize("tamper", ["token", "sha256", "missing", "path"])
def test_a_tampered_token_or_checksum_is_a_400_and_writes_nothing(
    client, admin_user, tmp_path, settings, tamper
):
    settings.NSM_IMPORT_STAGING_DIR = tmp_path / "var" / "import-staging"
    client.force_login(admin_user)
    good = tmp_path / "items.tsv"
    good.write_text(GOOD_TSV)
    fields = _confirm_fields(_preview(client, good).content.decode())
    if tamper == "token":
        fields["token"] = fields["token"][:-1] + ("A" if fields["token"][-1] != "A" else "B")
    elif tamper == "sha256":
        fields["sha256"] = "0" * 64
    elif tamper == "missing":
        del fields["token"]
    else:
        fields["token"] = "../../../etc/passwd"
    response = client.post(reverse("manage_import_confirm"), fields)
    assert response.status_code == 400
    assert re.search(r'<div class="error" id="import-problems"', response.content.decode())
    assert not Item.objects.exists()


def test_a_changed_staged_file_is_refused(client, admin_user, tmp_path, settings):
    settings.NSM_IMPORT_STAGING_DIR = tmp_path / "var" / "import-staging"
    client.force_login(admin_user)
    good = tmp_path / "items.tsv"
    good.write_text(GOOD_TSV)
    fields = _confirm_fields(_preview(client, good).content.decode())
    staged = next(settings.NSM_IMPORT_STAGING_DIR.glob("*.upload"))
    staged.write_text(GOOD_TSV.replace("bus driver", "tram driver"))
    response = client.post(reverse("manage_import_confirm"), fields)
    assert response.status_code == 400 and "changed since the preview" in response.content.decode()
    assert not Item.objects.exists()


def test_an_expired_upload_is_a_400_and_is_cleaned_up(client, admin_user, tmp_path, settings):
    import os
    import time

    from annotator.import_staging import STAGING_TTL_SECONDS

    settings.NSM_IMPORT_STAGING_DIR = tmp_path / "var" / "import-staging"
    client.force_login(admin_user)
    good = tmp_path / "items.tsv"
    good.write_text(GOOD_TSV)
    fields = _confirm_fields(_preview(client, good).content.decode())
    old = time.time() - STAGING_TTL_SECONDS - 60
    for path in settings.NSM_IMPORT_STAGING_DIR.iterdir():
        os.utime(path, (old, old))
    response = client.post(reverse("manage_import_confirm"), fields)
    assert response.status_code == 400 and "expired" in response.content.decode()
    assert not Item.objects.exists()
    _preview(client, good)  # a later upload sweeps what has expired
    assert len(list(settings.NSM_IMPORT_STAGING_DIR.glob("*.upload"))) == 1


def test_another_admins_token_is_refused(client, admin_user, tmp_path, settings):
    from tests.conftest import _user

    settings.NSM_IMPORT_STAGING_DIR = tmp_path / "var" / "import-staging"
    client.force_login(admin_user)
    good = tmp_path / "items.tsv"
    good.write_text(GOOD_TSV)
    fields = _confirm_fields(_preview(client, good).content.decode())
    client.force_login(_user("olga", "admin"))
    response = client.post(reverse("manage_import_confirm"), fields)
    assert response.status_code == 400 and "upload the file again" in response.content.decode()
    assert not Item.objects.exists()


def test_the_database_changing_between_preview_and_confirm_is_refused(client, admin_user, tmp_path, settings):
    settings.NSM_IMPORT_STAGING_DIR = tmp_path / "var" / "import-staging"
    client.force_login(admin_user)
    good = tmp_path / "items.tsv"
    good.write_text(GOOD_TSV)
    fields = _confirm_fields(_preview(client, good).content.decode())
    items_import(
        data=tsv("0\t11\tjoy\tI felt joy when I passed.\tI felt ... when I passed.\t3\t4\t31"), fmt="tsv"
    )
    response = client.post(reverse("manage_import_confirm"), fields)
    assert response.status_code == 400 and "preview it again" in response.content.decode()
    assert Item.objects.count() == 1


def test_a_successful_confirm_redirects_to_the_import_page_with_the_summary_shown_once(
    client, admin_user, tmp_path, settings
):
    settings.NSM_IMPORT_STAGING_DIR = tmp_path / "var" / "import-staging"
    client.force_login(admin_user)
    good = tmp_path / "items.tsv"
    good.write_text(GOOD_TSV)
    fields = _confirm_fields(_preview(client, good).content.decode())
    response = client.post(reverse("manage_import_confirm"), fields)
    assert response.status_code == 302 and response["Location"] == reverse("manage_import")
    assert Item.objects.count() == 2
    page = client.get(reverse("manage_import"))
    assert page.status_code == 200
    report = re.search(r'<li class="import-report success">(.*?)</li>', page.content.decode())
    assert report is not None and "2 rows read from crowd-enVent: 2 items created" in report.group(1)
    # reloading the page (a GET now, not a second POST) shows no failure and no second summary
    again = client.get(reverse("manage_import")).content.decode()
    assert "import-report" not in again and "Nothing was imported" not in again
    assert Item.objects.count() == 2


def test_a_get_of_the_confirm_url_redirects_to_the_import_page(client, admin_user):
    client.force_login(admin_user)
    response = client.get(reverse("manage_import_confirm"))
    assert response.status_code == 302 and response["Location"] == reverse("manage_import")
    assert not Item.objects.exists()


def test_an_empty_source_defaults_to_the_file_name_for_jsonl_and_csv_and_to_crowd_envent_for_tsv(
    client, admin_user, tmp_path, settings
):
    settings.NSM_IMPORT_STAGING_DIR = tmp_path / "var" / "import-staging"
    client.force_login(admin_user)
    assert 'name="source" value=' not in client.get(reverse("manage_import")).content.decode()
    pilot = tmp_path / "pilot-2024.jsonl"
    pilot.write_text('{"text_id": "p1", "emotion": "joy", "text": "I was glad."}\n')
    response = _preview(client, pilot, source="")
    assert response.status_code == 200
    named = re.search(r'<p class="hint" id="import-source">(.*?)</p>', response.content.decode(), re.S)
    assert named is not None and "<strong>pilot-2024</strong>" in named.group(1)
    client.post(reverse("manage_import_confirm"), _confirm_fields(response.content.decode()))
    assert list(Item.objects.values_list("source", "source_id")) == [("pilot-2024", "p1")]
    crowd = tmp_path / "items.tsv"
    crowd.write_text(GOOD_TSV)
    response = _preview(client, crowd, source="")
    assert "<strong>crowd-enVent</strong>" in response.content.decode()
    client.post(reverse("manage_import_confirm"), _confirm_fields(response.content.decode()))
    assert Item.objects.filter(source="crowd-enVent").count() == 2


def test_the_summary_pluralises():
    report = items_import(data='{"text_id": "s1", "emotion": "joy", "text": "I was glad."}\n', fmt="jsonl")
    assert report.summary() == "1 row read from crowd-enVent: 1 item created, 0 already present and unchanged"


def test_a_file_that_adds_nothing_says_so_and_offers_no_confirm_button(
    client, admin_user, tmp_path, settings
):
    settings.NSM_IMPORT_STAGING_DIR = tmp_path / "var" / "import-staging"
    items_import(data=GOOD_TSV, fmt="tsv")
    client.force_login(admin_user)
    good = tmp_path / "items.tsv"
    good.write_text(GOOD_TSV)
    response = _preview(client, good)
    assert response.status_code == 200
    body = response.content.decode()
    assert re.search(r'<p class="hint" id="import-nothing-new">Nothing new to import: all 2 rows', body)
    assert 'id="import-confirm"' not in body and "Import 0" not in body
    assert not settings.NSM_IMPORT_STAGING_DIR.exists() or not list(
        settings.NSM_IMPORT_STAGING_DIR.glob("*.upload")
    )
    assert Item.objects.count() == 2


def test_an_unknown_file_type_is_named_without_a_line_number(client, admin_user, tmp_path, settings):
    settings.NSM_IMPORT_STAGING_DIR = tmp_path / "var" / "import-staging"
    client.force_login(admin_user)
    odd = tmp_path / "x.txt"
    odd.write_text("text_id\n")
    response = _preview(client, odd)
    assert response.status_code == 400
    problems = re.search(r'<div class="error" id="import-problems".*?</div>', response.content.decode(), re.S)
    message = "cannot tell the format of &#x27;x.txt&#x27; from its name: choose TSV, JSONL or CSV"
    assert message in problems.group(0)
    assert "line 0" not in problems.group(0)
    assert not Item.objects.exists()


def test_every_appraisal_rating_the_baseline_reads_is_stored_by_the_import():
    from nsmcore.baselines import APPRAISALS

    header = "\ttext_id\temotion\tgenerated_text\thidden_emo_text\t" + "\t".join(APPRAISALS)
    row = "0\tr1\tjoy\tI won.\tI ... won.\t" + "\t".join(str(1 + k % 5) for k in range(len(APPRAISALS)))
    items_import(data=f"{header}\n{row}\n", fmt="tsv", source="appraisals")
    item = Item.objects.get(source="appraisals")
    assert len(APPRAISALS) == 21
    assert item.appraisals == {name: 1 + k % 5 for k, name in enumerate(APPRAISALS)}


# Import errors name the real line (issue 17, "Input") --------------------------------------------


def test_a_bad_utf8_byte_is_reported_on_its_own_line_and_every_such_line_is_named():
    data = GOOD_TSV.encode() + b"2\t13\tjoy\tI felt \xff fine.\tI felt ... fine.\t1\t1\t1\n"
    data += b"3\t14\tjoy\tok\tok\t1\t1\t1\n4\t15\tfear\t\xc3(\tx\t1\t1\t1\n"
    with pytest.raises(ImportFileError) as caught:
        read_items(data, "tsv")
    assert [p.line for p in caught.value.problems] == [4, 6]
    assert "line 4: not UTF-8 text (byte 0xff" in str(caught.value)
    assert "line 6: not UTF-8 text (byte 0xc3" in str(caught.value)


def test_a_bad_utf8_byte_in_a_jsonl_import_is_an_import_error_naming_its_line():
    good = '{"text_id": "a", "emotion": "joy", "text": "x"}\n'
    data = (good * 2).encode() + b'{"text_id": "b", "emotion": "joy", "text": "caf\xe9"}\n'
    with pytest.raises(ImportFileError, match="line 3: not UTF-8 text"):
        read_items(data, "jsonl")
    with pytest.raises(ImportFileError, match="line 3: not UTF-8 text"):
        read_jsonl(data)  # the reader of prediction and pass imports
    assert Item.objects.count() == 0


def test_a_missing_column_is_reported_once_not_once_per_row():
    data = "text_id,emotion\n" + "".join(f"{i},joy\n" for i in range(30))
    with pytest.raises(ImportFileError) as caught:
        read_items(data, "csv")
    assert len(caught.value.problems) == 1
    [problem] = caught.value.problems
    assert problem.line == 1 and "no generated_text or text column" in str(problem)
    assert "the header has: text_id, emotion" in str(problem)


def test_a_field_missing_from_every_jsonl_line_is_reported_once_but_from_some_lines_on_each():
    none_have_it = "".join(f'{{"text_id": "{i}", "text": "x"}}\n' for i in range(5))
    with pytest.raises(ImportFileError) as caught:
        read_items(none_have_it, "jsonl")
    assert [str(p) for p in caught.value.problems] == ["no line has an emotion or reference_label field"]
    some = '{"text_id": "1", "emotion": "joy", "text": "x"}\n{"text_id": "2", "text": "y"}\n'
    with pytest.raises(ImportFileError) as caught:
        read_items(some, "jsonl")
    assert [str(p) for p in caught.value.problems] == [
        "line 2, column emotion or reference_label: missing or empty"
    ]


def test_every_bad_jsonl_line_is_reported_up_to_the_cap():
    good = '{"text_id": "%d", "emotion": "joy", "text": "x"}'
    lines = [good % 1, '{"text_id": 2,', good % 3, "[1, 2]", good % 5, "not json"]
    with pytest.raises(ImportFileError) as caught:
        read_items("\n".join(lines) + "\n", "jsonl")
    assert [p.line for p in caught.value.problems] == [2, 4, 6]
    many = "\n".join(["{"] * (MAX_REPORTED + 7)) + "\n"
    with pytest.raises(ImportFileError) as caught:
        read_jsonl(many)
    shown = caught.value.problems
    assert len(shown) == MAX_REPORTED + 1 and shown[-1].line == 0
    assert str(shown[-1]) == "... and 7 more" and str(caught.value).endswith("; ... and 7 more")
    assert [p.line for p in shown[:-1]] == list(range(1, MAX_REPORTED + 1))


def test_jsonl_lines_are_split_at_newlines_only_not_at_unicode_line_separators():
    # U+2028 is legal unescaped inside a JSON string; str.splitlines() cut the line there
    data = '{"text_id": "a", "emotion": "joy", "text": "one\u2028two"}\n{"text_id": 2,\n'
    with pytest.raises(ImportFileError) as caught:
        read_items(data, "jsonl")
    assert [str(p)[:26] for p in caught.value.problems] == ["line 2: malformed JSON: Ex"]
    rows = read_items(data.split("\n")[0], "jsonl")
    assert rows[0]["text"] == "one\u2028two"


def test_the_import_page_says_how_many_problems_it_did_not_list(client, admin_user, tmp_path, settings):
    client.force_login(admin_user)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(["{"] * (MAX_REPORTED + 3)) + "\n")
    response = _preview(client, bad)
    assert response.status_code == 400
    assert "... and 3 more" in response.content.decode()
    assert not Item.objects.exists()
