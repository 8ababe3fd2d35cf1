"""Text metrics (stats.text): statistics pinned to sacreBLEU 2.6.0, replicates equal to the libraries'
corpus scores of resampled corpora, sacreBLEU's paired tests reproduced exactly, and the traps."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sacrebleu

from stats.engine import score_item_statistics
from stats.metrics import get_metric, truth_kind
from stats.resampling import resample_weights
from stats.text.extract import VERIFY_SAMPLE, text_metric
from stats.text.finalize import bleu_finalize
from stats.text.significance import (
    brevity_check,
    design_effects,
    paired_tests,
    sacrebleu_paired_ar,
    sacrebleu_paired_bs,
    segments_needed,
)
from stats.text.synthetic import noisy_system, synthetic_corpus

# sacreBLEU's own test corpus (test/test_bleu.py, test_api.py)
HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
REFS = [
    ["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
    ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."],
]


@pytest.fixture(scope="module")
def corpus():
    c = synthetic_corpus(60, seed=3, vocabulary=400)
    second = synthetic_corpus(60, seed=4, vocabulary=400).references
    systems = [noisy_system(c, seed=s, substitute=r, drop=d) for s, r, d in ((1, 0.2, 0.05), (2, 0.3, 0.1))]
    return c, second, systems


# --------------------------------------------------------------------------------------------------
# pinned layout of the private statistics, and the reference numbers


def test_sacrebleu_statistics_layout_is_pinned() -> None:
    """The private `_extract_corpus_statistics` rows: BLEU [hyp_len, ref_len, correct x4, total x4]
    with the closest reference length, chrF triples per order, TER [edits, mean ref length]."""
    assert sacrebleu.__version__ == "2.6.0"
    bleu = sacrebleu.BLEU()._extract_corpus_statistics(["a b c d"], [["a b c x y"], ["a b"]])
    # closest reference: |4-5| = 1 < |4-2| = 2; matches 3/4, 2/3, 1/2, 0/1
    assert bleu == [[4, 5, 3, 2, 1, 0, 4, 3, 2, 1]]
    tie = sacrebleu.BLEU()._extract_corpus_statistics(["a b c"], [["a b c d"], ["a b"]])
    assert tie[0][1] == 2  # equally close: the shorter reference
    chrf = sacrebleu.CHRF()._extract_corpus_statistics(["ab"], [["ab"]])
    assert len(chrf[0]) == 18 and chrf[0][:3] == [2, 2, 2] and chrf[0][3:6] == [1, 1, 1]
    assert len(sacrebleu.CHRF(word_order=2)._extract_corpus_statistics(["ab"], [["ab"]])[0]) == 24
    ter = sacrebleu.TER()._extract_corpus_statistics(["a b c"], [["a b c d"], ["a b"]])
    assert ter == [[1, 3.0]]  # fewest edits (1, against the first), mean reference length 3


@pytest.mark.parametrize(
    ("options", "expected", "digits"),
    [
        ({}, 48.530827, 6),
        ({"tokenize": "none"}, 49.1919566, 7),
        ({"tokenize": "intl"}, 43.91623493, 8),
        ({"max_ngram_order": 1}, 77.65, 2),
        ({"max_ngram_order": 2}, 60.50, 2),
        ({"max_ngram_order": 3}, 53.93, 2),
        ({"max_ngram_order": 5}, 46.14, 2),
        ({"max_ngram_order": 6}, 43.28, 2),
    ],
)
def test_bleu_reference_numbers(options, expected, digits) -> None:
    """sacreBLEU's test_api.py / test_bleu.py numbers, to the digits they print."""
    value = text_metric("bleu", **options).statistics(HYPS, REFS).value
    assert round(value, digits) == pytest.approx(expected, abs=10.0**-digits / 2)


@pytest.mark.parametrize(
    ("hyp", "ref", "expected"), [("aa", "ab", 8.3333), ("a", "a", 16.6667), ("a b c", "abc", 50.0)]
)
def test_chrf_reference_numbers(hyp, ref, expected) -> None:
    m = text_metric("chrf", beta=3, eps_smoothing=True)
    assert m.statistics([hyp], [[ref]]).value == pytest.approx(expected, abs=1e-4)


