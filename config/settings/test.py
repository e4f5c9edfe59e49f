"""The test suite. Fast password hashing; the database comes from DATABASE_URL as elsewhere."""

from config.settings.base import *  # noqa: F403

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
