"""The demo's text challenge (issue 20): Django's own translations, real systems, through the service."""

from __future__ import annotations

import json
import time

import pytest
import sacrebleu

from leaderboard.demo.load import TEXT, _text_challenge, _user
from leaderboard.demo.text import LANGUAGES, SYSTEMS, language_task, read_po
from leaderboard.rankings.models import BoardSnapshot, ChallengeSummary
from leaderboard.submissions.models import Status, Submission


def test_the_po_reader_keeps_translated_singular_messages(tmp_path) -> None:
    po = tmp_path / "x.po"
    po.write_text(
        'msgid ""\nmsgstr ""\n"Language: de\\n"\n\n'
        '#: a.py:1\nmsgid "Save"\nmsgstr "Sichern"\n\n'
        '#, fuzzy\nmsgid "Delete"\nmsgstr "Löschen"\n\n'
        'msgid "one item"\nmsgid_plural "%(n)s items"\nmsgstr[0] "ein"\nmsgstr[1] "viele"\n\n'
        'msgid ""\n"Long "\n"message"\nmsgstr "Lange "\n"Nachricht"\n\n'
        'msgid "Untranslated"\nmsgstr ""\n',
        encoding="utf-8",
    )
    assert read_po(po) == [("Save", "Sichern"), ("Long message", "Lange Nachricht")]


def test_the_demo_builds_a_translation_board_per_language_and_a_summary(transactional_db) -> None:
    started = time.perf_counter()
    challenge = _text_challenge(organizer=_user("organizer", staff=True), say=lambda _: None)
    elapsed = time.perf_counter() - started
    assert challenge.slug == TEXT
    assert Submission.objects.filter(challenge=challenge).exclude(status=Status.SCORED).count() == 0
    for lang in LANGUAGES:
        t = language_task(lang)
        assert t.n_test > 100 and t.n_train > 4 * t.n_test
        refs = [json.loads(line)["reference"] for line in t.truth_jsonl.decode().splitlines()]
        snap = BoardSnapshot.objects.filter(task__slug=lang).order_by("-sequence").first()
        assert snap is not None and len(snap.rows) == len(SYSTEMS)
        for row in snap.rows:
            hyps = t.outputs[row["name"]].decode().split("\n")[:-1]
            assert row["value"] == sacrebleu.CHRF().corpus_score(hyps, [refs]).score
            bleu, ter = row["secondary"]  # the secondary metrics, in the organizer's order
            assert bleu["metric"] == "bleu" and ter["metric"] == "ter"
            assert bleu["value"] == pytest.approx(sacrebleu.BLEU().corpus_score(hyps, [refs]).score, abs=1e-9)
            assert ter["value"] == pytest.approx(sacrebleu.TER().corpus_score(hyps, [refs]).score, abs=1e-9)
        assert (
            "adjusted across 2 metrics (Holm); primary: chrf" in snap.signature["secondary_metrics"]["label"]
        )
        assert snap.rows[-1]["name"] == "copy-source"  # the baseline is last in every language
    summary = ChallengeSummary.objects.filter(challenge=challenge).order_by("-sequence").first()
    assert summary is not None
    from django.test import Client

    page = Client().get(f"/c/{TEXT}/summary/")
    assert page.status_code == 200 and "Critical-difference diagram" in page.content.decode()
    svg = Client().get(f"/c/{TEXT}/critical-difference.svg")
    assert svg.status_code == 200 and b"<svg" in svg.content and b"copy-source" in svg.content
    print(f"text demo challenge built in {elapsed:.1f} s")
