"""Text tasks: machine translation, summarization, speech recognition and entity tagging.

Corpus metrics (BLEU, chrF, chrF++, TER, WER, CER, span F1) are functions of pooled per-segment
statistics, so a bootstrap resample or a randomization swap is a weighted sum of statistics and every
replicate is an exact corpus score. Modules:

- :mod:`stats.text.finalize`: vectorised finalizers (numpy only; the metric registry imports them);
- :mod:`stats.text.extract`: per-segment statistics from sacreBLEU, jiwer and seqeval
  (``text_metric(name, **options).statistics(hyps, refs)``);
- :mod:`stats.text.io`: plain text, JSONL, CSV and CoNLL files, with ``file:line`` errors;
- :mod:`stats.text.tagging`: entity chunks under the conlleval and strict conventions;
- :mod:`stats.text.synthetic`: seeded synthetic corpora for tests, simulations and benchmarks;
- :mod:`stats.text.significance`: the field's paired tests (approximate randomization, Koehn's and the
  2-delta bootstrap, sacreBLEU's conventions reproduced exactly) and the traps (brevity penalty, design
  effect, segments needed).

Kept import-light: nothing here imports sacreBLEU until statistics are extracted.
"""
