"""Text tasks through the service (issue 20): the API, the web forms, the worker, the board, downloads.

Every value is checked against the field's own library computed in the test (sacreBLEU's
``corpus_score``, ``jiwer.wer``/``jiwer.cer``, seqeval's ``f1_score``); the statistics are tested in
tests/stats/test_text.py.
"""

from __future__ import annotations

import json
from typing import Any

import jiwer
import pytest
import sacrebleu
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from leaderboard.challenges.models import Challenge, Task
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.submissions.models import Status, Submission
from tests.service.api_support import client_for
from tests.service.factories import user

REFS = [
    "The dog bit the man.",
    "It was not unexpected.",
    "The man bit him first.",
    "A cat sat on the mat today.",
    "We will meet again next week.",
    "Please close the door quietly.",
    "The train leaves at seven.",
    "She reads a book every night.",
]
GOOD = [
    "The dog bit the man.",
    "It wasn't surprising.",
    "The man had just bitten him.",
    "A cat sat on a mat today.",
    "We meet again next week.",
    "Please close the door.",
    "The train leaves at seven.",
    "She reads books every night.",
]
WEAK = ["the dog", "it was", "man bit", "a cat", "we will", "close door", "train at", "she reads"]
GOLD_TAGS = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "B-ORG", "O"], ["B-PER", "O", "O", "B-LOC", "I-LOC"]]
TOKENS = [["Ada", "Lovelace", "in", "London"], ["the", "ACME", "board"], ["Bob", "went", "to", "New", "York"]]


pytestmark = pytest.mark.usefixtures("fresh_throttles")


def lines(segments: list[str]) -> bytes:
    return "".join(s + "\n" for s in segments).encode()


def conll(tags: list[list[str]], tokens: list[list[str]] | None = TOKENS) -> bytes:
    sents = []
    for k, sent in enumerate(tags):
        sents.append("\n".join((f"{tokens[k][j]} {t}" if tokens else t) for j, t in enumerate(sent)))
    return ("\n\n".join(sents) + "\n").encode()


def make_challenge(client: Any, slug: str) -> None:
    r = client.post("/api/challenges/", {"slug": slug, "title": slug, "resamples": 200}, format="json")
    assert r.status_code == 201, r.content


def add_task(client: Any, slug: str, metric: str, name: str, data: bytes, task: str = "mt"):
    return client.post(
        f"/api/challenges/{slug}/tasks/",
        {"slug": task, "title": metric, "metric": metric, "truth": SimpleUploadedFile(name, data)},
        format="multipart",
    )


def submit(client: Any, slug: str, name: str, fname: str, data: bytes):
    return client.post(
        f"/api/challenges/{slug}/submissions/",
        {"name": name, "file": SimpleUploadedFile(fname, data)},
        format="multipart",
    )


def board(slug: str, task: str = "mt") -> BoardSnapshot:
    snap = (
        BoardSnapshot.objects.filter(task__challenge__slug=slug, task__slug=task)
        .order_by("-sequence")
        .first()
    )
    assert snap is not None
    return snap


def oracle(metric: str, hyps: list[str], refs: list[str]) -> float:
    if metric == "wer":
        return float(jiwer.wer(refs, hyps))
    if metric == "cer":
        return float(jiwer.cer(refs, hyps))
    m = {"bleu": sacrebleu.BLEU(), "chrf": sacrebleu.CHRF(), "chrf++": sacrebleu.CHRF(word_order=2),
         "ter": sacrebleu.TER()}[metric]  # fmt: skip
    return float(m.corpus_score(hyps, [refs]).score)


@pytest.mark.parametrize("metric", ["bleu", "chrf", "chrf++", "ter", "wer", "cer"])
def test_every_text_metric_end_to_end(transactional_db, metric: str) -> None:
    org = client_for(user("org"))
    make_challenge(org, "t")
    r = add_task(org, "t", metric, "ref.txt", lines(REFS))
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["kind"] == "text_corpus"
    assert "The dog bit" not in r.content.decode()  # no reference in the answer
    sub = {"good": ("good.txt", lines(GOOD)),
           "weak": ("weak.jsonl", "".join(json.dumps({"id": str(i + 1), "text": t}) + "\n"
                                          for i, t in enumerate(WEAK)).encode())}  # fmt: skip
    for name, (fname, data) in sub.items():
        r = submit(client_for(user(name)), "t", name, fname, data)
        assert r.status_code == 201 and r.json()["status"] == Status.SCORED, r.content
    snap = board("t")
    rows = {row["name"]: row for row in snap.rows}
    for name, hyps in (("good", GOOD), ("weak", WEAK)):
        assert rows[name]["value"] == pytest.approx(oracle(metric, hyps, REFS), abs=1e-9)
        assert rows[name]["low"] <= rows[name]["value"] <= rows[name]["high"]
    # Lower-is-better metrics rank ascending: the good system is first either way.
    assert rows["good"]["rank"] <= rows["weak"]["rank"]
    assert snap.rows[0]["name"] == "good"
    # Downloads: the board's CSV carries the values.
    csv_text = Client().get("/c/t/t/mt/board.csv").content.decode()
    assert "good" in csv_text and "weak" in csv_text


