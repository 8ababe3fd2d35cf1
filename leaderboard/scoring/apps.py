from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "leaderboard.scoring"
    label = "scoring"

    def ready(self) -> None:
        # The ports of the apps below (leaderboard.core.ports): challenges parses a task's hidden labels
        # (by its kind) and submissions checks (by the task's kind) and dispatches predictions files through
        # scoring without importing it.
        from leaderboard.challenges import ports as challenge_ports
        from leaderboard.scoring import kinds, services
        from leaderboard.submissions import ports as submission_ports

        challenge_ports.task_kind_registry.register(kinds.REGISTRY)
        submission_ports.submission_dispatch.register(services.submission_dispatch)
