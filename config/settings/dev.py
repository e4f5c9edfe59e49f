"""Local development: `make run`. SQLite under var/ unless DATABASE_URL says otherwise."""

from config.env import env_bool
from config.settings.base import *  # noqa: F403

DEBUG = env_bool("DEBUG", True)