def test_ter_reference_numbers() -> None:
    ter = text_metric("ter")
    assert ter.statistics(["d e f g h a b c"], [["a b c d e f g h"]]).value == pytest.approx(12.5)
    assert ter.statistics([""], [["a b c"]]).value == pytest.approx(100.0)
    assert ter.statistics([""], [[""]]).value == 0.0


def test_bleu_smoothing_edges_match_sacrebleu() -> None:
    cases = [(["a"], [["b"]]), (["a b"], [["a b"]]), (["a b c"], [["a b d"]]), ([""], [["a b"]])]
    for method in ("exp", "floor", "add-k", "none"):
        for eff in (False, True):
            for hyps, refs in cases:
                sb = sacrebleu.BLEU(smooth_method=method, effective_order=eff)
                got = (
                    text_metric("bleu", smooth_method=method, effective_order=eff)
                    .statistics(hyps, refs)
                    .value
                )
                assert got == pytest.approx(sb.corpus_score(hyps, refs).score, rel=1e-12, abs=1e-12)


def test_verify_refuses_a_drifted_layout(monkeypatch) -> None:
    import stats.text.finalize as fin

    monkeypatch.setattr(fin, "ter_finalize", lambda pooled, float32=False: np.asarray(pooled)[..., 0])
    with pytest.raises(RuntimeError, match="pinned statistics layout no longer holds"):
        text_metric("ter").statistics(HYPS, REFS[:1])


