"""Synthetic translation corpora from a seed, for tests, simulations and benchmarks (no download).

References are sentences of Zipf-distributed words with WMT-like lengths (log-normal, median about 20
tokens) and punctuation, grouped into documents; a system's output is a noisy copy of each reference:
words substituted (by a frequent or a rare word), dropped, inserted, and neighbouring words swapped,
at rates that set the system's quality, plus a length bias. Two systems drawn with the same rates are
exchangeable (an A/A pair).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SyntheticCorpus", "noisy_system", "synthetic_corpus"]


@dataclass(frozen=True)
class SyntheticCorpus:
    """References (one stream), each segment's document, and the vocabulary used."""

    references: list[str]
    documents: list[str]
    vocabulary: list[str]


def _vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words: set[str] = set()
    while len(words) < size:
        n = int(rng.integers(2, 10))
        words.add("".join(rng.choice(letters, n)))
    return sorted(words)


def synthetic_corpus(
    n_segments: int, *, seed: int = 0, vocabulary: int = 5000, segments_per_doc: int = 15
) -> SyntheticCorpus:
    """A reference stream of ``n_segments`` sentences in documents of about ``segments_per_doc``.

    Examples
    --------
    >>> c = synthetic_corpus(3, seed=1)
    >>> len(c.references), c.documents
    (3, ['d0', 'd0', 'd0'])
    """
    rng = np.random.default_rng(seed)
    vocab = _vocabulary(vocabulary, rng)
    ranks = np.arange(1, vocabulary + 1)
    p = 1.0 / ranks**1.07
    p /= p.sum()
    refs, docs = [], []
    doc, left = 0, int(rng.poisson(segments_per_doc)) + 1
    for _ in range(n_segments):
        if left == 0:
            doc += 1
            left = int(rng.poisson(segments_per_doc)) + 1
        left -= 1
        length = max(1, int(rng.lognormal(np.log(20), 0.55)))
        words = [vocab[i] for i in rng.choice(vocabulary, length, p=p)]
        words[0] = words[0].capitalize()
        for k in range(1, length - 1):
            if rng.random() < 0.06:
                words[k] += ","
        refs.append(" ".join(words) + rng.choice([".", ".", ".", "?", "!"]))
        docs.append(f"d{doc}")
    return SyntheticCorpus(refs, docs, vocab)


def noisy_system(
    corpus: SyntheticCorpus,
    *,
    seed: int,
    substitute: float = 0.25,
    drop: float = 0.05,
    insert: float = 0.05,
    swap: float = 0.05,
) -> list[str]:
    """One system's output: each reference word kept, substituted, dropped, or followed by an inserted
    word at the given rates, neighbours swapped at rate ``swap``; ``drop`` above ``insert`` makes the
    system short (the brevity penalty applies)."""
    rng = np.random.default_rng(seed)
    vocab = corpus.vocabulary
    out = []
    for ref in corpus.references:
        words = ref.split()
        new: list[str] = []
        for w in words:
            u = rng.random()
            if u < drop:
                continue
            if u < drop + substitute:
                w = (
                    vocab[int(rng.zipf(1.3)) % len(vocab)]
                    if rng.random() < 0.5
                    else vocab[int(rng.integers(len(vocab)))]
                )
            new.append(w)
            if rng.random() < insert:
                new.append(vocab[int(rng.zipf(1.3)) % len(vocab)])
        for k in range(len(new) - 1):
            if rng.random() < swap:
                new[k], new[k + 1] = new[k + 1], new[k]
        out.append(" ".join(new))
    return out
