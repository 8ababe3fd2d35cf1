"""Build the demo challenges through the service's own code paths (services, scoring, rebuilds)."""

from __future__ import annotations

import io
import logging
from collections.abc import Callable

from django.db import transaction

from leaderboard.accounts.models import User
from leaderboard.challenges.models import Challenge
from leaderboard.challenges.services import challenge_create, challenge_reveal_private, task_create
from leaderboard.demo.data import CLASSIFIERS, DATASETS, DemoTask, demo_task, with_split
from leaderboard.demo.text import LANGUAGES, SYSTEMS, language_task
from leaderboard.demo.vision import DETECTORS, SEGMENTERS, build
from leaderboard.rankings.services import shakeup_current
from leaderboard.submissions.services import Upload, submission_create

logger = logging.getLogger(__name__)

DEMO_PASSWORD = "demo-password"
SINGLE = "uci-digits"
MULTI = "uci-classics"
VISION = "digit-scenes"
TEXT = "django-translations"
LADDER = "uci-digits-ladder"
#: The Ladder's fixed step on the demo's Ladder board, in accuracy units.
LADDER_ETA = 0.01
SLUGS = [SINGLE, MULTI, VISION, TEXT, LADDER]


def _user(username: str, *, staff: bool = False) -> User:
    user, created = User.objects.get_or_create(
        username=username, defaults={"is_staff": staff, "is_superuser": staff}
    )
    if created:
        user.set_password(DEMO_PASSWORD)
        user.save()
    return user


def _upload(name: str, data: bytes) -> Upload:
    return Upload(name=name, size=len(data), stream=io.BytesIO(data))


#: The demo's boards show 3 decimals. The default precision (derived from the number of items,
#: rankings.precision) guards hidden labels against probing; the demo's data are public (scikit-learn's
#: bundled datasets), and at 1 decimal the small UCI boards would read 1.0 [0.9, 1.0] for every entry.
DEMO_DECIMALS = 3


def demo_load(*, reset: bool = False, say: Callable[[str], None] = print) -> list[Challenge]:
    if reset:
        Challenge.objects.filter(slug__in=SLUGS).delete()
    organizer = _user("organizer", staff=True)
    participants = {name: _user(name) for name, baseline in CLASSIFIERS if not baseline}
    made = []
    digits: DemoTask | None = None

    if not Challenge.objects.filter(slug=SINGLE).exists():
        digits = _digits(say)
        made.append(_single_challenge(digits, organizer=organizer, participants=participants, say=say))

    if not Challenge.objects.filter(slug=MULTI).exists():
        # the digits predictions are computed once for uci-digits, uci-classics and the Ladder
        tasks = {slug: digits if slug == "digits" and digits else _computed(slug, say) for slug in DATASETS}
        digits = tasks["digits"]
        with transaction.atomic():
            challenge = challenge_create(
                organizer=organizer,
                slug=MULTI,
                title="UCI classics: one method, four datasets",
                description=(
                    "The same seven classifiers on four of scikit-learn's bundled datasets. The "
                    "critical-difference diagram shows which methods the evidence across datasets separates."
                ),
                rules="Submit one predictions file per task (id,prediction).",
                daily_limit=10,
            )
            for slug, t in tasks.items():
                task_create(
                    challenge=challenge,
                    slug=slug,
                    title=t.title,
                    metric="accuracy",
                    truth=t.truth_csv,
                    truth_name=f"{slug}-truth.csv",
                    labels=t.labels,
                    decimals=DEMO_DECIMALS,
                )
        for name, baseline in CLASSIFIERS:
            user = organizer if baseline else participants[name]
            submission_create(
                challenge=challenge,
                user=user,
                name=name,
                files={
                    slug: [_upload(f"{name}-{slug}.csv", t.predictions[name])] for slug, t in tasks.items()
                },
                is_baseline=baseline,
            )
            say(f"  {MULTI}: submitted {name}")
        made.append(challenge)

    if not Challenge.objects.filter(slug=VISION).exists():
        made.append(_vision_challenge(organizer=organizer, say=say))
    if not Challenge.objects.filter(slug=TEXT).exists():
        made.append(_text_challenge(organizer=organizer, say=say))
    if not Challenge.objects.filter(slug=LADDER).exists():
        made.append(
            _ladder_challenge(digits or _digits(say), organizer=organizer, participants=participants, say=say)
        )
    return made