def test_sample_verification_and_workers_give_the_same_rows(corpus) -> None:
    c, _, systems = corpus
    hyps = systems[0] * (VERIFY_SAMPLE // 60 + 1)
    refs = [c.references * (VERIFY_SAMPLE // 60 + 1)]
    full = text_metric("chrf").statistics(hyps, refs).matrix
    fast = text_metric("chrf").statistics(hyps, refs, verify="sample", workers=2).matrix
    np.testing.assert_array_equal(full, fast)


# --------------------------------------------------------------------------------------------------
# every replicate is the library's corpus score of the resampled corpus


def _resampled(rows: np.ndarray, items: list) -> list:
    return [x for i, count in enumerate(rows) for x in [items[i]] * int(count)]


@pytest.mark.parametrize(
    ("name", "options", "n_refs"),
    [
        ("bleu", {}, 1),
        ("bleu", {}, 2),
        ("bleu", {"tokenize": "intl", "lowercase": True}, 1),
        ("bleu", {"tokenize": "char"}, 1),
        ("bleu", {"tokenize": "zh"}, 1),
        ("bleu", {"smooth_method": "floor"}, 1),
        ("bleu", {"smooth_method": "add-k", "effective_order": True}, 1),
        ("chrf", {}, 1),
        ("chrf", {}, 2),
        ("chrf++", {}, 2),
        ("chrf", {"eps_smoothing": True}, 1),
        ("ter", {}, 1),
        ("ter", {}, 2),
        ("wer", {}, 1),
        ("cer", {}, 1),
    ],
)
def test_every_replicate_is_the_corpus_score_of_the_resample(corpus, name, options, n_refs) -> None:
    c, second, systems = corpus
    refs = [c.references, second][:n_refs]
    m = text_metric(name, **options)
    s = m.statistics(systems[1], refs).matrix
    w = resample_weights(s.shape[0], resamples=12, seed=5)
    reps = get_metric(name).finalize(w @ s) if not options else m.finalize(w @ s)
    for b in range(w.shape[0]):
        hyps = _resampled(w[b], systems[1])
        rr = [_resampled(w[b], stream) for stream in refs]
        assert reps[b] == pytest.approx(m.library_score(hyps, rr), rel=1e-12, abs=1e-12), (name, b)


def test_ja_mecab_replicates_equal_sacrebleu() -> None:
    """BLEU with sacreBLEU's ja-mecab tokenizer (the `ja` extra: MeCab, IPA dictionary)."""
    from stats.text.extract import available_tokenizers

    if "ja-mecab" not in available_tokenizers():
        pytest.skip("sacreBLEU's ja extra (mecab-python3, ipadic) is not installed")
    rng = np.random.default_rng(4)
    words = ["猫", "が", "犬", "を", "見た", "。", "私", "は", "東京", "に", "行きます", "、", "本", "読んだ"]
    refs = ["".join(rng.choice(words, rng.integers(4, 12))) for _ in range(30)]
    hyps = [
        "".join(rng.choice(list(r), len(r))) if rng.random() < 0.3 else r[: max(1, len(r) - 2)] for r in refs
    ]
    m = text_metric("bleu", tokenize="ja-mecab")
    s = m.statistics(hyps, [refs]).matrix
    assert "tok:ja-mecab-0.996-IPA" in m.signature(1)
    w = resample_weights(30, resamples=8, seed=1)
    reps = m.finalize(w @ s)
    for b in range(w.shape[0]):
        want = m.library_score(_resampled(w[b], hyps), [_resampled(w[b], refs)])
        assert reps[b] == pytest.approx(want, rel=1e-12)


def test_span_f1_replicates_equal_seqeval(corpus) -> None:
    from seqeval.metrics import f1_score
    from seqeval.scheme import IOB2

    rng = np.random.default_rng(0)
    tags = ["O", "O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"]
    gold = [[str(t) for t in rng.choice(tags, rng.integers(3, 15))] for _ in range(80)]
    pred = [[t if rng.random() < 0.8 else str(rng.choice(tags)) for t in g] for g in gold]
    types = sorted({t[2:] for g in gold for t in g if t != "O"})
    for mode in ("conlleval", "strict"):
        m = text_metric("span_f1", mode=mode)
        s = m.span_statistics(gold, pred, types=types).matrix
        w = resample_weights(len(gold), resamples=15, seed=2)
        reps = m.finalize(w @ s)
        kw = {"mode": "strict", "scheme": IOB2} if mode == "strict" else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for b in range(w.shape[0]):
                want = f1_score(_resampled(w[b], gold), _resampled(w[b], pred), **kw)
                assert reps[b] == pytest.approx(want, rel=1e-12), (mode, b)


def test_registry_metrics_are_text_and_direction_is_declared() -> None:
    for name in ("bleu", "chrf", "chrf++", "ter", "wer", "cer", "span_f1"):
        m = get_metric(name)
        assert m.task_kind == "text"
        assert m.higher_is_better == (name not in ("ter", "wer", "cer"))
        with pytest.raises(TypeError, match=r"stats\.text"):
            m.item_statistics(["a"], ["a"])
    assert truth_kind("bleu") == "references" and truth_kind("span_f1") == "tags"
    assert truth_kind("accuracy") == "label" and truth_kind("rmse") == "value"


def test_engine_scores_text_statistics_exactly(corpus) -> None:
    c, _, systems = corpus
    stats = [text_metric("bleu").statistics(h, [c.references]).matrix for h in systems]
    w = resample_weights(60, resamples=300, seed=9)
    scores = score_item_statistics(stats, metric="bleu", weights=w, jackknife=False)
    for sc, s in zip(scores, stats, strict=True):
        np.testing.assert_allclose(sc.replicates, bleu_finalize(w @ s), rtol=1e-12)


# --------------------------------------------------------------------------------------------------
# sacreBLEU's paired tests, exactly


@pytest.mark.parametrize("name", ["bleu", "chrf", "ter"])
def test_sacrebleu_paired_tests_reproduced_exactly(corpus, name) -> None:
    from sacrebleu.significance import PairedTest

    c, _, systems = corpus
    named = [("base", systems[0]), ("other", systems[1]), ("copy", list(systems[0]))]
    m = text_metric(name)
    stats = [m.statistics(h, [c.references]).matrix for _, h in named]
    for test, n in (("bs", 1000), ("ar", 2000)):
        ours = (sacrebleu_paired_bs if test == "bs" else sacrebleu_paired_ar)(stats, m, n_samples=n)
        sigs, res = PairedTest(named, {name: m.sacrebleu()}, [c.references], test_type=test, n_samples=n)()
        key = next(k for k in res if k != "System")
        theirs = [r.p_value for r in res[key][1:]]
        assert ours.p_values[1:].tolist() == theirs
        assert ours.p_values[2] == 1 / (n + 1)  # sacreBLEU: a copy of the baseline is "significant"
        assert ours.signature == str(sigs[key])
        if test == "bs":
            np.testing.assert_allclose(ours.means[1:], [float(r.mean) for r in res[key][1:]], rtol=1e-12)
            np.testing.assert_allclose(ours.cis[1:], [float(r.ci) for r in res[key][1:]], rtol=1e-10)


def test_our_randomization_gives_identical_outputs_p_one(corpus) -> None:
    c, _, systems = corpus
    m = text_metric("bleu")
    stats = [m.statistics(h, [c.references]).matrix for h in (systems[0], systems[1], list(systems[0]))]
    for rule in ("randomization", "koehn", "2delta"):
        r = paired_tests(stats, finalize=m.finalize, rule=rule, draws=999, seed=1)
        assert r.p_values[0] == 1.0 and r.p_values[2] == 1.0, rule
        assert 0 < r.p_values[1] <= 1
    r = paired_tests(stats, finalize=m.finalize, rule="randomization", draws=999, seed=1)
    assert (r.p_values[1] * 1000) == pytest.approx(round(r.p_values[1] * 1000))  # (c + 1) / (R + 1)


def test_randomization_counts_ties_and_matches_a_direct_loop() -> None:
    """p = (1 + #{|d_r| >= |d_obs|}) / (1 + R), checked against swapping segment lists one draw at a time."""
    from stats.compare import randomization_weights

    c = synthetic_corpus(25, seed=8, vocabulary=200)
    a, b = noisy_system(c, seed=1, substitute=0.2), noisy_system(c, seed=2, substitute=0.3)
    m = text_metric("bleu")
    sa, sb = (m.statistics(h, [c.references]).matrix for h in (a, b))
    r = paired_tests([sa, sb], finalize=m.finalize, rule="randomization", draws=200, seed=4)
    z = randomization_weights(25, randomizations=200, seed=4)
    obs = abs(m.library_score(b, [c.references]) - m.library_score(a, [c.references]))
    count = 0
    for row in z:
        x = [bb if s else aa for aa, bb, s in zip(a, b, row, strict=True)]
        y = [aa if s else bb for aa, bb, s in zip(a, b, row, strict=True)]
        d = abs(m.library_score(y, [c.references]) - m.library_score(x, [c.references]))
        count += d >= obs * (1 - 1e-9)
    assert r.p_values[1] == pytest.approx((1 + count) / 201)


# --------------------------------------------------------------------------------------------------
# traps


def test_brevity_warning_fires_only_near_the_kink() -> None:
    c = synthetic_corpus(200, seed=1, vocabulary=500)
    m = text_metric("bleu")
    short = m.statistics(noisy_system(c, seed=1, drop=0.2, insert=0.0), [c.references]).matrix
    shorter = m.statistics(noisy_system(c, seed=2, drop=0.25, insert=0.0), [c.references]).matrix
    near = m.statistics(noisy_system(c, seed=3, drop=0.05, insert=0.08), [c.references]).matrix
    far = brevity_check([short, shorter], resamples=500)
    assert far.warning is None and max(far.ratios) < 0.9
    close = brevity_check([short, near], resamples=500)
    assert close.warning is not None and "within 2 standard errors" in close.warning


def test_design_effect_of_correlated_documents() -> None:
    """Documents whose segments share difficulty inflate the variance of a value (design effect > 1);
    pairing cancels most of it for the difference."""
    rng = np.random.default_rng(0)
    n_docs, m = 40, 10
    docs = np.repeat(np.arange(n_docs), m)
    difficulty = rng.normal(0, 3, n_docs)[docs]
    refs = rng.integers(10, 30, n_docs * m).astype(float)
    edits_a = np.clip(np.round(refs * 0.3 + difficulty + rng.normal(0, 1, refs.size)), 0, None)
    edits_b = np.clip(np.round(edits_a + rng.normal(0.5, 1, refs.size)), 0, None)
    sa = np.column_stack([edits_a, refs, np.ones(refs.size)])
    sb = np.column_stack([edits_b, refs, np.ones(refs.size)])
    de = design_effects([sa, sb], finalize=get_metric("ter").finalize, documents=docs, resamples=1000)
    assert de.documents == n_docs
    assert de.values.min() > 3  # 1 + (m - 1) rho with a strong document effect
    assert de.differences[1] < 2 and de.differences[0] == 1.0


def test_segments_needed_scales_with_the_inverse_square_of_the_gap() -> None:
    d = np.random.default_rng(0).normal(0, 1.0, size=(4000, 1))
    a, b = segments_needed([1.0, 0.5], np.hstack([d, d]), n_segments=100)
    assert a is not None and b is not None
    assert b == pytest.approx(4 * a, rel=0.01)
    se = float(d.std(ddof=1))  # n = N ((z_.975 + z_.8) se / gap)^2
    assert a == int(np.ceil(100 * ((1.959964 + 0.841621) * se / 1.0) ** 2 - 1e-9))


def test_degenerate_pair_fools_the_two_delta_rule_not_randomization() -> None:
    """One segment holds system A's only 4-gram matches (BLEU without smoothing): B's BLEU is 0 and A's
    is 0 in every resample without that segment. The 2-delta rule sees a 'significant' gap; swapping
    that one segment's pair moves the whole gap, and randomization does not reject (TEXT.md's pattern:
    2-delta p = 0.0005, randomization p = 0.8545)."""
    m = text_metric("bleu", smooth_method="none")
    row = [10, 10, 5, 3, 1, 0, 10, 9, 8, 7, 1]
    b = np.array([row] * 20, dtype=float)
    a = b.copy()
    a[0, 2:6] = [8, 6, 4, 2]
    two_delta = paired_tests([b, a], finalize=m.finalize, rule="2delta", draws=2000, seed=3)
    rand = paired_tests([b, a], finalize=m.finalize, rule="randomization", draws=2000, seed=3)
    assert two_delta.values[0] == 0 and two_delta.values[1] > 0
    assert two_delta.p_values[1] < 0.05
    assert rand.p_values[1] > 0.5


def test_a_tokenizer_without_its_packages_is_refused_with_a_reason() -> None:
    from stats.text.extract import available_tokenizers

    if "ko-mecab" in available_tokenizers():
        pytest.skip("ko-mecab is installed here")
    with pytest.raises(ValueError, match=r"ko-mecab tokenizer needs sacreBLEU's extra packages"):
        text_metric("bleu", tokenize="ko-mecab")
    with pytest.raises(ValueError, match="`tokenize` must be one of"):
        text_metric("bleu", tokenize="flores200")
    with pytest.raises(ValueError, match=r"unknown option\(s\) for ter"):
        text_metric("ter", tokenize="13a")


def test_secondary_metrics_are_adjusted_across_metrics_system_by_system() -> None:
    from stats.compare import holm
    from stats.text.significance import adjust_across_metrics

    p = {"bleu": [0.01, 0.5], "chrf": [0.02, 0.01], "ter": [0.04, 0.03], "chrf++": [0.3, 0.02]}
    r = adjust_across_metrics(p, primary="bleu")
    assert r.p_values["bleu"].tolist() == [0.01, 0.5]
    for j in range(2):
        want = holm([p["chrf"][j], p["ter"][j], p["chrf++"][j]])
        assert [r.p_values[k][j] for k in ("chrf", "ter", "chrf++")] == pytest.approx(list(want))
    assert "bleu primary, unadjusted" in r.label
    with pytest.raises(ValueError, match="`primary` must be one of"):
        adjust_across_metrics(p, primary="wer")
