"""Accounts on the site: sign up, log in and out, the API token for the CLI."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from leaderboard.accounts.models import User
from tests.service import web_support as ws

pytestmark = pytest.mark.django_db


def test_sign_up_logs_in(client) -> None:
    response = client.post(
        reverse("signup"),
        {"username": "newbie", "email": "n@example.org", "password1": ws.PASSWORD, "password2": ws.PASSWORD},
    )
    assert response.status_code == 302
    assert User.objects.filter(username="newbie").exists()
    assert "Account (newbie)" in client.get(reverse("home")).content.decode()


def test_sign_up_errors(client) -> None:
    response = client.post(
        reverse("signup"), {"username": "x", "password1": "short", "password2": "different"}
    )
    assert response.status_code == 400
    assert "The two password fields didn" in response.content.decode()
    assert not User.objects.filter(username="x").exists()


def test_a_weak_password_is_reported_under_the_password_field(client) -> None:
    """Issue 22, A7: the validators' errors appeared under "Password confirmation"."""
    response = client.post(reverse("signup"), {"username": "y", "password1": "short", "password2": "short"})
    assert response.status_code == 400
    form = response.context["form"]
    assert any("too short" in e for e in form.errors["password1"]), form.errors
    assert "password2" not in form.errors


def test_log_in_and_out(client) -> None:
    ws.user("alice")
    response = client.post(reverse("login"), {"username": "alice", "password": "wrong"})
    assert (
        response.status_code == 200
        and "Please enter a correct username and password" in response.content.decode()
    )
    response = client.post(reverse("login"), {"username": "alice", "password": ws.PASSWORD})
    assert response.status_code == 302
    assert "Log out" in client.get(reverse("home")).content.decode()
    assert client.post(reverse("logout")).status_code == 302
    assert "Log in" in client.get(reverse("home")).content.decode()


def test_login_form_has_csrf(client) -> None:
    assert "csrfmiddlewaretoken" in client.get(reverse("login")).content.decode()
    strict = Client(enforce_csrf_checks=True)
    ws.user("alice")
    assert strict.post(reverse("login"), {"username": "alice", "password": ws.PASSWORD}).status_code == 403


def test_account_page_shows_token_copy_button_and_cli_usage(client) -> None:
    alice = ws.user("alice")
    client.force_login(alice)
    html = client.get(reverse("account")).content.decode()
    token = Token.objects.get(user=alice).key
    assert f'value="{token}"' in html
    assert f"lb login --token {token} --host http://testserver" in html
    assert 'data-copy="#api-token"' in html
    # The token works for the API.
    assert Token.objects.get(key=token).user == alice


def test_regenerate_token(client) -> None:
    alice = ws.user("alice")
    client.force_login(alice)
    client.get(reverse("account"))
    old = Token.objects.get(user=alice).key
    response = client.post(reverse("token_regenerate"), follow=True)
    new = Token.objects.get(user=alice).key
    assert new != old and new in response.content.decode()
    assert client.get(reverse("token_regenerate")).status_code == 405


def test_account_needs_login(client) -> None:
    response = client.get(reverse("account"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
