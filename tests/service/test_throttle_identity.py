"""Throttles key on the client address; a forged X-Forwarded-For must not give a fresh allowance."""

import pytest
from django.conf import settings as django_settings
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from tests.service.api_support import reset_throttles


@pytest.mark.django_db
def test_forged_forwarded_for_does_not_escape_the_token_throttle(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The project's own setting (no NUM_PROXIES override here): X-Forwarded-For is not trusted.
    assert django_settings.REST_FRAMEWORK["NUM_PROXIES"] == 0
    # DRF reads the rates once, into a class attribute; patch that.
    monkeypatch.setattr(
        SimpleRateThrottle, "THROTTLE_RATES", {"token": "2/min", "login": "2/min", "submit": "2/min"}
    )
    reset_throttles()
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
    assert codes == [401, 401, 429, 429]  # wrong credentials: 401 (docs/api.md)
