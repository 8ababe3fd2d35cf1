"""A task's and a challenge's settings are declared once (``challenges.settings_spec``): the site's form,
the API's serializer (hence the OpenAPI schema) and ``lb add-task`` offer the same settings with the same
ranges, and the services refuse a value outside a range with the declaration's message."""

from __future__ import annotations

import math
from typing import Any

import click
import pytest

from leaderboard.api.serializers import (
    ChallengeInputSerializer,
    TaskInputSerializer,
    TaskSettingsInputSerializer,
)
from leaderboard.challenges import models
from leaderboard.challenges.services import challenge_create, task_create
from leaderboard.challenges.settings_spec import (
    CHALLENGE,
    CHALLENGE_SETTINGS_SPEC,
    TASK,
    TASK_SETTINGS,
    Setting,
)
from leaderboard.cli.main import cli
from leaderboard.core.exceptions import ApplicationError
from leaderboard.web.forms import ChallengeForm, TaskForm
from tests.service.factories import csv_bytes, make_truth, user


def _bounds(field: Any) -> tuple[Any, Any]:
    return getattr(field, "min_value", None), getattr(field, "max_value", None)


def _click_bounds(option: click.Option) -> tuple[Any, Any, bool]:
    kind = option.type
    if isinstance(kind, click.IntRange | click.FloatRange):
        return kind.min, kind.max, kind.min_open
    return None, None, False


def _declared_bounds(setting: Setting) -> tuple[Any, Any]:
    return setting.minimum, setting.maximum


def _choices(field: Any) -> list[str]:
    if isinstance(field, click.Option):
        return list(field.type.choices) if isinstance(field.type, click.Choice) else []
    choices = getattr(field, "choices", None)
    return [str(c[0]) for c in choices] if isinstance(choices, list) else list(choices or [])


def lb_options() -> dict[str, click.Parameter]:
    command = cli.commands["add-task"]
    return {p.name: p for p in command.params if p.name not in (None, "challenge")}


def test_the_form_the_serializer_and_lb_offer_the_same_task_settings() -> None:
    form = TaskForm(metric_choices=[("accuracy", "Accuracy")]).fields
    serializer = TaskInputSerializer().fields
    lb = lb_options()
    declared = [s.name for s in TASK_SETTINGS]
    # 17 + the text metric options (tokenize, lowercase, smoothing, effective order) + secondary metrics
    assert len(declared) == 22
    assert list(form) == declared  # the page shows them in the declared order
    assert set(serializer) == set(declared)
    assert set(lb) == set(declared)  # the hidden-labels file is lb's TRUTH argument
    assert isinstance(lb["truth"], click.Argument)


@pytest.mark.parametrize("setting", [s for s in TASK_SETTINGS if s.kind in ("int", "float")], ids=str)
def test_a_numeric_task_setting_has_one_range_at_every_door(setting: Setting) -> None:
    form = TaskForm(metric_choices=[]).fields[setting.name]
    serializer = TaskInputSerializer().fields[setting.name]
    option = lb_options()[setting.name]
    assert isinstance(option, click.Option)
    assert _bounds(form) == _declared_bounds(setting)
    low, high, open_low = _click_bounds(option)
    assert (high, open_low) == (setting.maximum, setting.positive)
    assert low == (0 if setting.positive else setting.minimum)
    # the API states lb's range: a positive setting is above 0, an excluded end the schema says
    # (exclusiveMinimum), so schemathesis does not generate a 0 as valid
    assert _bounds(serializer) == (low, high)
    assert getattr(serializer, "exclusive_min", False) == open_low


@pytest.mark.parametrize("setting", [s for s in TASK_SETTINGS if s.choices], ids=str)
def test_a_choice_task_setting_has_one_set_of_values_at_every_door(setting: Setting) -> None:
    form = TaskForm(metric_choices=[]).fields[setting.name]
    serializer = TaskInputSerializer().fields[setting.name]
    assert (
        _choices(form) == _choices(serializer) == _choices(lb_options()[setting.name]) == list(setting.values)
    )


def test_the_board_mode_patch_takes_the_declared_ranges_too() -> None:
    fields = TaskSettingsInputSerializer().fields
    assert _bounds(fields["ladder_z"]) == _declared_bounds(TASK["ladder_z"])
    assert _choices(fields["public_mode"]) == list(TASK["public_mode"].values)


