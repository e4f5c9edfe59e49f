"""Create the demo users (one per role, two annotators) and print their credentials."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotator.roles import ADJUDICATOR, ADMIN, ANNOTATOR

DEMO_USERS: tuple[tuple[str, str, str], ...] = (
    ("annotator1", "annotator1-demo", ANNOTATOR),
    ("annotator2", "annotator2-demo", ANNOTATOR),
    ("adjudicator", "adjudicator-demo", ADJUDICATOR),
    ("admin", "admin-demo", ADMIN),
)


class Command(BaseCommand):
    help = "Create demo users for a local instance (refused when DEBUG is off unless --force)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--force", action="store_true", help="allow with DEBUG off")

    @transaction.atomic
    def handle(self, *args: Any, force: bool = False, **options: Any) -> None:
        if not settings.DEBUG and not force:
            raise CommandError("demo users have known passwords; refusing with DEBUG off (use --force)")
        created = []
        for username, password, role in DEMO_USERS:
            group, _ = Group.objects.get_or_create(name=role)
            user, new = User.objects.get_or_create(username=username)
            if new:
                user.set_password(password)
                user.is_staff = role == ADMIN
                user.is_superuser = role == ADMIN
                user.save()
                created.append(username)
            user.groups.add(group)
        self.stdout.write("Demo users (username / password / role):")
        for username, password, role in DEMO_USERS:
            self.stdout.write(f"  {username:12} {password:18} {role}")
        if created:
            self.stdout.write(f"Created: {', '.join(created)}")
