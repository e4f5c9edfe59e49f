import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("name", ["home", "explain", "rule_set"])
def test_pages_require_login(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_login_with_a_demo_style_user_lands_on_home_with_roles(client, annotator):
    response = client.post(reverse("login"), {"username": "alice", "password": "alice-pw"}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("home")
    body = response.content.decode()
    assert "Welcome, alice" in body
    assert "alice · annotator" in body
    assert reverse("admin:index") not in body


def test_wrong_password_is_refused_with_a_message(client, annotator):
    response = client.post(reverse("login"), {"username": "alice", "password": "nope"})
    assert response.status_code == 200
    assert "didn't match. Please try again" in response.content.decode()


def test_admin_sees_the_admin_link_and_a_user_without_role_is_told(client, admin_user, outsider):
    client.force_login(admin_user)
    assert reverse("admin:index") in client.get(reverse("home")).content.decode()
    client.force_login(outsider)
    page = client.get(reverse("home")).content.decode()
    assert "You have no role in this project, so nothing else is open to you" in page
    assert f'href="{reverse("guidelines")}"' not in page and f'href="{reverse("account_tokens")}"' not in page


def test_logout_is_a_post(client, annotator):
    client.force_login(annotator)
    assert client.get(reverse("logout")).status_code == 405
    assert client.post(reverse("logout")).status_code == 302
    assert client.get(reverse("home")).status_code == 302


def test_sandbox_renders_lines_and_routes_from_the_query_string(client, annotator):
    client.force_login(annotator)
    params = {
        "trigger": "someone-did",
        "agency": "i",
        "want": "want",
        "realization": "happened",
        "evaluation": "feel-good",
        "eval_target": "self",
    }
    response = client.get(reverse("explain"), params)
    body = response.content.decode()
    assert "<html" in body  # the full page without htmx
    assert "I did something" in body
    assert 'data-label="pride"' in body
    assert "pride → joy" in body  # multi-rule shown


def test_sandbox_htmx_request_gets_only_the_preview_fragment(client, annotator):
    client.force_login(annotator)
    response = client.get(reverse("explain"), {"evaluation": "feel-bad"}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert "<html" not in body
    assert 'data-label="abstain"' in body and "no-rule" in body
    assert "I feel something bad because of this" in body


def test_sandbox_shows_illegal_values_instead_of_failing(client, annotator):
    client.force_login(annotator)
    response = client.get(reverse("explain"), {"want": "wish"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    body = response.content.decode()
    assert "Not yet a legal explication" in body and "&#x27;wish&#x27; is not an allowed value" in body
    assert "illegal" in body


def test_residue_makes_the_sandbox_abstain(client, annotator):
    client.force_login(annotator)
    response = client.get(reverse("explain"), {"evaluation": "neither", "residue": "remembered fear"})
    assert "schema-residue" in response.content.decode()


def test_rule_set_page_lists_rules_regions_and_the_suite(client, adjudicator):
    client.force_login(adjudicator)
    body = client.get(reverse("rule_set")).content.decode()
    assert "Rule set v1" in body
    assert body.count("<tr>") >= 14
    assert "someone-did-something" in body  # canonical value, never the alias
    assert "passed" in body
    assert "1,866,240" in body
    assert "31,104" in body and "11,700" in body  # guilt satisfies 31,104 but routes 11,700


def test_rounds_are_not_added_in_the_django_admin_where_no_assignments_would_be_made(client, admin_user):
    admin_user.is_superuser = True
    admin_user.save()
    client.force_login(admin_user)
    assert client.get("/admin/annotator/round/add/").status_code == 403
    assert client.get("/admin/annotator/round/").status_code == 200


def test_the_django_admin_refuses_a_control_character_in_a_round_or_item_set_name(
    client, admin_user, prefilled_round
):
    """Found by a security probe: the API, the pages and the commands refuse a newline in a round
    name (it breaks the round's CSV downloads' headers), but the Django admin saved one."""
    admin_user.is_superuser = admin_user.is_staff = True
    admin_user.save()
    client.force_login(admin_user)
    url = f"/admin/annotator/round/{prefilled_round.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None}
    data |= {"name": "adm\nround\x07", "pool": [u.pk for u in prefilled_round.pool.all()]}
    data["item_set"] = prefilled_round.item_set_id
    response = client.post(url, data)
    assert response.status_code == 200 and "no control characters" in response.content.decode()
    prefilled_round.refresh_from_db()
    assert prefilled_round.name == "prefilled"
    item_set = prefilled_round.item_set
    response = client.post(
        f"/admin/annotator/itemset/{item_set.pk}/change/",
        {"name": "a\tb", "tier": item_set.tier, "seed": item_set.seed or 0, "items": []},
    )
    item_set.refresh_from_db()
    assert response.status_code == 200 and "\t" not in item_set.name
