"""The Celery app. Its settings are the CELERY_* names in config/settings; the broker is Redis when
REDIS_URL is set and a folder under var/ otherwise. Run a worker with

    python -m celery -A config worker --pool threads --concurrency 2

(`make run` starts one for you beside the web server). It takes every queue in NSM_WORKER_QUEUES;
`-Q verify` makes a worker for verification alone, on a GPU machine (docs/deploy.md).
Each worker also runs the sweeper that resumes jobs whose worker died (jobs.tasks)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")

app = Celery("nsm")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
