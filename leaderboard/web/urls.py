from django.contrib.auth import views as auth_views
from django.urls import path

from leaderboard.web.views import account, entries, notices, organizer, participant, public, report, teams

urlpatterns = [
    path("", public.home, name="home"),
    # account
    path("accounts/login/", account.login_view, name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/signup/", account.signup, name="signup"),
    path("accounts/", account.account, name="account"),
    path("accounts/token/", account.token_regenerate, name="token_regenerate"),
    path("accounts/notices/", notices.notice_preferences, name="notice_preferences"),
    path("notices/", notices.notices, name="notices"),
    path("notices/read/", notices.notices_read, name="notices_read"),
    path("accounts/password-reset/", account.password_reset, name="password_reset"),
    path("accounts/password-reset/sent/", account.password_reset_done, name="password_reset_done"),
    path(
        "accounts/password-reset/<uidb64>/<token>/",
        account.password_reset_confirm,
        name="password_reset_confirm",
    ),
    path("accounts/password-reset/done/", account.password_reset_complete, name="password_reset_complete"),
    # organizer
    path("challenges/new/", organizer.challenge_new, name="challenge_new"),
    path("c/<slug:slug>/edit/", organizer.challenge_edit, name="challenge_edit"),
    path("c/<slug:slug>/organize/", organizer.organize, name="organize"),
    path("c/<slug:slug>/tasks/new/", organizer.task_new, name="task_new"),
    path("c/<slug:slug>/t/<slug:task_slug>/labels/", organizer.task_labels, name="task_labels"),
    path("c/<slug:slug>/t/<slug:task_slug>/rescore/", organizer.rescore, name="rescore"),
    path("c/<slug:slug>/rescore/<int:pk>/", organizer.rescore_job, name="rescore_job"),
    path("c/<slug:slug>/reveal/", organizer.reveal, name="reveal"),
    path("c/<slug:slug>/plan/", organizer.plan, name="plan"),
    path(
        "c/<slug:slug>/participants/<str:username>/",
        organizer.participant_decide,
        name="participant_decide",
    ),
    # boards (public reads)
    path("c/<slug:slug>/", public.challenge_detail, name="challenge"),
    path("c/<slug:slug>/summary/", public.summary, name="summary"),
    path("c/<slug:slug>/report/", report.report, name="report"),
    path("c/<slug:slug>/critical-difference.svg", public.cd_svg, name="cd_svg"),
    path("c/<slug:slug>/t/<slug:task_slug>/ranks/", public.rank_distribution, name="ranks"),
    path("c/<slug:slug>/t/<slug:task_slug>/ranks.png", public.rank_image, name="ranks_png"),
    path("c/<slug:slug>/t/<slug:task_slug>/robustness/", public.robustness, name="robustness"),
    path("c/<slug:slug>/t/<slug:task_slug>/pairwise/", public.pairwise, name="pairwise"),
    path("c/<slug:slug>/t/<slug:task_slug>/shakeup/", public.shakeup, name="shakeup"),
    path("c/<slug:slug>/t/<slug:task_slug>/shakeup.csv", public.shakeup_download, name="shakeup_csv"),
    path("c/<slug:slug>/t/<slug:task_slug>/shakeup.svg", public.shakeup_svg, name="shakeup_svg"),
    path("c/<slug:slug>/t/<slug:task_slug>/classes/", public.task_classes, name="task_classes"),
    path("c/<slug:slug>/t/<slug:task_slug>/entries/<int:pk>/", entries.entry, name="entry"),
    path(
        "c/<slug:slug>/t/<slug:task_slug>/board.<str:fmt>",
        public.board_download,
        name="board_download",
    ),
    # participants
    path("c/<slug:slug>/submit/", participant.submit, name="submit"),
    path("c/<slug:slug>/participation/", participant.participation, name="participation"),
    path("c/<slug:slug>/t/<slug:task_slug>/example.csv", participant.example, name="example"),
    path("c/<slug:slug>/mine/", participant.my_submissions, name="my_submissions"),
    path("c/<slug:slug>/team/", teams.team, name="team"),
    path("submissions/<int:pk>/", participant.submission_detail, name="submission"),
    path("submissions/<int:pk>/status.json", participant.submission_status, name="submission_status"),
    path("submissions/<int:pk>/cancel/", participant.cancel, name="submission_cancel"),
    path("submissions/<int:pk>/select/", participant.select, name="submission_select"),
]
