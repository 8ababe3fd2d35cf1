"""One access rule per kind of object, shared by the API and the site: a submission is visible to its
team and the challenge's organizers (and staff); organizer actions to the organizers (and staff)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from rest_framework.test import APIClient

from leaderboard.challenges.selectors import require_organizer, user_is_organizer
from leaderboard.core.exceptions import NotFoundError, PermissionDeniedError
from leaderboard.submissions.selectors import submission_get_visible, submission_visible
from leaderboard.submissions.services import submission_create
from tests.service.factories import challenge_with_task, predictions, upload, user

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_submission_is_visible_to_its_team_and_the_organizers_only_in_the_api_and_on_the_site() -> None:
    organizer = user("org")
    challenge, _task, ids, truth = challenge_with_task(organizer, resamples=200)
    author, stranger, staff = user("author"), user("stranger"), user("staff", is_staff=True)
    s = submission_create(
        challenge=challenge,
        user=author,
        name="a",
        files={"main": [upload("a.csv", predictions(ids, truth, 0.8, 1))]},
    )
    expected = {author: True, organizer: True, staff: True, stranger: False, AnonymousUser(): False}
    for who, visible in expected.items():
        assert submission_visible(submission=s, user=who) is visible
        if not visible:
            with pytest.raises(NotFoundError):
                submission_get_visible(submission_id=s.pk, user=who)
    for who, visible in expected.items():
        if isinstance(who, AnonymousUser):
            continue
        api, site = APIClient(), Client()
        api.force_authenticate(who)
        site.force_login(who)
        assert api.get(f"/api/submissions/{s.pk}/").status_code == (200 if visible else 404)
        assert site.get(f"/submissions/{s.pk}/").status_code == (200 if visible else 404)


def test_organizer_actions_are_for_the_organizers_and_staff() -> None:
    organizer = user("org")
    challenge, *_ = challenge_with_task(organizer, resamples=200)
    for who, allowed in ((organizer, True), (user("staff", is_staff=True), True), (user("p"), False)):
        assert user_is_organizer(challenge=challenge, user=who) is allowed
        if allowed:
            require_organizer(challenge=challenge, user=who)
        else:
            with pytest.raises(PermissionDeniedError):
                require_organizer(challenge=challenge, user=who)
    assert not user_is_organizer(challenge=challenge, user=AnonymousUser())
