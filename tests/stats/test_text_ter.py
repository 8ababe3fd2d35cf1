"""The compiled TER (stats.text.ter) equals sacreBLEU 2.6.0's TER statistics on every segment: real
human translations (the .po catalogs Django ships, the demo's systems), synthetic corpora and the edge
cases of lib_ter (empty sides, several and missing references, the beam's widening, the candidate cap)."""

from __future__ import annotations

import numpy as np
import pytest
import sacrebleu

from leaderboard.demo import text as demo_text
from stats.text import ter as ter_mod
from stats.text.extract import text_metric
from stats.text.synthetic import noisy_system, synthetic_corpus
from stats.text.ter import ter_statistics


def _sacrebleu_rows(metric: sacrebleu.TER, hyps: list[str], refs: list[list[str | None]]) -> np.ndarray:
    return np.asarray(metric._extract_corpus_statistics(hyps, refs), dtype=np.float64)


def _assert_equal(hyps: list[str], refs: list[list[str | None]], **options: object) -> None:
    metric = sacrebleu.TER(**options)  # type: ignore[arg-type]
    expected = _sacrebleu_rows(metric, hyps, refs)
    got = ter_statistics(sacrebleu.TER(**options), hyps, refs)  # type: ignore[arg-type]
    bad = np.flatnonzero((got != expected).any(axis=1))
    assert bad.size == 0, [(int(i), hyps[i], got[i].tolist(), expected[i].tolist()) for i in bad[:5]]


def _demo_corpus(language: str, *, every_message: bool) -> tuple[list[str], list[list[str | None]]]:
    """Real references (Django's human translations) with the demo's systems as hypotheses."""
    task = demo_text.language_task(language)
    if every_message:  # every catalog message, the lexicon's and the source's outputs
        msgs = demo_text.messages(language)
        lexicon = demo_text.learn_lexicon([m for m in msgs if not demo_text.in_test(m.source)])
        hyps = [demo_text.translate_words(m.source, lexicon) for m in msgs] + [m.source for m in msgs]
        return hyps, [[m.target for m in msgs] * 2]
    import json

    refs = [json.loads(line)["reference"] for line in task.truth_jsonl.decode().splitlines()]
    hyps = [line for out in task.outputs.values() for line in out.decode().splitlines()]
    return hyps, [refs * len(task.outputs)]


def test_equals_sacrebleu_on_the_demo_test_split() -> None:
    """Every segment of the demo's German task, four systems (copy, memory, lexicon, both)."""
    hyps, refs = _demo_corpus("de", every_message=False)
    assert len(hyps) > 500
    _assert_equal(hyps, refs)


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(demo_text.LANGUAGES))
def test_equals_sacrebleu_on_every_catalog_message(language: str) -> None:
    """Every message of the catalogs (about 930 per language), two systems, and once more with
    sacreBLEU's options (normalized, no punctuation, case-sensitive)."""
    hyps, refs = _demo_corpus(language, every_message=True)
    _assert_equal(hyps, refs)
    _assert_equal(hyps[: len(hyps) // 2], [refs[0][: len(hyps) // 2]], normalized=True, no_punct=True,
                  case_sensitive=True)  # fmt: skip


def test_equals_sacrebleu_on_synthetic_corpora_with_several_references() -> None:
    c = synthetic_corpus(150, seed=11, vocabulary=60)  # a small vocabulary: many repeated words, shifts
    second = synthetic_corpus(150, seed=12, vocabulary=60).references
    refs: list[list[str | None]] = [list(c.references), [r if i % 3 else None for i, r in enumerate(second)]]
    for seed, sub, drop in ((1, 0.2, 0.05), (2, 0.5, 0.2)):
        _assert_equal(list(noisy_system(c, seed=seed, substitute=sub, drop=drop)), refs)


def test_equals_sacrebleu_on_edge_cases() -> None:
    many = " ".join(["a b c"] * 40)  # repeated phrases: the cap of 1,000 candidates is reached
    shuffled = " ".join(["c a b"] * 40)
    long = " ".join(f"w{i}" for i in range(130))
    hyps = [
        "",  # empty hypothesis
        "the cat sat",  # empty reference
        "",  # both empty
        shuffled,
        "x",  # length ratio 130: the beam widens
        long,  # against one word
        "sat the cat on mat the",
        "A B c. d, e!",
        "b a d c f e h g",
    ]
    refs = [
        "the cat sat",
        "",
        "",
        many,
        long,
        "x",
        "the cat sat on the mat",
        "a b C . d , e !",
        "a b c d e f g h",
    ]
    _assert_equal(hyps, [refs])
    _assert_equal(hyps, [refs], case_sensitive=True, no_punct=True)
    _assert_equal(hyps, [refs], normalized=True, asian_support=True)


def test_extraction_uses_the_compiled_ter_and_checks_it() -> None:
    """`TextMetric.statistics` for TER gives sacreBLEU's rows, and its check compares rows with sacreBLEU's."""
    c = synthetic_corpus(40, seed=5, vocabulary=100)
    hyps = list(noisy_system(c, seed=3, substitute=0.3, drop=0.1))
    refs = [list(c.references)]
    s = text_metric("ter").statistics(hyps, refs, verify="sample")
    expected = _sacrebleu_rows(sacrebleu.TER(), hyps, refs)
    assert np.array_equal(s.matrix[:, :2], expected)
    assert s.value == pytest.approx(sacrebleu.TER().corpus_score(hyps, refs).score, rel=1e-12)


def _block_shuffles(n_cases: int) -> list[tuple[str, str]]:
    """Sentences over 2 to 5 letters with blocks moved: many matching phrases, many shift candidates."""
    rng = np.random.default_rng(0)
    out = []
    for _ in range(n_cases):
        n, k = int(rng.integers(30, 80)), int(rng.integers(2, 6))
        r = rng.integers(0, k, n)
        parts = np.split(r.copy(), sorted(rng.choice(n, 4, replace=False)))
        rng.shuffle(parts)
        h = np.concatenate(parts)
        out.append((" ".join("abcde"[x] for x in h), " ".join("abcde"[x] for x in r)))
    return out


def test_equals_sacrebleu_where_the_candidate_cap_stops_the_search() -> None:
    """lib_ter stops after 1,000 shift candidates per segment (counted across shifts, the last shift
    found discarded): at least one of these segments reaches the cap, and every one equals sacreBLEU."""
    cases = _block_shuffles(2)
    capped = 0
    for hyp, ref in cases:
        vocab: dict[str, int] = {}
        h, r = ter_mod._ids(hyp.split(), vocab), ter_mod._ids(ref.split(), vocab)
        _, _, checked = ter_mod._shift(h, r, 0)
        capped += checked >= 1000
    assert capped >= 1
    _assert_equal([h for h, _ in cases], [[r for _, r in cases]])
