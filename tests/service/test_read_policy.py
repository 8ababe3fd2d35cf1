"""One read policy (issue 19, item 3): what a reader may see of a board is decided by the board mode's
policy class in ``rankings.policy``, which every channel asks through ``reader_view``; nothing else in the
service reads the mode to decide it.

The channels themselves are scanned for leaks, for every mode, in ``test_ladder_board.py`` and
``test_participant_channels.py``; the bytes every channel gives are pinned in ``test_golden_boards.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.contrib.auth.models import AnonymousUser

from leaderboard.challenges.models import PublicMode
from leaderboard.challenges.services import challenge_reveal_private, task_public_mode_set
from leaderboard.rankings.policy import MODES, BoardMode, Channel, LadderMode, mode_of, reader_view
from tests.service.factories import challenge_with_task, user

ROOT = Path(__file__).resolve().parents[2] / "leaderboard"
POLICY = ROOT / "rankings" / "policy.py"
#: The names visibility used to be decided by, at 16 call sites in 7 files (architecture review, §5.3).
OLD_DOORS = {"hides", "hides_public", "any_hidden", "is_ladder", "_ladder_hidden", "ladder_decimals"}
#: Modules that declare or validate the mode as a task setting (they do not decide what a reader sees).
SETTINGS_MODULES = {ROOT / "challenges" / "models.py", ROOT / "challenges" / "services.py"}


def _python_files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if "migrations" not in p.parts and p != POLICY)


def test_only_the_policy_module_reads_the_board_mode() -> None:
    """Outside ``rankings.policy``: no ``task.public_mode`` read, no Ladder member of ``PublicMode``
    compared (outside the settings' declaration), and none of the old per-door helpers."""
    found = []
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            where = f"{path.relative_to(ROOT.parent)}:{getattr(node, 'lineno', 0)}"
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "public_mode"
                and isinstance(node.ctx, ast.Load)
            ):
                found.append(f"{where} reads .public_mode")
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "PublicMode"
                and node.attr in ("LADDER", "LADDER_FREE")
                and path not in SETTINGS_MODULES
            ):
                found.append(f"{where} compares PublicMode.{node.attr}")
            name = (
                node.name
                if isinstance(node, ast.FunctionDef)
                else node.attr
                if isinstance(node, ast.Attribute)
                else node.id
                if isinstance(node, ast.Name)
                else None
            )
            if name in OLD_DOORS:
                found.append(f"{where} uses {name}")
    assert not found, "visibility decided outside rankings.policy:\n" + "\n".join(found)


def test_templates_do_not_branch_on_the_mode_except_the_organizers_settings_page() -> None:
    templates = [
        p
        for p in (ROOT / "web" / "templates").rglob("*.html")
        if "public_mode" in p.read_text() and "organizer" not in p.parts
    ]
    assert templates == []


def test_the_ast_check_catches_a_door_that_reads_the_mode() -> None:
    """The check above is not vacuous: a channel written the old way is caught."""
    tree = ast.parse("def door(task, user):\n    return task.public_mode != 'plain'\n")
    assert any(isinstance(n, ast.Attribute) and n.attr == "public_mode" for n in ast.walk(tree))


def test_every_mode_is_one_registered_policy_class() -> None:
    assert set(MODES) == set(PublicMode.values)
    assert type(MODES["plain"]) is BoardMode
    assert all(isinstance(MODES[m], LadderMode) for m in ("ladder", "ladder-free"))
    assert MODES["ladder"].settings == ("ladder_eta",) and MODES["ladder-free"].settings == ("ladder_z",)


@pytest.mark.django_db
def test_who_reads_exactly_under_each_mode() -> None:
    organizer, alice = user("org"), user("alice")
    challenge, task, _ids, _truth = challenge_with_task(organizer, resamples=100, n=60)
    anonymous = AnonymousUser()
    plain = reader_view(task, "public", anonymous)
    assert plain.exact and all(plain.allows(c) for c in Channel)
    for mode, fields in (("ladder", {"ladder_eta": 0.05}), ("ladder-free", {})):
        task = task_public_mode_set(task=task, public_mode=mode, **fields)  # type: ignore[arg-type]
        task.challenge.refresh_from_db()
        assert mode_of(task).name == mode
        for reader in (anonymous, alice):
            view = reader_view(task, "public", reader)
            assert not view.exact and not any(view.allows(c) for c in Channel), (mode, reader)
            assert view.rows(None) == [] and view.csv(None).startswith("rank,name,team")
            assert view.signature(None)["public_mode"] == mode
            assert view.refusal.startswith("Not available under the Ladder")
        assert reader_view(task, "public", organizer).exact
        assert reader_view(task, "private", alice).exact  # the private board is exact once visible
    challenge_reveal_private(challenge=challenge, while_open=True)
    task.challenge.refresh_from_db()
    assert reader_view(task, "public", anonymous).exact  # the reveal ends the Ladder


def test_an_unknown_mode_is_refused_not_shown_in_full() -> None:
    class Fake:
        public_mode = "no-such-mode"
        slug = "t"

    with pytest.raises(ValueError, match="unknown board mode"):
        mode_of(Fake())  # type: ignore[arg-type]
