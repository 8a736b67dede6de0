"""Push tokens created in the web UI: signed-in users only, shown once, stored as a hash."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from django.test import Client

from intake.push_tokens import token_check
from sessions.models import StreamToken
from tests.pages import one

pytestmark = pytest.mark.django_db


def test_anonymous_users_cannot_create_tokens(client: Client) -> None:
    assert client.post("/tokens/?format=json", {"agent": "remote"}).status_code == 403
    response = client.post("/tokens/", {"agent": "remote"})
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert StreamToken.objects.count() == 0


def test_signed_in_user_gets_a_working_token_shown_once(client: Client, django_user_model) -> None:
    django_user_model.objects.create_user("ana", password="pw-123456")
    client.login(username="ana", password="pw-123456")
    home = BeautifulSoup(client.get("/").content, "html.parser")
    assert home.select_one("form.token-form input[name=agent]") is not None
    response = client.post("/tokens/", {"agent": "remote-box"})
    page = BeautifulSoup(response.content, "html.parser")
    token = one(page, "#token").get_text()
    assert token_check("remote-box", token)
    assert StreamToken.objects.get(agent_name="remote-box").token_hash != token
    assert "python -m memviz.push" in page.get_text()
    # a new token replaces the old one
    second = client.post("/tokens/?format=json", {"agent": "remote-box"}).json()["token"]
    assert token_check("remote-box", second) and not token_check("remote-box", token)


def test_bad_agent_name_is_refused(client: Client, django_user_model) -> None:
    django_user_model.objects.create_user("ana", password="pw-123456")
    client.login(username="ana", password="pw-123456")
    response = client.post("/tokens/?format=json", {"agent": "../etc"})
    assert response.status_code == 400 and "agent name" in response.json()["error"]
    assert StreamToken.objects.count() == 0


def test_the_tokens_page_json_lists_tokens_and_share_links_never_their_secrets(
    client: Client, django_user_model
) -> None:
    from intake.page_types import TokensPage
    from sessions.models import Agent
    from sessions.share_links import link_create
    from tests.shapes import shape_problems

    ana = django_user_model.objects.create_user("ana", password="pw-123456")
    client.login(username="ana", password="pw-123456")
    token = client.post("/tokens/?format=json", {"agent": "remote-box"}).json()["token"]
    agent = Agent.objects.create(slug="main", name="main", path="/nowhere")
    link = link_create(agent, None, user=ana)
    page = client.get("/tokens/?format=json")
    assert page.status_code == 200 and shape_problems(page.json(), TokensPage) == []
    data = page.json()
    assert [t["agent"] for t in data["tokens"]] == ["remote-box"] and data["tokens"][0]["may_manage"]
    assert [(s["agent"], s["state"]) for s in data["share_links"]] == [("main", "active")]
    secret = link.path.rsplit("#", 1)[1]
    assert token not in page.content.decode() and secret not in page.content.decode()


def test_a_script_creates_a_token_with_a_json_body(client: Client, django_user_model) -> None:
    """A JSON body is read as every write reads one, and answered in JSON: the token, or the
    reason it was refused (nothing stored)."""
    import json

    django_user_model.objects.create_user("ana", password="pw-123456")
    client.login(username="ana", password="pw-123456")

    def post(body: str):
        return client.post("/tokens/", body, content_type="application/json")

    made = post(json.dumps({"agent": "remote-box"}))
    assert made.status_code == 201 and token_check("remote-box", made.json()["token"])
    for body, error in [
        ("{not json", "the request body is not valid JSON"),
        (json.dumps({"agent": 5}), "'agent' must be text"),
    ]:
        refused = post(body)
        assert (refused.status_code, refused.json()["error"]) == (400, error)
    assert list(StreamToken.objects.values_list("agent_name", flat=True)) == ["remote-box"]
