"""The settings of a task and of a challenge, declared once: name, type, range, default, help text.

Every door derives its fields from here: the API's serializers (``api.serializers``, hence the OpenAPI
schema), the site's forms (``web.forms``) and ``lb add-task``'s options (``cli.main``); the services check
the ranges with :meth:`Setting.refusal`'s messages (``challenges.services``), and the models' validators
use the same bounds. A new setting is one entry here plus the service's keyword and the model field.

Pure Python, no Django: ``lb`` is an HTTP client shipped in the same distribution that imports nothing of
the service but this module (the ``lb-client`` import contract, tests/architecture/test_layers.py). That
was chosen over reading the server's OpenAPI schema at start-up because ``lb add-task --help`` must work
without a server, the options are checked by click before any upload, and the test that the three doors
agree needs no running service. An ``lb`` older than its server may lack a new option; the server still
validates everything it receives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

#: Longest challenge description and rules, and task description (characters): bounded text, clear 400s.
CHALLENGE_TEXT_MAX_CHARS = 20_000
TASK_DESCRIPTION_MAX_CHARS = 5_000
#: Runs (files of one task) per submission when the organizer sets nothing, and the most they may allow.
RUNS_DEFAULT = 5
RUNS_MAX = 20
#: The board's precision: decimals shown to participants when the organizer sets nothing is derived from
#: the task's size (``leaderboard.rankings.precision``); an organizer may set 1 to this many.
DECIMALS_MAX = 6
#: The parameter-free Ladder's default step in paired standard errors: the smallest of the simulated
#: multipliers (1, 2, 3) that keeps the boosting attack's gain under one standard error (docs/comparisons.md).
LADDER_Z_DEFAULT = 3.0
LADDER_Z_MAX = 10.0
#: A segmentation label map's pixel values are 8 or 16 bit.
IGNORE_INDEX_DEFAULT = 255
IGNORE_INDEX_MAX = 65_535

Kind = Literal["text", "slug", "metric", "int", "float", "bool", "choice", "labels", "file", "datetime"]
#: ``required`` settings have no default; the others default to ``Setting.default``.
REQUIRED: Any = object()


@dataclass(frozen=True)
class Setting:
    """One setting: what every door offers and what the service accepts.

    ``minimum``/``maximum`` are inclusive; ``positive`` means strictly above zero (no inclusive bound can
    say it for a float). ``nullable`` settings may be left empty (``None``: the service derives the value,
    e.g. the board's decimals from the number of items). ``choices`` are ``(value, label)`` pairs.
    ``cli`` is False for a setting ``lb add-task`` takes otherwise (the hidden-labels file is its
    argument).
    """

    name: str
    kind: Kind
    help: str = ""
    label: str = ""
    default: Any = REQUIRED
    minimum: float | None = None
    maximum: float | None = None
    positive: bool = False
    nullable: bool = False
    max_length: int | None = None
    choices: tuple[tuple[str, str], ...] = ()
    cli: bool = True

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(value for value, _ in self.choices)

    @property
    def option(self) -> str:
        """The ``lb`` option: ``--ladder-z`` for ``ladder_z``."""
        return "--" + self.name.replace("_", "-")

    @property
    def verbose_label(self) -> str:
        return self.label or self.name.replace("_", " ").capitalize()

    @property
    def range_message(self) -> str:
        """The refusal of a number outside ``minimum``..``maximum`` (every door shows this text)."""
        if self.minimum is not None and self.maximum is not None:
            return f"`{self.name}` must lie between {self.minimum:g} and {self.maximum:g}."
        if self.minimum is not None:
            return f"`{self.name}` must be at least {self.minimum:g}."
        if self.maximum is not None:
            return f"`{self.name}` must be at most {self.maximum:g}."
        return f"`{self.name}` must be a number."

    def refusal(self, value: Any) -> str | None:
        """Why ``value`` is outside this setting's range (the message every door shows), or None.

        >>> TASK["ladder_z"].refusal(11.0)
        '`ladder_z` must lie between 0 and 10.'
        >>> TASK["ladder_eta"].refusal(0.0), TASK["stratify"].refusal("x")
        ('`ladder_eta` must be a positive number.', '`stratify` must be one of auto, class, none.')
        """
        if value is None:
            return None if self.nullable or not self.required else f"`{self.name}` is required."
        if self.choices and value not in self.values:
            return f"`{self.name}` must be one of {', '.join(self.values)}."
        if self.kind in ("int", "float"):
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                return f"`{self.name}` must be a number."
            if self.kind == "int" and value != int(value):
                return f"`{self.name}` must be a whole number."
            if self.positive and value <= 0:
                return f"`{self.name}` must be a positive number."
            low = -math.inf if self.minimum is None else self.minimum
            high = math.inf if self.maximum is None else self.maximum
            if not low <= value <= high:
                return self.range_message
        if self.max_length is not None and isinstance(value, str) and len(value) > self.max_length:
            return f"`{self.name}` is {len(value):,} characters; the limit is {self.max_length:,}."
        return None


def _by_name(settings: tuple[Setting, ...]) -> dict[str, Setting]:
    return {s.name: s for s in settings}


PUBLIC_MODES = (
    ("plain", "Plain: every submission's score is shown"),
    ("ladder", "Ladder: a new score only when it beats the shown one by more than a fixed step eta"),
    # The model's label (and its migrations) end after "by more": a stray string literal cut it. Fixing
    # it is a migration of challenges.Task.public_mode, left to the branch that reworks board modes.
    ("ladder-free", "Parameter-free Ladder: a new score only when it beats the shown one by more "),
)
STRATIFY = (
    ("auto", "By true class for class-based metrics (ROC AUC, AP, kappa, macro averages)"),
    ("class", "By true class for every classification metric"),
    ("none", "Not stratified"),
)
#: sacreBLEU's BLEU tokenizers (``stats.text.extract.TOKENIZERS``; a test keeps the two equal) and
#: smoothing methods (``stats.text.finalize.SMOOTH_DEFAULTS``): this module imports nothing of ``stats``.
TOKENIZE = (
    ("13a", "13a (mteval-v13a, the default)"),
    ("intl", "intl (international punctuation and symbols)"),
    ("char", "char (every character a token)"),
    ("zh", "zh (Chinese characters split)"),
    ("none", "none (already tokenized)"),
    ("ja-mecab", "ja-mecab (Japanese, MeCab)"),
    ("ko-mecab", "ko-mecab (Korean, MeCab)"),
)
SMOOTH_METHODS = (
    ("exp", "exp (the default)"),
    ("floor", "floor"),
    ("add-k", "add-k"),
    ("none", "none"),
)
#: The task settings that are a text metric's options (the text kind checks which metric has which).
TEXT_METRIC_OPTIONS = ("tokenize", "lowercase", "smooth_method", "effective_order")

#: The setting naming a task's secondary metrics, and their key in ``Task.vision`` (public, with the task).
SECONDARY_METRICS = "secondary_metrics"

#: A task's settings, in the order of the site's form (``task_create``'s keywords, and ``truth``).
TASK_SETTINGS: tuple[Setting, ...] = (
    Setting("title", "text", max_length=200, help="The task's title."),
    Setting("slug", "slug", max_length=80, help="In addresses and in 'file:<task>' upload fields."),
    Setting("description", "text", default="", max_length=TASK_DESCRIPTION_MAX_CHARS),
    Setting(
        "max_runs",
        "int",
        default=RUNS_DEFAULT,
        minimum=1,
        maximum=RUNS_MAX,
        label="Runs per submission",
        help="Files of this task one submission may carry (training seeds). Each run's value is shown "
        "only as part of the mean, at the board's precision.",
    ),
    Setting(
        "decimals",
        "int",
        default=None,
        nullable=True,
        minimum=1,
        maximum=DECIMALS_MAX,
        label="Decimals shown",
        help="The board's precision: participants see every number rounded to this many decimals. "
        "Empty: derived from the number of items.",
    ),
    Setting(
        "metric",
        "metric",
        max_length=40,
        help="The headline metric, e.g. accuracy, macro_f1, roc_auc, coco_ap, voc_ap50, miou.",
    ),
    Setting(
        SECONDARY_METRICS,
        "labels",
        default=None,
        nullable=True,
        label="Secondary metrics",
        help="Other metrics of the task shown beside the headline (primary) metric, comma-separated, e.g. "
        "chrf, ter (text tasks). The headline metric ranks; each secondary metric's comparison with the "
        "leader is adjusted across the secondary metrics (Holm) and labelled so. Named with the task, "
        "before any submission; neither can change afterwards.",
    ),
    Setting(
        "labels",
        "labels",
        default=None,
        nullable=True,
        help="The label set, comma-separated (classification); empty to take it from the labels file. "
        "Segmentation: the class names, in pixel-value order (0, 1, 2, ...).",
    ),
    Setting(
        "group_column",
        "text",
        default="",
        help="Column of the group (writer, patient...) for the grouped bootstrap.",
    ),
    Setting(
        "split_column",
        "text",
        default="",
        label="Private split column",
        help="Column that says, per item, 'public' or 'private' (the private items form the board "
        "revealed at the end).",
    ),
    Setting(
        "positive",
        "text",
        default="",
        max_length=200,
        label="Positive class",
        help="For ROC AUC, average precision, log loss and Brier: the class the scores are the "
        "probability of. Empty: the second label in sorted order.",
    ),
    Setting(
        "stratify",
        "choice",
        default="auto",
        choices=STRATIFY,
        label="Resampling",
        help="Stratified resampling keeps every class in every resample, so rare-class metrics stay "
        "defined: auto (class-based metrics), class, none.",
    ),
    Setting(
        "public_mode",
        "choice",
        default="plain",
        choices=PUBLIC_MODES,
        label="Public board",
        help="What the public board releases: plain (every score), ladder (a new score only when it beats "
        "the shown one by more than ladder_eta), ladder-free (by more than ladder_z standard errors of "
        "the paired difference); a Ladder stops participants from climbing the public board by probing "
        "it (docs/comparisons.md). Frozen once the task has submissions.",
    ),
    Setting(
        "ladder_eta",
        "float",
        default=None,
        nullable=True,
        positive=True,
        label="Ladder step (fixed)",
        help="Mode 'ladder': the step in the metric's units, e.g. 0.01.",
    ),
    Setting(
        "ladder_z",
        "float",
        default=None,
        nullable=True,
        minimum=0,
        maximum=LADDER_Z_MAX,
        label="Ladder step (standard errors)",
        help=f"Mode 'ladder-free': the step in standard errors of the paired difference (default "
        f"{LADDER_Z_DEFAULT:g}: the smallest that kept the boosting attack under one standard error).",
    ),
    Setting(
        "ignore_index",
        "int",
        default=IGNORE_INDEX_DEFAULT,
        minimum=0,
        maximum=IGNORE_INDEX_MAX,
        help="Segmentation: the label-map value of pixels that are not scored.",
    ),
    Setting(
        "reduce_zero_label",
        "bool",
        default=False,
        help="Segmentation (ADE20K): label 0 is ignored and the other labels shift by -1.",
    ),
    Setting(
        "tokenize",
        "choice",
        default="13a",
        choices=TOKENIZE,
        label="BLEU tokenizer",
        help="Text tasks, BLEU: sacreBLEU's tokenizer (13a, intl, char, zh, none; ja-mecab and ko-mecab "
        "where their packages are installed). Named in the signature.",
    ),
    Setting(
        "lowercase",
        "bool",
        default=False,
        help="Text tasks, BLEU and chrF: compare lowercased text (sacreBLEU's case:lc). TER is "
        "case-insensitive already.",
    ),
    Setting(
        "smooth_method",
        "choice",
        default="exp",
        choices=SMOOTH_METHODS,
        label="BLEU smoothing",
        help="Text tasks, BLEU: sacreBLEU's smoothing of zero n-gram counts (exp, floor, add-k, none).",
    ),
    Setting(
        "effective_order",
        "bool",
        default=False,
        label="BLEU effective order",
        help="Text tasks, BLEU: leave out n-gram orders with no match in a (short) corpus (sacreBLEU's "
        "eff:yes).",
    ),
    Setting(
        "truth",
        "file",
        label="Hidden labels file",
        help="The hidden labels: CSV or Parquet with an id column and the labels; detection: a COCO "
        "annotation JSON (or VOC-style); segmentation: a zip or tar of PNG label maps named <image "
        "id>.png. Stored privately; never shown again.",
        cli=False,
    ),
)
TASK = _by_name(TASK_SETTINGS)
#: The task settings that decide what the public board releases; frozen once the task has a submission.
PUBLIC_MODE_FIELDS = ("public_mode", "ladder_eta", "ladder_z")

VISIBILITY = (
    ("public", "Public (listed)"),
    ("unlisted", "Unlisted (anyone with the link)"),
    ("private", "Private (organizers and participants only)"),
)
ENTRY_SELECTION = (
    ("latest", "The team's latest scored submission"),
    ("best", "The team's best scored submission (on the public board)"),
    ("selected", "The submission the team selected"),
)
INTERVAL_METHODS = (
    ("auto", "By metric (chosen by measured coverage: Wilson for plain proportions)"),
    ("bca", "BCa bootstrap"),
    ("percentile", "Percentile bootstrap"),
    ("basic", "Basic bootstrap"),
)
CORRECTIONS = (
    ("holm", "Holm (family-wise error)"),
    ("bh", "Benjamini-Hochberg (false discovery rate)"),
)

#: A challenge's settings an organizer chooses, in form order (``challenge_create``'s keywords).
CHALLENGE_SETTINGS_SPEC: tuple[Setting, ...] = (
    Setting("title", "text", max_length=200),
    Setting("description", "text", default="", max_length=CHALLENGE_TEXT_MAX_CHARS),
    Setting("rules", "text", default="", max_length=CHALLENGE_TEXT_MAX_CHARS),
    Setting("start", "datetime", help="UTC."),
    Setting("end", "datetime", default=None, nullable=True, help="UTC; empty for no end."),
    Setting("visibility", "choice", default="public", choices=VISIBILITY),
    Setting("daily_limit", "int", default=5, minimum=1, help="Submissions per team per 24 hours."),
    Setting("total_limit", "int", default=100, minimum=1, help="Submissions per team in total."),
    Setting("entry_selection", "choice", default="latest", choices=ENTRY_SELECTION),
    Setting(
        "confidence",
        "float",
        default=0.95,
        minimum=0.5,
        maximum=0.999,
        help="Confidence level of every interval on the board.",
    ),
    Setting(
        "resamples",
        "int",
        default=10_000,
        minimum=100,
        maximum=100_000,
        help="Bootstrap resamples per score.",
    ),
    Setting("interval_method", "choice", default="auto", choices=INTERVAL_METHODS),
    Setting("correction", "choice", default="holm", choices=CORRECTIONS),
    Setting("seed", "int", default=0, minimum=0, help="Seed of the resamples (the board is reproducible)."),
    Setting(
        "requires_approval",
        "bool",
        default=False,
        label="Approved participants only",
        help="Participants ask to take part; they may submit once an organizer approves them.",
    ),
    Setting(
        "quota_per_address",
        "bool",
        default=True,
        label="One quota per network address",
        help="Submissions of every team sent from one network address share one team's limits, so "
        "throwaway accounts do not multiply the quota, nor what the board tells about the hidden labels "
        "(docs/reliability.md). Teams behind one shared address (a lab's or a campus's) then share a "
        "quota: turn this off only with approval on, or for a challenge whose board has nothing to leak.",
    ),
)
CHALLENGE = _by_name(CHALLENGE_SETTINGS_SPEC)
# Changing these changes every number on the board, so they are frozen once a submission was scored.
STATISTICS_FIELDS = frozenset({"confidence", "resamples", "interval_method", "correction", "seed"})


def first_refusal(spec: dict[str, Setting], values: dict[str, Any]) -> tuple[str, str] | None:
    """The first ``(setting, message)`` among ``values`` outside its declared range, or None."""
    for name, value in values.items():
        setting = spec.get(name)
        message = setting.refusal(value) if setting is not None else None
        if message is not None:
            return name, message
    return None