def _single_challenge(
    digits: DemoTask, *, organizer: User, participants: dict[str, User], say: Callable[[str], None]
) -> Challenge:
    """UCI digits with a private split (half of each digit's images), revealed once every entry is scored."""
    with transaction.atomic():
        challenge = challenge_create(
            organizer=organizer,
            slug=SINGLE,
            title="UCI handwritten digits",
            description=(
                "Classify 1,797 8x8 images of handwritten digits. Every entry's predictions are "
                "out-of-fold predictions of 5-fold stratified cross-validation, so each image has one. "
                "Half of the images (drawn at random within each digit) are the private split; the "
                "private board is revealed, so the public board, the private board and the shake-up "
                "report between them are open to everyone."
            ),
            rules="One predictions file per submission: columns id,prediction; prediction is a digit 0-9.",
            daily_limit=10,
        )
        task_create(
            challenge=challenge,
            slug="digits",
            title=digits.title,
            metric="accuracy",
            truth=with_split(digits),
            truth_name="digits-truth.csv",
            labels=digits.labels,
            split_column="split",
            decimals=DEMO_DECIMALS,
        )
    _submit_digits(challenge, digits, organizer=organizer, participants=participants, say=say)
    # the demo's data are public: revealed while it stays open, so a visitor reads the private board and
    # the shake-up report, and each new entry shows its team the private score
    challenge_reveal_private(challenge=challenge, while_open=True)
    # built now (about 5 s) rather than on the first read, which would keep the first visitor waiting
    shakeup_current(task=challenge.tasks.get())
    say(f"  {SINGLE}: private board revealed, shake-up report built")
    return challenge


def _submit_digits(
    challenge: Challenge,
    digits: DemoTask,
    *,
    organizer: User,
    participants: dict[str, User],
    say: Callable[[str], None],
) -> None:
    """The digits classifiers' cross-validated predictions, one entry each (the baselines the organizer's)."""
    for name, baseline in CLASSIFIERS:
        submission_create(
            challenge=challenge,
            user=organizer if baseline else participants[name],
            name=name,
            files={"digits": [_upload(f"{name}.csv", digits.predictions[name])]},
            is_baseline=baseline,
            description=f"{name}, 5-fold cross-validated predictions",
        )
        say(f"  {challenge.slug}: submitted {name}")


def _digits(say: Callable[[str], None]) -> DemoTask:
    say("computing cross-validated predictions on UCI digits ...")
    return demo_task("digits")


def _computed(slug: str, say: Callable[[str], None]) -> DemoTask:
    say(f"computing cross-validated predictions on {slug} ...")
    return demo_task(slug)


def _ladder_challenge(
    digits: DemoTask, *, organizer: User, participants: dict[str, User], say: Callable[[str], None]
) -> Challenge:
    """The UCI digits entries again, on a public board in Ladder mode (a team's shown score moves only when a
    new submission beats it by more than ``LADDER_ETA``) and a private split not yet revealed: a visitor
    reads the Ladder's released scores only; the organizer reads every board, the private one marked as
    theirs alone, and the shake-up report."""
    with transaction.atomic():
        challenge = challenge_create(
            organizer=organizer,
            slug=LADDER,
            title="UCI handwritten digits, on a Ladder",
            description=(
                "The UCI digits entries on a Ladder: the public board shows a team's score only when a "
                f"submission beats the team's shown score by more than {LADDER_ETA} (rounded to that step), "
                "so probing the public half of the images teaches nothing finer. The private half decides "
                "the final ranking; it is not revealed yet."
            ),
            rules="One predictions file per submission: columns id,prediction; prediction is a digit 0-9.",
            daily_limit=10,
        )
        task_create(
            challenge=challenge,
            slug="digits",
            title=digits.title,
            metric="accuracy",
            truth=with_split(digits),
            truth_name="digits-truth.csv",
            labels=digits.labels,
            split_column="split",
            decimals=DEMO_DECIMALS,
            public_mode="ladder",
            ladder_eta=LADDER_ETA,
        )
    _submit_digits(challenge, digits, organizer=organizer, participants=participants, say=say)
    return challenge


