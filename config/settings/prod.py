"""Production: every secret from the environment, secure cookies, no debug."""

from config.env import ConfigError, env_bool, env_str
from config.settings.base import *  # noqa: F403

DEBUG = False
SECRET_KEY = env_str("SECRET_KEY")
if SECRET_KEY.startswith("dev-only"):
    raise ConfigError("SECRET_KEY must be set to a real secret in production")
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True
