"""Users. A custom user model from the start, as Django recommends, so it can grow without a migration of
``auth.User`` later."""

from django.contrib.auth.models import AbstractUser


class User(AbstractUser):
    class Meta:
        db_table = "accounts_user"