def _vision_challenge(*, organizer: User, say: Callable[[str], None]) -> Challenge:
    """Scenes of handwritten digits: a detection task (COCO AP) and a segmentation task (mIoU), with entries
    from real detectors and segmenters (see ``leaderboard.demo.vision``)."""
    say("composing digit scenes and running the detectors and segmenters ...")
    data = build(seed=0)
    with transaction.atomic():
        challenge = challenge_create(
            organizer=organizer,
            slug=VISION,
            title="Digit scenes: detection and segmentation",
            description=(
                "48 grey 96x96 scenes, each with one to four of scikit-learn's 8x8 handwritten digits pasted "
                "at random positions and scales (2x to 4x). Find every digit (boxes, COCO AP) and paint its "
                "ink (label maps, mIoU over background and the ten digits). Each number comes with an "
                "interval from resampling the images."
            ),
            rules=(
                "Detection: COCO results JSON (image_id, category_id 1-10 for digits 0-9, bbox, score). "
                "Segmentation: a zip of 8-bit PNG label maps named <image id>.png (0 background, 1 + digit)."
            ),
            daily_limit=10,
        )
        task_create(
            challenge=challenge,
            slug="boxes",
            title="Digit boxes (COCO AP)",
            metric="coco_ap",
            truth=data.detection_truth,
            truth_name="digit-scenes-instances.json",
            decimals=DEMO_DECIMALS,
        )
        task_create(
            challenge=challenge,
            slug="ink",
            title="Digit ink (mIoU)",
            metric="miou",
            truth=data.segmentation_truth,
            truth_name="digit-scenes-labels.zip",
            labels=data.class_names,
            decimals=DEMO_DECIMALS,
        )
    participants = {name: _user(name) for name, baseline in DETECTORS if not baseline}
    segmenters = dict(SEGMENTERS)
    for name, baseline in DETECTORS:
        files = {"boxes": [_upload(f"{name}-boxes.json.gz", data.detections[name])]}
        if name in segmenters:
            files["ink"] = [_upload(f"{name}-ink.zip", data.segmentations[name])]
        submission_create(
            challenge=challenge,
            user=organizer if baseline else participants[name],
            name=name,
            files=files,
            is_baseline=baseline,
            description=f"{name} on the digit scenes",
        )
        say(f"  {VISION}: submitted {name}")
    return challenge


#: The text challenge's secondary metrics (chrF is the primary, named first): shown beside it, their
#: comparisons with the leader adjusted across them (issue 20).
DEMO_SECONDARY = ["bleu", "ter"]


def _text_challenge(*, organizer: User, say: Callable[[str], None]) -> Challenge:
    """Translating Django's interface strings into a few languages: a chrF task per language (BLEU and TER
    secondary), with entries from a translation memory, a learned word lexicon, both combined, and copying
    the source (see ``leaderboard.demo.text``)."""
    say("reading Django's translation catalogs and running the translation systems ...")
    tasks = {lang: language_task(lang) for lang in LANGUAGES}
    with transaction.atomic():
        challenge = challenge_create(
            organizer=organizer,
            slug=TEXT,
            title="Django's interface strings: English to German, French and Spanish",
            description=(
                "The human translations Django ships for its own interface (the .po catalogs of django/conf "
                "and of each contrib app). A fifth of the English messages are the test segments; systems "
                "learn from the rest. Scored by corpus chrF (sacreBLEU), named as the primary metric before "
                "any submission; BLEU and TER are shown beside it, their comparisons with the leader "
                "adjusted across the two. The bootstrap resamples whole catalogs (each catalog is a "
                "document)."
            ),
            rules="One plain-text file per language: one translated segment per line, in the task's order.",
            daily_limit=10,
        )
        for lang, t in tasks.items():
            task_create(
                challenge=challenge,
                slug=lang,
                title=f"English to {LANGUAGES[lang]} ({t.n_test} messages)",
                metric="chrf",
                truth=t.truth_jsonl,
                truth_name=f"django-{lang}-test.jsonl",
                decimals=1,
                secondary_metrics=DEMO_SECONDARY,
            )
    participants = {name: _user(name) for name, baseline in SYSTEMS if not baseline}
    for name, baseline in SYSTEMS:
        submission_create(
            challenge=challenge,
            user=organizer if baseline else participants[name],
            name=name,
            files={lang: [_upload(f"{name}-{lang}.txt", t.outputs[name])] for lang, t in tasks.items()},
            is_baseline=baseline,
            description=f"{name}, learned from the training messages",
        )
        say(f"  {TEXT}: submitted {name}")
    return challenge
