"""Throttles key on the client address; a forged X-Forwarded-For must not give a fresh allowance."""

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient


@pytest.mark.django_db
def test_forged_forwarded_for_does_not_escape_the_token_throttle(settings) -> None:  # type: ignore[no-untyped-def]
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "token": "2/min"},
    }
    cache.clear()
    client = APIClient()
    codes = [
        client.post(
            "/api/auth/token/",
            {"username": "nobody", "password": "wrong"},
            format="json",
            HTTP_X_FORWARDED_FOR=f"10.0.0.{k}",
        ).status_code
        for k in range(4)
    ]
    assert codes[:2] == [400, 400]
    assert codes[2:] == [429, 429]
