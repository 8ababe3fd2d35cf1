from django.contrib.auth import views as auth_views
from django.urls import path

from leaderboard.web.views import account, organizer, participant, public, teams

urlpatterns = [
    path("", public.home, name="home"),
    # account
    path("accounts/login/", account.login_view, name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/signup/", account.signup, name="signup"),
    path("accounts/", account.account, name="account"),
    path("accounts/token/", account.token_regenerate, name="token_regenerate"),
    # organizer
    path("challenges/new/", organizer.challenge_new, name="challenge_new"),
    path("c/<slug:slug>/edit/", organizer.challenge_edit, name="challenge_edit"),
    path("c/<slug:slug>/organize/", organizer.organize, name="organize"),
    path("c/<slug:slug>/tasks/new/", organizer.task_new, name="task_new"),
    path("c/<slug:slug>/t/<slug:task_slug>/labels/", organizer.task_labels, name="task_labels"),
    path("c/<slug:slug>/t/<slug:task_slug>/rescore/", organizer.rescore, name="rescore"),
    path("c/<slug:slug>/rescore/<int:pk>/", organizer.rescore_job, name="rescore_job"),
    path("c/<slug:slug>/reveal/", organizer.reveal, name="reveal"),
    # boards (public reads)
    path("c/<slug:slug>/", public.challenge_detail, name="challenge"),
    path("c/<slug:slug>/summary/", public.summary, name="summary"),
    path("c/<slug:slug>/critical-difference.svg", public.cd_svg, name="cd_svg"),
    path("c/<slug:slug>/t/<slug:task_slug>/ranks/", public.rank_distribution, name="ranks"),
    path("c/<slug:slug>/t/<slug:task_slug>/ranks.png", public.rank_image, name="ranks_png"),
    path("c/<slug:slug>/t/<slug:task_slug>/pairwise/", public.pairwise, name="pairwise"),
    path(
        "c/<slug:slug>/t/<slug:task_slug>/board.<str:fmt>",
        public.board_download,
        name="board_download",
    ),
    # participants
    path("c/<slug:slug>/submit/", participant.submit, name="submit"),
    path("c/<slug:slug>/t/<slug:task_slug>/example.csv", participant.example, name="example"),
    path("c/<slug:slug>/mine/", participant.my_submissions, name="my_submissions"),
    path("c/<slug:slug>/team/", teams.team, name="team"),
    path("submissions/<int:pk>/", participant.submission_detail, name="submission"),
    path("submissions/<int:pk>/status.json", participant.submission_status, name="submission_status"),
    path("submissions/<int:pk>/cancel/", participant.cancel, name="submission_cancel"),
    path("submissions/<int:pk>/select/", participant.select, name="submission_select"),
]
