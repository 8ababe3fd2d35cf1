import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from leaderboard.demo.load import DEMO_PASSWORD, demo_load


@contextmanager
def _quiet_logs(level: int) -> Iterator[None]:
    """The service logs every scored submission and board rebuild at INFO (hundreds of lines for the demo):
    while the demo loads, only warnings and errors reach the console, so its own progress lines and the
    accounts line are what a new user reads."""
    root = logging.getLogger()
    before = root.level
    root.setLevel(level)
    try:
        yield
    finally:
        root.setLevel(before)


class Command(BaseCommand):
    help = (
        "Load and score the demo challenges (UCI digits, with its private board revealed; the same entries on "
        "a Ladder, not revealed; four UCI datasets with the same entries; digit scenes with a detection and a "
        "segmentation task; Django's interface strings in three languages)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--reset", action="store_true", help="Delete and rebuild the demo challenges.")

    def handle(self, *args: Any, **options: Any) -> None:
        level = logging.INFO if options["verbosity"] > 1 else logging.WARNING
        with _quiet_logs(level):
            made = demo_load(reset=options["reset"], say=self.stdout.write)
        if made:
            self.stdout.write(self.style.SUCCESS(f"Loaded {', '.join(c.slug for c in made)}."))
        else:
            self.stdout.write("The demo challenges exist already (use --reset to rebuild them).")
        self.stdout.write(
            f"Demo accounts: 'organizer' (staff) and one per classifier (e.g. 'svm-rbf'), password '{DEMO_PASSWORD}'."
        )
