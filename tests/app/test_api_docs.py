"""The API's documentation page under the Content-Security-Policy: Swagger UI's start-up script
comes from a file and the page has no inline style."""

from django.urls import reverse

from tests.security import inline_code


def test_the_api_docs_page_runs_no_inline_code(client, annotator):
    client.force_login(annotator)
    response = client.get(reverse("api_docs"))
    assert response.status_code == 200
    page = response.content.decode()
    assert inline_code(page) == []
    assert f'<script src="{reverse("api_docs")}?script="></script>' in page
    script = client.get(reverse("api_docs") + "?script=")
    assert script.status_code == 200 and "SwaggerUIBundle" in script.content.decode()
