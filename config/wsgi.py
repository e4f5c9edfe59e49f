import os
import sys

from django.core.wsgi import get_wsgi_application

from config.env import ConfigError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
try:
    application = get_wsgi_application()
except ConfigError as error:  # one line naming the variable, as manage.py says it (config/cli.py)
    sys.stderr.write(f"configuration error: {error}\n")
    raise SystemExit(2) from None
