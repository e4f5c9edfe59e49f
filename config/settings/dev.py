"""Local development: `make run`. SQLite under var/ unless DATABASE_URL says otherwise; with
PostgreSQL, the same bounded connection pool as production (config.env.postgres_pool)."""

from config.env import env_bool, postgres_pool
from config.settings.base import *  # noqa: F403

DEBUG = env_bool("DEBUG", True)
DATABASES["default"] = postgres_pool(DATABASES["default"])  # noqa: F405