def test_several_references_and_documents_from_jsonl(transactional_db) -> None:
    org = client_for(user("org"))
    make_challenge(org, "m")
    alt = [r.replace("The", "A") for r in REFS]
    truth = "".join(
        json.dumps({"id": f"s{i}", "references": [a, b], "doc": f"d{i // 2}"}) + "\n"
        for i, (a, b) in enumerate(zip(REFS, alt, strict=True))
    ).encode()
    r = add_task(org, "m", "bleu", "ref.jsonl", truth)
    assert r.status_code == 201, r.content
    task = Task.objects.get(slug="mt")
    assert task.grouped and task.vision["n_refs"] == 2 and "nrefs:2" in task.vision["signature"]
    csv_sub = "id,text\n" + "".join(f"s{i},{t}\n" for i, t in enumerate(GOOD))
    r = submit(client_for(user("p")), "m", "p", "p.csv", csv_sub.encode())
    assert r.status_code == 201 and r.json()["status"] == Status.SCORED, r.content
    value = board("m").rows[0]["value"]
    assert value == pytest.approx(sacrebleu.BLEU().corpus_score(GOOD, [REFS, alt]).score, abs=1e-9)


def test_span_f1_from_conll_end_to_end(transactional_db) -> None:
    from seqeval.metrics import f1_score

    org = client_for(user("org"))
    make_challenge(org, "ner")
    r = add_task(org, "ner", "span_f1", "gold.conll", conll(GOLD_TAGS), task="ner")
    assert r.status_code == 201, r.content
    assert r.json()["labels"] == ["LOC", "ORG", "PER"]
    pred = [["B-PER", "I-PER", "O", "O"], ["O", "B-ORG", "O"], ["B-PER", "O", "O", "B-LOC", "O"]]
    r = submit(client_for(user("p")), "ner", "p", "p.conll", conll(pred))
    assert r.status_code == 201 and r.json()["status"] == Status.SCORED, r.content
    assert board("ner", "ner").rows[0]["value"] == pytest.approx(f1_score(GOLD_TAGS, pred), abs=1e-12)
    # The example file is a valid submission.
    example = Client().get("/c/ner/t/ner/example.csv")
    assert example.status_code == 200
    r = submit(client_for(user("q")), "ner", "q", "e.conll", example.content)
    assert r.status_code == 201 and r.json()["status"] == Status.SCORED, r.content


@pytest.mark.parametrize(
    ("fname", "data", "needles"),
    [
        ("short.txt", lines(GOOD[:5]), ["short.txt", "5 lines", "8 segments"]),
        ("long.txt", lines([*GOOD, "extra"]), ["long.txt", "9 lines", "8 segments"]),
        ("bin.txt", b"\x00\x01\x02abc\n", ["bin.txt"]),
        ("u16.txt", lines(GOOD).decode().encode("utf-16"), ["u16.txt", "UTF-16"]),
        ("empty.txt", b"", ["empty.txt"]),
        ("bad.jsonl", b'{"id": "1", "text": "a"}\n{oops\n', ["bad.jsonl", ":2"]),
    ],
)
def test_a_bad_hypothesis_file_is_a_400_naming_file_and_line_and_not_charged(
    transactional_db, fname: str, data: bytes, needles: list[str]
) -> None:
    org = client_for(user("org"))
    make_challenge(org, "b")
    assert add_task(org, "b", "bleu", "ref.txt", lines(REFS)).status_code == 201
    r = submit(client_for(user("p")), "b", "p", fname, data)
    assert r.status_code == 400, r.content
    text = r.content.decode()
    for needle in needles:
        assert needle in text, text
    assert "dog bit" not in text  # never a reference
    assert Submission.objects.count() == 0


