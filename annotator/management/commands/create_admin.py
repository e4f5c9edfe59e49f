"""The first admin of a fresh database: ``manage.py create_admin NAME``."""

from __future__ import annotations

import getpass
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotator.roles import ADMIN
from annotator.user_services import UserError, user_create


class Command(BaseCommand):
    help = "Create an admin (admin role, Django staff); the password is prompted for or read from stdin."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("username")
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--password-stdin",
            action="store_true",
            help="read the password from the first line of standard input (scripts, containers)",
        )
        parser.add_argument(
            "--superuser", action="store_true", help="also a Django superuser (all of the Django admin)"
        )

    def _password(self, from_stdin: bool) -> str:
        if from_stdin:
            password = sys.stdin.readline().rstrip("\r\n")
        else:
            password = getpass.getpass("Password: ")
            if getpass.getpass("Password (again): ") != password:
                raise CommandError("the two passwords do not match; nothing was created")
        if not password:
            raise CommandError("empty password; nothing was created")
        return password

    @transaction.atomic
    def handle(self, *args: Any, **o: Any) -> None:
        password = self._password(o["password_stdin"])
        try:
            new = user_create(
                username=o["username"], email=o["email"], password=password, roles=[ADMIN], is_staff=True
            )
        except UserError as error:
            raise CommandError(f"{error.field}: {error}; nothing was created") from None
        if o["superuser"]:
            new.user.is_superuser = True
            new.user.save(update_fields=["is_superuser"])
        self.stdout.write(f"{new.user.username} is an admin: log in and open Users to add the team.")
