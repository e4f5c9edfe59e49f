"""What `manage.py` runs: Django's command line, with the two mistakes everyone makes on a new
machine reported in one line instead of a traceback.

- A bad setting (``DEBUG=maybe``, ``NSM_RULE_SET=7``, a model folder that is not there): the
  settings raise ConfigError naming the variable; every command, ``check`` and ``runapp``
  included, stops with that line.
- A database that is not migrated: a project command (one of this project's apps) checks the
  migration plan before it runs, and says what to run.
"""

from __future__ import annotations

import os
import sys

from config.env import ConfigError

#: the apps whose commands need the database as the migrations leave it (server's runapp and serve
#: start processes, which report the database themselves)
PROJECT_APPS = (
    "annotator", "registry", "predictions", "adjudication", "discussion", "profiles", "contrasts",
    "verification", "training", "learning", "quality", "exports", "webhooks",
)  # fmt: skip
NOT_MIGRATED = "the database is not migrated: run `python manage.py migrate`"


class NotMigrated(Exception):
    """The database lacks some migration; the message says what to run."""


def _project_command(argv: list[str]) -> bool:
    """Whether argv names a command of one of this project's apps (not `migrate`, `help`...)."""
    from django.core.management import get_commands

    if len(argv) < 2 or "-h" in argv or "--help" in argv:
        return False
    app = get_commands().get(argv[1], "")
    return app in PROJECT_APPS


def database_migrated() -> bool:
    """Whether every migration is applied. Reads the migration table only (an empty SQLite file
    stays empty); a server that cannot be reached is left to the command to report."""
    from django.db import DEFAULT_DB_ALIAS, connections
    from django.db.migrations.executor import MigrationExecutor

    connection = connections[DEFAULT_DB_ALIAS]
    executor = MigrationExecutor(connection)
    return not executor.migration_plan(executor.loader.graph.leaf_nodes())


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv if argv is None else argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
    try:
        import django
        from django.core.management import execute_from_command_line

        django.setup()
        if _project_command(argv) and not database_migrated():
            raise NotMigrated(NOT_MIGRATED)
        execute_from_command_line(argv)
    except ConfigError as error:
        sys.stderr.write(f"configuration error: {error}\n")
        return 2
    except NotMigrated as error:
        sys.stderr.write(f"error: {error}\n")
        return 1
    return 0
