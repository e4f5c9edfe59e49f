"""Running the app: `serve` (production: gunicorn and the job worker, supervised) and `runapp`
(development: Django's server and the job worker). The top floor: it starts processes of every
other app and is imported by none."""
