"""Small things a new user noticed on the site (issue 13, point 3), each pinned by a test."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from tests.service import web_support as ws

pytestmark = pytest.mark.django_db

_DESCRIBED = re.compile(r'aria-describedby="([^"]+)"')
_ID = re.compile(r'\sid="([^"]+)"')


def _dangling_describedby(html: str) -> list[str]:
    ids = set(_ID.findall(html))
    return [ref for refs in _DESCRIBED.findall(html) for ref in refs.split() if ref not in ids]


def test_form_help_and_errors_are_linked_to_their_inputs(client: Client) -> None:
    # Every aria-describedby named ids that did not exist (issue 13 bug 7; axe: aria-valid-attr-value).
    organizer = ws.user("olga", staff=True)
    c = ws.challenge(organizer)
    ws.task(c)
    client.force_login(organizer)
    pages = {
        "new challenge": client.post(reverse("challenge_new"), {"title": ""}),
        "add task": client.post(reverse("task_new", args=[c.slug]), {"title": ""}),
        "submit": client.post(
            reverse("submit", args=[c.slug]),
            {"name": "x", "file_main": SimpleUploadedFile("p.csv", b"id,prediction\nnope,cat\n")},
        ),
        "team": client.get(reverse("team", args=[c.slug])),
    }
    for page, response in pages.items():
        html = response.content.decode()
        assert response.status_code in (200, 400), page
        assert _DESCRIBED.search(html), f"{page}: no described field to check"
        assert _dangling_describedby(html) == [], page
    # the errors themselves are what an error reference points at
    submit_html = pages["submit"].content.decode()
    assert 'id="id_file_main_error"' in submit_html


def test_task_form_names_the_split_values_the_server_accepts(client: Client) -> None:
    organizer = ws.user("olga", staff=True)
    c = ws.challenge(organizer)
    client.force_login(organizer)
    html = client.get(reverse("task_new", args=[c.slug])).content.decode()
    assert "true/false" not in html
    assert "&#x27;public&#x27; or &#x27;private&#x27;" in html
