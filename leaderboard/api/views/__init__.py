"""The REST API's views, one module per resource; ``leaderboard/api/urls.py`` reads them from here.

Each view validates its input, makes one service or selector call, serializes the result. Visibility:
``challenge_get`` answers 404 for a challenge the user may not see; ``require_organizer`` answers 403 for
managing actions; ``rankings.selectors`` answer 404 for a private board not revealed.
"""

from leaderboard.api.views.accounts import RegisterView, TokenView
from leaderboard.api.views.boards import CriticalDifferenceView, LeaderboardView, RobustnessView, SummaryView
from leaderboard.api.views.challenges import ChallengeDetailView, ChallengeListView, ChallengeRevealView
from leaderboard.api.views.common import ERROR_RESPONSES, FirstRendererNegotiation, JSONErrorsMixin
from leaderboard.api.views.notices import NoticeListView, NoticePreferenceView, NoticeReadView
from leaderboard.api.views.submissions import SubmissionDetailView, SubmissionListView, SubmissionSelectView
from leaderboard.api.views.tasks import (
    TaskDetailView,
    TaskItemsView,
    TaskListView,
    TaskRescoreView,
    TaskTruthView,
)
from leaderboard.api.views.teams import (
    MyTeamView,
    ParticipantDetailView,
    ParticipantListView,
    ParticipationView,
    TeamJoinView,
    TeamListView,
)

__all__ = [
    "ERROR_RESPONSES",
    "ChallengeDetailView",
    "ChallengeListView",
    "ChallengeRevealView",
    "CriticalDifferenceView",
    "FirstRendererNegotiation",
    "JSONErrorsMixin",
    "LeaderboardView",
    "MyTeamView",
    "NoticeListView",
    "NoticePreferenceView",
    "NoticeReadView",
    "ParticipantDetailView",
    "ParticipantListView",
    "ParticipationView",
    "RegisterView",
    "RobustnessView",
    "SubmissionDetailView",
    "SubmissionListView",
    "SubmissionSelectView",
    "SummaryView",
    "TaskDetailView",
    "TaskItemsView",
    "TaskListView",
    "TaskRescoreView",
    "TaskTruthView",
    "TeamJoinView",
    "TeamListView",
    "TokenView",
]
