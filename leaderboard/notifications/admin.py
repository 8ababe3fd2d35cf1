from django.contrib import admin

from leaderboard.notifications.models import Notice, NoticePreference


@admin.register(Notice)
class NoticeAdmin(admin.ModelAdmin):
    list_display = ["user", "kind", "subject", "created_at", "on_site", "emailed", "read_at"]
    list_filter = ["kind", "on_site", "emailed"]
    search_fields = ["user__username", "subject", "key"]
    readonly_fields = ["user", "key", "kind", "subject", "body", "url", "created_at", "emailed"]


@admin.register(NoticePreference)
class NoticePreferenceAdmin(admin.ModelAdmin):
    list_display = ["user", "email", "site"]