@pytest.mark.parametrize(
    ("metric", "fname", "data", "needle"),
    [
        ("bleu", "empty.txt", b"", "empty"),
        ("bleu", "blank.txt", b"\n\n\n", "empty"),
        ("wer", "two.jsonl", b'{"id": "1", "references": ["a", "b"]}\n', "one reference"),
        ("span_f1", "o.conll", b"a O\nb O\n", "no entity"),
        (
            "bleu",
            "dup.jsonl",
            b'{"id": "1", "reference": "a"}\n{"id": "1", "reference": "b"}\n',
            "dup.jsonl:2",
        ),
    ],
)
def test_a_bad_truth_file_is_a_400_and_creates_no_task(
    transactional_db, metric: str, fname: str, data: bytes, needle: str
) -> None:
    org = client_for(user("org"))
    make_challenge(org, "bt")
    r = add_task(org, "bt", metric, fname, data)
    assert r.status_code == 400, r.content
    assert needle in r.content.decode()
    assert Task.objects.count() == 0


def test_the_web_forms_take_text_files_and_the_example_is_valid(transactional_db) -> None:
    organizer, participant = user("org"), user("pat")
    make_challenge(client_for(organizer), "web")
    web_org, web_pat = Client(), Client()
    web_org.force_login(organizer)
    web_pat.force_login(participant)
    r = web_org.post("/c/web/tasks/new/", {
        "title": "MT", "slug": "mt", "metric": "chrf", "ignore_index": "255",
        "truth": SimpleUploadedFile("ref.txt", lines(REFS)),
    })  # fmt: skip
    assert r.status_code == 302, r.content.decode()[:2000]
    page = web_pat.get("/c/web/submit/").content.decode()
    assert "segments" in page and "nrefs:1" in page
    example = web_pat.get("/c/web/t/mt/example.csv")
    assert example.status_code == 200 and ".txt" in example["Content-Disposition"]
    r = web_pat.post(
        "/c/web/submit/", {"name": "ex", "file_mt": SimpleUploadedFile("e.txt", example.content)}
    )
    assert r.status_code == 302, r.content.decode()[:2000]
    r = web_pat.post(
        "/c/web/submit/", {"name": "bad", "file_mt": SimpleUploadedFile("p.txt", lines(GOOD[:3]))}
    )
    assert r.status_code == 400
    assert "p.txt" in r.content.decode() and "3 lines" in r.content.decode()
    assert Submission.objects.count() == 1


def test_worst_segments_to_organizers_and_to_everyone_only_after_the_reveal(transactional_db) -> None:
    organizer, participant, other = user("org"), user("pat"), user("other")
    org = client_for(organizer)
    make_challenge(org, "w")
    assert add_task(org, "w", "bleu", "ref.txt", lines(REFS)).status_code == 201
    r = submit(client_for(participant), "w", "mine", "m.txt", lines(WEAK))
    assert r.status_code == 201 and r.json()["status"] == Status.SCORED, r.content
    sid = r.json()["id"]
    url = f"/c/w/t/mt/entries/{sid}/"
    web_org, web_other = Client(), Client()
    web_org.force_login(organizer)
    web_other.force_login(other)
    org_page = web_org.get(url).content.decode()
    assert "Worst segments" in org_page and "The dog bit the man." in org_page  # references: organizers only
    before = web_other.get(url).content.decode()
    assert "Worst segments" not in before and "The dog bit" not in before
    Challenge.objects.filter(slug="w").update(private_revealed=True)
    after = web_other.get(url).content.decode()
    assert "Worst segments" in after and "The dog bit" not in after


def test_a_bleu_board_warns_when_two_systems_straddle_the_reference_length(transactional_db) -> None:
    org = client_for(user("org"))
    make_challenge(org, "bp")
    assert add_task(org, "bp", "bleu", "ref.txt", lines(REFS)).status_code == 201
    shorter = [r.rsplit(" ", 1)[0] + "." if k % 2 == 0 else r for k, r in enumerate(REFS)]  # ratio below 1
    longer = [r[:-1] + " indeed." if k % 2 == 0 else r for k, r in enumerate(REFS)]  # ratio above 1
    for name, hyps in (("short", shorter), ("long", longer)):
        r = submit(client_for(user(name)), "bp", name, f"{name}.txt", lines(hyps))
        assert r.status_code == 201 and r.json()["status"] == Status.SCORED, r.content
    warnings = board("bp").signature["warnings"]
    assert any("Brevity penalty" in w and "lie on both sides of 1" in w for w in warnings), warnings
    assert "Brevity penalty" in Client().get("/c/bp/").content.decode()
    # chrF has no brevity penalty: no such warning.
    org2 = client_for(user("org2"))
    make_challenge(org2, "nb")
    assert add_task(org2, "nb", "chrf", "ref.txt", lines(REFS)).status_code == 201
    for name, hyps in (("short2", shorter), ("long2", longer)):
        assert submit(client_for(user(name)), "nb", name, f"{name}.txt", lines(hyps)).status_code == 201
    assert not any("Brevity" in w for w in board("nb").signature["warnings"])
    # The pairwise page of the two shows it too.
    ids = {s.name: s.pk for s in Submission.objects.filter(challenge__slug="bp")}
    page = Client().get(f"/c/bp/t/mt/pairwise/?a={ids['short']}&b={ids['long']}").content.decode()
    assert "Brevity penalty" in page