def test_the_form_and_the_serializer_offer_the_same_challenge_settings_with_the_same_ranges() -> None:
    form = ChallengeForm().fields
    serializer = ChallengeInputSerializer().fields
    declared = [s.name for s in CHALLENGE_SETTINGS_SPEC]
    assert set(form) - {"slug"} == set(declared) == set(serializer) - {"slug"}
    for setting in CHALLENGE_SETTINGS_SPEC:
        if setting.kind in ("int", "float") and setting.maximum is not None:
            assert (
                _bounds(form[setting.name]) == _bounds(serializer[setting.name]) == _declared_bounds(setting)
            )
        if setting.choices:
            assert _choices(form[setting.name]) == _choices(serializer[setting.name]) == list(setting.values)


@pytest.mark.parametrize(
    ("choices", "setting"),
    [
        (models.PublicMode, TASK["public_mode"]),
        (models.Stratify, TASK["stratify"]),
        (models.Visibility, CHALLENGE["visibility"]),
        (models.EntrySelection, CHALLENGE["entry_selection"]),
        (models.IntervalMethod, CHALLENGE["interval_method"]),
        (models.Correction, CHALLENGE["correction"]),
    ],
)
def test_the_models_store_the_declared_choices(choices: Any, setting: Setting) -> None:
    assert [tuple(c) for c in choices.choices] == list(setting.choices)


def test_the_model_validators_are_the_declared_ranges() -> None:
    def bounds(model: Any, name: str) -> tuple[Any, Any]:
        field = model._meta.get_field(name)
        low = next((v.limit_value for v in field.validators if v.code == "min_value"), None)
        high = next((v.limit_value for v in field.validators if v.code == "max_value"), None)
        return low, high

    for name in ("max_runs", "decimals", "ladder_z"):
        assert bounds(models.Task, name) == _declared_bounds(TASK[name])
    for name in ("confidence", "resamples"):
        assert bounds(models.Challenge, name) == _declared_bounds(CHALLENGE[name])


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (11.0, "`ladder_z` must lie between 0 and 10."),
        (-0.5, "`ladder_z` must lie between 0 and 10."),
        (math.nan, "`ladder_z` must be a number."),
        (0.0, None),
        (10.0, None),
    ],
)
def test_refusal_messages(value: float, message: str | None) -> None:
    assert TASK["ladder_z"].refusal(value) == message


def test_the_eta_must_be_strictly_positive_at_every_door() -> None:
    assert TASK["ladder_eta"].refusal(0.0) == "`ladder_eta` must be a positive number."
    assert TASK["ladder_eta"].refusal(1e-12) is None
    serializer = TaskSettingsInputSerializer(data={"public_mode": "ladder-free", "ladder_eta": 0})
    assert not serializer.is_valid()
    assert serializer.errors["ladder_eta"] == ["`ladder_eta` must be a positive number."]
    option = lb_options()["ladder_eta"]
    with pytest.raises(click.BadParameter):
        option.type.convert("0", option, None)  # type: ignore[union-attr]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("setting", "value"),
    [("max_runs", 21), ("decimals", 0), ("ignore_index", 70_000), ("ladder_z", 10.5), ("stratify", "x")],
)
def test_the_service_refuses_a_task_setting_outside_its_range_with_the_declared_message(
    setting: str, value: Any
) -> None:
    challenge = challenge_create(organizer=user("org"), slug="c", title="C")
    ids, truth = make_truth(60)
    with pytest.raises(ApplicationError) as refused:
        task_create(
            challenge=challenge, slug="t", title="T", metric="accuracy", truth_name="t.csv",
            truth=csv_bytes("id,label", list(zip(ids, truth, strict=True))), **{setting: value},
        )  # fmt: skip
    assert refused.value.message == TASK[setting].refusal(value)
    assert refused.value.extra == {"field": setting}
    assert not models.Task.objects.exists()


@pytest.mark.django_db
def test_the_service_refuses_a_challenge_setting_outside_its_range_with_the_declared_message() -> None:
    with pytest.raises(ApplicationError) as refused:
        challenge_create(organizer=user("org"), slug="c", title="C", resamples=50)
    assert refused.value.message == "`resamples` must lie between 100 and 100000."
    form = ChallengeForm(data={"title": "C", "start": "2026-01-01T00:00", "resamples": "50"})
    assert not form.is_valid()
    assert form.errors["resamples"] == [refused.value.message]
    serializer = ChallengeInputSerializer(data={"title": "C", "resamples": 50})
    assert not serializer.is_valid()
    assert serializer.errors["resamples"] == [refused.value.message]
