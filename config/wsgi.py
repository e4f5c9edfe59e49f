"""The WSGI entry point (gunicorn config.wsgi:application, what `manage.py serve` runs). It
defaults to the production settings: a server started without DJANGO_SETTINGS_MODULE must not run
with DEBUG on. `manage.py runserver` sets the development settings before it reads this."""

import os
import sys

from django.core.wsgi import get_wsgi_application

from config.env import ConfigError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.prod")
try:
    application = get_wsgi_application()
except ConfigError as error:  # one line naming the variable, as manage.py says it (config/cli.py)
    sys.stderr.write(f"configuration error: {error}\n")
    # 3 is gunicorn's "worker failed to boot" (Arbiter.WORKER_BOOT_ERROR): its master then stops,
    # where any other code had it start the worker again, forever, the same line each time
    raise SystemExit(3) from None

# a web process pays its one-off costs (imports, template compilation) as it starts, not on a
# reader's first Evaluation view
from config.warm import warm_web

warm_web()