def test_replacing_the_references_keeps_the_segments(transactional_db) -> None:
    from leaderboard.challenges.models import TaskTruth
    from leaderboard.challenges.services import task_truth_replace

    org = client_for(user("org"))
    make_challenge(org, "rp")
    assert add_task(org, "rp", "bleu", "ref.txt", lines(REFS)).status_code == 201
    assert add_task(org, "rp", "span_f1", "gold.conll", conll(GOLD_TAGS), task="ner").status_code == 201
    fixed = [*REFS[:-1], "She reads one book every night."]
    task_truth_replace(task=Task.objects.get(slug="mt"), truth=lines(fixed), truth_name="ref2.txt")
    assert TaskTruth.objects.get(task__slug="mt").labels[-1] == [fixed[-1]]
    tags = [GOLD_TAGS[0], GOLD_TAGS[1], ["B-PER", "O", "O", "B-LOC", "O"]]
    task_truth_replace(task=Task.objects.get(slug="ner"), truth=conll(tags), truth_name="gold2.conll")
    assert TaskTruth.objects.get(task__slug="ner").labels == tags


def test_metric_options_are_task_settings_scored_and_in_the_signature(transactional_db) -> None:
    """BLEU with the intl tokenizer, lowercase, floor smoothing and effective order (sacreBLEU's options):
    the board's values equal sacreBLEU's corpus BLEU with the same options, the signature names them, and
    an option a metric does not have, or an unknown value, is a 400 naming the setting."""
    org = client_for(user("org"))
    make_challenge(org, "opt")
    options = {"tokenize": "intl", "lowercase": True, "smooth_method": "floor", "effective_order": True}
    r = org.post(
        "/api/challenges/opt/tasks/",
        {"slug": "mt", "title": "bleu", "metric": "bleu", "truth": SimpleUploadedFile("ref.txt", lines(REFS)),
         **options},
        format="multipart",
    )  # fmt: skip
    assert r.status_code == 201, r.content
    signature = r.json()["vision"]["signature"]
    assert "case:lc" in signature and "eff:yes" in signature and "tok:intl" in signature
    assert "smooth:floor" in signature
    for name, hyps in (("good", GOOD), ("weak", WEAK)):
        r = submit(client_for(user(name)), "opt", name, f"{name}.txt", lines(hyps))
        assert r.status_code == 201 and r.json()["status"] == Status.SCORED, r.content
    rows = {row["name"]: row for row in board("opt").rows}
    bleu = sacrebleu.BLEU(tokenize="intl", lowercase=True, smooth_method="floor", effective_order=True)
    for name, hyps in (("good", GOOD), ("weak", WEAK)):
        assert rows[name]["value"] == pytest.approx(bleu.corpus_score(hyps, [REFS]).score, abs=1e-9)
    # the weak system's BLEU differs between the options and the defaults (the options are applied)
    assert rows["weak"]["value"] != pytest.approx(sacrebleu.BLEU().corpus_score(WEAK, [REFS]).score, abs=1e-6)

    def refused(metric: str, **opts: Any) -> dict[str, Any]:
        r = org.post(
            "/api/challenges/opt/tasks/",
            {"slug": f"x{len(opts)}", "title": "x", "metric": metric,
             "truth": SimpleUploadedFile("ref.txt", lines(REFS)), **opts},
            format="multipart",
        )  # fmt: skip
        assert r.status_code == 400, r.content
        return r.json()

    assert "tokenize" in json.dumps(refused("ter", tokenize="intl"))
    assert "smooth_method" in json.dumps(refused("bleu", smooth_method="laplace"))
    assert "lowercase" in json.dumps(refused("ter", lowercase=True))
    assert not Task.objects.filter(challenge__slug="opt", slug__startswith="x").exists()


def test_the_tokenizer_choices_are_stats_tokenizers() -> None:
    from leaderboard.challenges.settings_spec import SMOOTH_METHODS, TASK, TOKENIZE
    from stats.text.extract import TOKENIZERS
    from stats.text.finalize import SMOOTH_DEFAULTS

    assert tuple(v for v, _ in TOKENIZE) == TOKENIZERS
    assert {v for v, _ in SMOOTH_METHODS} == set(SMOOTH_DEFAULTS)
    assert TASK["tokenize"].default == "13a" and TASK["smooth_method"].default == "exp"
