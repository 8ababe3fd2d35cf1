"""The demo's text challenge (issue 20): translating Django's own interface strings.

Source: the human translations Django ships as gettext catalogs (``django/conf/locale/<lang>/LC_MESSAGES/
django.po`` and one catalog per contrib app), read here with a small parser (no download, no polib). Each
target language is a task; its messages are split once into a training part (what the systems learn from)
and a test part (the task's segments, one per English message; the catalog is the segment's document, so
the bootstrap resamples catalogs). The systems are real, if simple, and learn from the training part only:

- ``copy-source`` (baseline): the English message unchanged;
- ``translation-memory``: the translation of the most similar training message (cosine similarity of
  character 1-4-gram TF-IDF vectors, scikit-learn), as a translator's memory proposes it;
- ``word-lexicon``: word by word from a lexicon learned from the training pairs (for each English word,
  the target word of highest Dice association over the message pairs), unknown words copied;
- ``memory-or-lexicon``: the memory's proposal when its similarity is at least 0.7, the lexicon's
  otherwise.

Scored with chrF (sacreBLEU's defaults): short interface strings leave corpus BLEU with few 4-grams.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import django
import numpy as np

#: Target languages of the demo (a task each): few, so that ``make demo`` stays fast.
LANGUAGES = {"de": "German", "fr": "French", "es": "Spanish"}
#: Share of each language's messages in the test split (chosen by a hash of the English message, so the
#: split is the same for every language and every run).
TEST_SHARE = 0.2
#: The memory's proposal is kept above this similarity by ``memory-or-lexicon``.
MEMORY_THRESHOLD = 0.7
SYSTEMS = [
    ("copy-source", True),
    ("translation-memory", False),
    ("word-lexicon", False),
    ("memory-or-lexicon", False),
]
_TOKEN = re.compile(r"%\(\w+\)[sd]|%[sd]|\w+|[^\w\s]")


@dataclass(frozen=True)
class Message:
    source: str
    target: str
    catalog: str  # "core", "admin", "auth", ...


@dataclass(frozen=True)
class LanguageTask:
    language: str
    truth_jsonl: bytes
    n_train: int
    n_test: int
    outputs: dict[str, bytes]  # system -> plain text, one segment per line in the truth's order


def _unquote(line: str) -> str:
    return str(ast.literal_eval(line.strip()))


def read_po(path: Path) -> list[tuple[str, str]]:
    """``(msgid, msgstr)`` of a gettext catalog's translated singular messages (plural forms, fuzzy and
    untranslated entries and the header left out)."""
    pairs: list[tuple[str, str]] = []
    entry: dict[str, str] = {}
    field = ""
    fuzzy = False

    def close() -> None:
        nonlocal fuzzy
        plain = "msgid_plural" not in entry and "msgctxt" not in entry and not fuzzy
        if plain and entry.get("msgid") and entry.get("msgstr"):
            pairs.append((entry["msgid"], entry["msgstr"]))
        entry.clear()
        fuzzy = False

    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line:
            close()
            continue
        if line.startswith("#"):
            fuzzy = fuzzy or (line.startswith("#,") and "fuzzy" in line)
            continue
        if line.startswith('"'):
            if field:
                entry[field] = entry.get(field, "") + _unquote(line)
            continue
        key, _, rest = line.partition(" ")
        if key == "msgid" and "msgid" in entry:
            close()
        field = key
        entry[field] = _unquote(rest)
    close()
    return pairs


def catalogs(language: str) -> dict[str, Path]:
    """Django's catalogs of one language: ``core`` and each contrib app that has one."""
    root = Path(django.__file__).resolve().parent
    out = {}
    core = root / "conf" / "locale" / language / "LC_MESSAGES" / "django.po"
    if core.exists():
        out["core"] = core
    for po in sorted((root / "contrib").glob(f"*/locale/{language}/LC_MESSAGES/django.po")):
        out[po.parts[-5]] = po
    return out


def messages(language: str) -> list[Message]:
    """Every translated message of the language, once per English message (first catalog wins)."""
    seen: dict[str, Message] = {}
    for catalog, path in catalogs(language).items():
        for source, target in read_po(path):
            if "\n" in source or "\n" in target:
                continue  # a segment is a line
            seen.setdefault(source, Message(source, target, catalog))
    return list(seen.values())


def in_test(source: str) -> bool:
    digest = hashlib.sha256(source.encode()).digest()
    return int.from_bytes(digest[:4], "big") < TEST_SHARE * 2**32


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _detokenize(tokens: list[str]) -> str:
    return re.sub(r" ([.,:;!?)])", r"\1", re.sub(r"\( ", "(", " ".join(tokens)))


def learn_lexicon(train: list[Message]) -> dict[str, str]:
    """For each source word (lower case), the target word of highest Dice association over the pairs."""
    src_count: Counter[str] = Counter()
    tgt_count: Counter[str] = Counter()
    joint: dict[str, Counter[str]] = defaultdict(Counter)
    for m in train:
        s = {t.lower() for t in _tokens(m.source)}
        t = set(_tokens(m.target))
        src_count.update(s)
        tgt_count.update(t)
        for word in s:
            joint[word].update(t)
    lexicon = {}
    for word, counts in joint.items():
        best = max(counts.items(), key=lambda kv: (2 * kv[1] / (src_count[word] + tgt_count[kv[0]]), kv[0]))
        lexicon[word] = best[0]
    return lexicon


def translate_words(source: str, lexicon: dict[str, str]) -> str:
    out = []
    for tok in _tokens(source):
        if tok.startswith("%") or not tok[0].isalnum():
            out.append(tok)
        else:
            out.append(lexicon.get(tok.lower(), tok))
    return _detokenize(out)


def memory(train: list[Message], test: list[Message]) -> tuple[list[str], np.ndarray]:
    """The most similar training message's translation for each test message, and the similarity."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), lowercase=True)
    a = vec.fit_transform([m.source for m in train])
    b = vec.transform([m.source for m in test])
    sim = (b @ a.T).toarray()
    best = sim.argmax(axis=1)
    return [train[i].target for i in best], sim[np.arange(len(test)), best]


def language_task(language: str) -> LanguageTask:
    all_messages = messages(language)
    train = [m for m in all_messages if not in_test(m.source)]
    test = sorted((m for m in all_messages if in_test(m.source)), key=lambda m: (m.catalog, m.source))
    truth = "".join(
        json.dumps({"id": f"m{k + 1:04d}", "reference": m.target, "doc": m.catalog}, ensure_ascii=False)
        + "\n"
        for k, m in enumerate(test)
    )
    lexicon = learn_lexicon(train)
    proposals, similarity = memory(train, test)
    words = [translate_words(m.source, lexicon) for m in test]
    systems = {
        "copy-source": [m.source for m in test],
        "translation-memory": proposals,
        "word-lexicon": words,
        "memory-or-lexicon": [
            p if s >= MEMORY_THRESHOLD else w for p, s, w in zip(proposals, similarity, words, strict=True)
        ],
    }
    outputs = {
        name: "".join(line.replace("\n", " ") + "\n" for line in out).encode()
        for name, out in systems.items()
    }
    return LanguageTask(language, truth.encode(), len(train), len(test), outputs)
