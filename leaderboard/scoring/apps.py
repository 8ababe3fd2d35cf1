from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "leaderboard.scoring"
    label = "scoring"

    def ready(self) -> None:
        # The ports of the apps below (leaderboard.core.ports): challenges parses a task's hidden labels
        # and submissions checks and dispatches predictions files through scoring without importing it.
        from leaderboard.challenges import ports as challenge_ports
        from leaderboard.scoring import engine, services
        from leaderboard.submissions import ports as submission_ports

        challenge_ports.truth_parser.register(engine.parse_truth)
        submission_ports.predictions_check.register(engine.validate_predictions)
        submission_ports.submission_dispatch.register(services.submission_dispatch)
