"""JSON that the parser cannot hold (50,000 levels deep, an integer of 5,001 digits) is a 400
naming the problem in the API and the imports, never a 500 (issue 24)."""

import pytest

from annotator.models import Item

pytestmark = pytest.mark.django_db

DEEP = "[" * 50_000 + "]" * 50_000
HUGE_INT = '{"item_set": ' + "9" * 5_001 + "}"


@pytest.mark.parametrize("body, says", [(DEEP, "nested too deeply"), (HUGE_INT, "number too long")])
def test_an_api_body_beyond_the_parser_is_a_400(client, admin_user, body, says):
    client.force_login(admin_user)
    for url in ("/api/jobs/prefill/", "/api/rounds/", "/api/rule-sets/"):
        response = client.post(url, body, content_type="application/json")
        assert response.status_code == 400, (url, response.status_code)
        assert says in response.json()["detail"], (url, response.json())


@pytest.mark.parametrize(
    "line, says", [(DEEP, "nested too deeply"), ('{"text_id": ' + "9" * 5_001 + "}", "number too long")]
)
def test_an_import_line_beyond_the_parser_is_named(client, admin_user, line, says):
    from annotator.imports import ImportFileError, items_import

    with pytest.raises(ImportFileError) as refused:
        items_import(
            data='{"text_id": "a", "emotion": "joy", "text": "x"}\n' + line + "\n", fmt="jsonl", source="t"
        )
    assert "line 2" in str(refused.value) and says in str(refused.value)
    assert not Item.objects.exists()
