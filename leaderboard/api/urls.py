from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from leaderboard.api import views
from leaderboard.api.exception_handlers import not_found
from leaderboard.api.plan import PlanView
from leaderboard.api.shakeup import ShakeupChartView, ShakeupView
from leaderboard.rankings.read_cache import cached_for_anonymous
from leaderboard.scoring.models import Split

app_name = "api"

urlpatterns = [
    path("auth/token/", views.TokenView.as_view(), name="token"),
    path("auth/register/", views.RegisterView.as_view(), name="register"),
    path("notices/", views.NoticeListView.as_view(), name="notice-list"),
    path("notices/read/", views.NoticeReadView.as_view(), name="notice-read"),
    path("notices/preferences/", views.NoticePreferenceView.as_view(), name="notice-preferences"),
    path("plan/", PlanView.as_view(), name="plan"),
    path("challenges/", views.ChallengeListView.as_view(), name="challenge-list"),
    path("challenges/<slug:slug>/", views.ChallengeDetailView.as_view(), name="challenge-detail"),
    path("challenges/<slug:slug>/reveal/", views.ChallengeRevealView.as_view(), name="challenge-reveal"),
    path("challenges/<slug:slug>/tasks/", views.TaskListView.as_view(), name="task-list"),
    path("challenges/<slug:slug>/tasks/<slug:task>/", views.TaskDetailView.as_view(), name="task-detail"),
    path("challenges/<slug:slug>/tasks/<slug:task>/items/", views.TaskItemsView.as_view(), name="task-items"),
    path(
        "challenges/<slug:slug>/tasks/<slug:task>/robustness/",
        views.RobustnessView.as_view(),
        name="task-robustness",
    ),
    path("challenges/<slug:slug>/tasks/<slug:task>/truth/", views.TaskTruthView.as_view(), name="task-truth"),
    path(
        "challenges/<slug:slug>/tasks/<slug:task>/rescore/",
        views.TaskRescoreView.as_view(),
        name="task-rescore",
    ),
    path("challenges/<slug:slug>/teams/", views.TeamListView.as_view(), name="team-list"),
    path("challenges/<slug:slug>/teams/mine/", views.MyTeamView.as_view(), name="team-mine"),
    path("challenges/<slug:slug>/teams/join/", views.TeamJoinView.as_view(), name="team-join"),
    path("challenges/<slug:slug>/participation/", views.ParticipationView.as_view(), name="participation"),
    path(
        "challenges/<slug:slug>/participants/", views.ParticipantListView.as_view(), name="participant-list"
    ),
    path(
        "challenges/<slug:slug>/participants/<str:username>/",
        views.ParticipantDetailView.as_view(),
        name="participant-detail",
    ),
    path("challenges/<slug:slug>/submissions/", views.SubmissionListView.as_view(), name="submission-list"),
    path(
        "challenges/<slug:slug>/leaderboard/",
        # anonymous JSON reads are answered from the per-process cache (leaderboard/rankings/read_cache.py)
        cached_for_anonymous(
            ["task", "split", "sequence", "limit", "offset", "format"],
            values={"split": Split.values, "format": ["json"]},
        )(views.LeaderboardView.as_view()),
        name="leaderboard",
    ),
    path("challenges/<slug:slug>/summary/", views.SummaryView.as_view(), name="summary"),
    path(
        "challenges/<slug:slug>/critical-difference.svg",
        views.CriticalDifferenceView.as_view(),
        name="critical-difference",
    ),
    path("submissions/<int:pk>/", views.SubmissionDetailView.as_view(), name="submission-detail"),
    path("submissions/<int:pk>/select/", views.SubmissionSelectView.as_view(), name="submission-select"),
    path("challenges/<slug:slug>/shakeup/", ShakeupView.as_view(), name="shakeup"),
    path("challenges/<slug:slug>/shakeup.svg", ShakeupChartView.as_view(), name="shakeup-chart"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path(
        "docs/",
        SpectacularSwaggerView.as_view(url_name="api:schema", template_name="api/swagger_ui.html"),
        name="docs",
    ),
    # unknown API paths answer in the API's shape, not with an HTML page (also with a newline in the path)
    re_path(r"^[\s\S]*$", not_found),
]
