"""Helpers of the HTTP API tests: clients per role and multipart uploads (on top of ``factories``)."""

from __future__ import annotations

from typing import Any

from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from leaderboard.accounts.models import User
from tests.service.factories import LABELS, csv_bytes, make_truth

PASSWORD = "a-long-test-password-123"
# Tests make many users; the production hasher is slow on purpose.
FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def client_for(user: User | None, *, address: str | None = None) -> APIClient:
    """An API client for ``user``; each user sends from an address of their own (``10.9.x.y``, from the
    user's id) unless ``address`` says otherwise, as real participants do: a challenge counts one quota
    per address (``Challenge.quota_per_address``)."""
    if address is None:
        address = f"10.9.{user.pk // 250 % 250}.{user.pk % 250 + 1}" if user is not None else "127.0.0.1"
    client = APIClient(REMOTE_ADDR=address)
    if user is not None:
        client.force_authenticate(user=user)
    return client


def truth_file(n: int = 240, *, name: str = "truth.csv") -> tuple[SimpleUploadedFile, list[str], list[str]]:
    ids, truth = make_truth(n)
    return SimpleUploadedFile(name, csv_bytes("id,label", list(zip(ids, truth, strict=True)))), ids, truth


def file(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="text/csv")


def create_challenge_over_http(
    client: APIClient, *, slug: str = "toy", resamples: int = 500, n: int = 240, **fields: Any
) -> tuple[list[str], list[str]]:
    """The organizer's two calls: create the challenge, then its task from a labels CSV."""
    response = client.post(
        "/api/challenges/",
        {"slug": slug, "title": f"Toy {slug}", "resamples": resamples, **fields},
        format="json",
    )
    assert response.status_code == 201, response.content
    truth, ids, labels = truth_file(n)
    response = client.post(
        f"/api/challenges/{slug}/tasks/",
        {
            "slug": "main",
            "title": "Main task",
            "metric": "accuracy",
            "labels": ",".join(LABELS),
            "truth": truth,
        },
        format="multipart",
    )
    assert response.status_code == 201, response.content
    return ids, labels


def reset_throttles() -> None:
    """Throttle counters live in the cache, which outlives a test."""
    cache.clear()
