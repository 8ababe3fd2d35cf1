"""Password reset on the site: Django's views, the site's templates, email through EMAIL_BACKEND."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from tests.service import web_support as ws

pytestmark = pytest.mark.django_db


def test_a_forgotten_password_is_reset_through_the_emailed_link(client: Client) -> None:
    alice = ws.user("alice")
    alice.email = "alice@example.org"
    alice.save()
    assert "Reset it" in client.get(reverse("login")).content.decode()
    response = client.post(reverse("password_reset"), {"email": "alice@example.org"})
    assert response.status_code == 302 and response["Location"] == reverse("password_reset_done")
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["alice@example.org"] and '"alice"' in message.body
    link = re.search(r"https?://[^/]+(/accounts/password-reset/[^/]+/[^/]+/)", message.body)
    assert link
    form = client.get(link.group(1), follow=True)  # Django swaps the token for a session marker
    assert "Choose a new password" in form.content.decode()
    done = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "a-brand-new-password-7", "new_password2": "a-brand-new-password-7"},
    )
    assert done.status_code == 302 and done["Location"] == reverse("password_reset_complete")
    assert Client().login(username="alice", password="a-brand-new-password-7")
    # the link works once
    again = client.get(link.group(1), follow=True).content.decode()
    assert "This link cannot be used" in again


def test_an_unknown_address_gets_the_same_answer_and_no_mail(client: Client) -> None:
    response = client.post(reverse("password_reset"), {"email": "nobody@example.org"})
    assert response.status_code == 302 and response["Location"] == reverse("password_reset_done")
    assert mail.outbox == []


def test_reset_requests_are_throttled(client: Client, settings) -> None:
    from tests.service.api_support import reset_throttles

    reset_throttles()
    from rest_framework.throttling import SimpleRateThrottle

    rates = dict(SimpleRateThrottle.THROTTLE_RATES)
    SimpleRateThrottle.THROTTLE_RATES = {**rates, "login": "2/min"}
    try:
        codes = [
            client.post(reverse("password_reset"), {"email": "x@example.org"}).status_code for _ in range(3)
        ]
    finally:
        SimpleRateThrottle.THROTTLE_RATES = rates
        reset_throttles()
    assert codes == [302, 302, 429]
