"""Typed environment helpers that fail loudly on bad values (a typo must not become a default)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit


class ConfigError(ValueError):
    """A setting from the environment has a value that cannot be used."""


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None:
        raise ConfigError(f"{name} must be set")
    return value


#: what Django's deployment check (security.W009) asks of a secret key
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_UNIQUE = 5


def check_secret_key(value: str) -> str:
    """A production SECRET_KEY, or ConfigError saying what is wrong and how to make one: it signs
    sessions and password resets, so a guessable one gives away every account."""
    how = 'make one with: python -c "import secrets; print(secrets.token_urlsafe(50))"'
    if not value.strip():
        raise ConfigError(f"SECRET_KEY is empty; {how}")
    if value.startswith(("dev-only", "django-insecure-")):
        raise ConfigError(f"SECRET_KEY is the development default; {how}")
    if len(value) < SECRET_KEY_MIN_LENGTH or len(set(value)) < SECRET_KEY_MIN_UNIQUE:
        raise ConfigError(
            f"SECRET_KEY is too weak ({len(value)} characters, {len(set(value))} different; at least "
            f"{SECRET_KEY_MIN_LENGTH} and {SECRET_KEY_MIN_UNIQUE}); {how}"
        )
    # long and varied, yet one short string over and over ("change-me" six times): as guessable
    for period in range(1, len(value) // 2 + 1):
        if value == (value[:period] * (len(value) // period + 1))[: len(value)]:
            raise ConfigError(f"SECRET_KEY is too weak ({value[:period]!r} repeated); {how}")
    return value


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ConfigError(f"{name}={raw!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not an integer") from None


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_choice(name: str, default: str, choices: tuple[str, ...] | list[str]) -> str:
    value = os.environ.get(name, default)
    if value not in choices:
        raise ConfigError(f"{name}={value!r} is not one of {', '.join(choices)}")
    return value


def env_model(name: str, default: str = "") -> str:
    """A model setting: a Hugging Face model name, or a local folder, which must be there (a typo
    in a path must not surface as a failed job hours later). Empty is allowed."""
    value = os.environ.get(name, default).strip()
    if value.startswith(("/", "./", "../", "~")) and not Path(value).expanduser().is_dir():
        raise ConfigError(
            f"{name}={value!r}: no model folder at {value}; give a local model folder, a Hugging Face "
            "model name, or nothing"
        )
    return value


def env_rule_set(name: str, default: str) -> str:
    """A rule set setting: a bundled version ("1") or a rule set JSON file, loaded here so that a
    bad one stops the start instead of every page that routes."""
    from nsmcore.mapper import RuleSetError, load_rule_set

    value = os.environ.get(name, default)
    try:
        load_rule_set(value)
    except RuleSetError as error:
        raise ConfigError(f"{name}={value!r}: {error}") from None
    return value


# Reads through a memory map instead of a read() per page: the export reads its whole corpus by
# index lookups, and this alone makes those reads a third faster. Per connection.
SQLITE_INIT = "PRAGMA mmap_size=1073741824"
# Write-ahead logging: readers go on while one process writes, and a commit appends to the log
# instead of rewriting pages through a rollback journal (bench_load on SQLite, 10 annotators
# through five gunicorn workers, paired runs: 1.2x and 2.4x the requests a second, submit p95
# 364 against 587 ms and 119 against 242 ms). The mode is kept in the file, and switching writes its
# header, so it is switched only in a database that has content: a command run against an empty
# file must leave it empty (it is told to migrate), and a new file is switched by the next process
# after `migrate`. One machine only, as SQLite is here anyway (no network filesystems).
SQLITE_WAL = "PRAGMA journal_mode=WAL"


def _sqlite_init(path: Path) -> str:
    has_content = path.is_file() and path.stat().st_size > 0
    return f"{SQLITE_INIT}; {SQLITE_WAL}" if has_content else SQLITE_INIT


def parse_database_url(url: str, *, base_dir: Path) -> dict[str, Any]:
    """Django DATABASES entry for ``sqlite:///relative.db``, ``sqlite:////abs/path.db``,
    ``sqlite://:memory:`` or ``postgres://user:pass@host:port/name?options``."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "sqlite":
        if parts.netloc == ":memory:" or parts.path in ("", "/:memory:"):
            name: str | Path = ":memory:"
        else:
            raw = unquote(parts.path[1:])  # sqlite:///x.db -> x.db ; sqlite:////abs -> /abs
            if not raw:
                raise ConfigError(f"DATABASE_URL {url!r}: no SQLite file path")
            path = Path(raw)
            name = path if path.is_absolute() else base_dir / path
        init = SQLITE_INIT if name == ":memory:" else _sqlite_init(Path(name))
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": name,
            # A transaction takes the write lock when it begins, so a busy file makes it wait (up to
            # the timeout) instead of failing "database is locked" when a read inside it turns
            # into a write while another process writes (bench_load: 82 of 10 annotators' submits
            # through five gunicorn workers failed so in 5 s before).
            "OPTIONS": {"init_command": init, "transaction_mode": "IMMEDIATE", "timeout": 20},
        }
    if scheme in ("postgres", "postgresql", "pgsql"):
        database = unquote(parts.path.lstrip("/"))
        if not database:
            raise ConfigError(f"DATABASE_URL {url!r}: no database name after the host")
        try:
            port = parts.port
        except ValueError:
            raise ConfigError(f"DATABASE_URL {url!r}: the port is not a number") from None
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": database,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(port or ""),
            "OPTIONS": dict(parse_qsl(parts.query)),
            "CONN_MAX_AGE": 60,
        }
    raise ConfigError(
        f"DATABASE_URL {url!r}: unsupported scheme {scheme!r}; use sqlite:///path or postgres://..."
    )


def postgres_pool(database: dict[str, Any]) -> dict[str, Any]:
    """The database entry with a bounded psycopg pool per process when it is PostgreSQL
    (NSM_DB_POOL_MIN / NSM_DB_POOL_MAX / NSM_DB_POOL_TIMEOUT), unchanged otherwise: SQLite has no
    pool (one machine, one file). Used by the production and the development settings alike, since
    the development server, one thread per request with a persistent connection each, once held 94
    of PostgreSQL's 100 connections under load. Django's pool cannot be combined with persistent
    connections; the pool checks a connection before lending it."""
    low = env_int("NSM_DB_POOL_MIN", 1)
    high = env_int("NSM_DB_POOL_MAX", 4)
    if high < 1:
        raise ConfigError(f"NSM_DB_POOL_MAX={high} must be at least 1")
    if not 0 <= low <= high:
        raise ConfigError(f"NSM_DB_POOL_MIN={low} must be between 0 and NSM_DB_POOL_MAX={high}")
    timeout = env_int("NSM_DB_POOL_TIMEOUT", 10)
    if timeout < 1:
        raise ConfigError(f"NSM_DB_POOL_TIMEOUT={timeout} must be at least 1 (seconds)")
    if database["ENGINE"] != "django.db.backends.postgresql":
        return database
    return {
        **database,
        "CONN_MAX_AGE": 0,
        "CONN_HEALTH_CHECKS": True,
        # a request waiting longer than the timeout for a connection fails instead of queueing forever
        "OPTIONS": {**database["OPTIONS"], "pool": {"min_size": low, "max_size": high, "timeout": timeout}},
    }


def database_identity(database: dict[str, Any]) -> str:
    """A short name for one database (engine, host, port, name): what keeps two deployments that
    share a checkout from sharing cached values."""
    parts = [str(database.get(key, "")) for key in ("ENGINE", "HOST", "PORT", "NAME")]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:12]


def parse_cache_url(url: str, *, base_dir: Path) -> dict[str, Any]:
    """Django CACHES entry for ``file:///abs/folder`` or ``file://relative/folder`` (shared by
    the processes of one machine), ``redis://host:port/db`` (shared by machines; give it a
    database of its own, since clearing the cache empties it) or ``locmem://name`` (one process
    only: a worker would not see what the web server changed)."""
    scheme = urlsplit(url).scheme.lower()
    if scheme == "file":
        raw = unquote(url[len("file://") :]) if url.lower().startswith("file://") else ""
        if not raw:
            raise ConfigError(f"NSM_CACHE_URL {url!r}: no folder after file://")
        folder = Path(raw)
        return {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(folder if folder.is_absolute() else base_dir / folder),
        }
    if scheme in ("redis", "rediss"):
        return {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}
    if scheme == "locmem":  # locmem://name: caches of one name share their entries
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": urlsplit(url).netloc}
    raise ConfigError(
        f"NSM_CACHE_URL {url!r}: unsupported scheme {scheme!r}; use file://, redis:// or locmem://"
    )


def session_engine(cache: dict[str, Any]) -> str:
    """Sessions in the database with the shared cache in front (Django's cached_db): every
    request of a logged-in user reads its session, and from the cache that is no database round
    trip (benchmarks/bench_load.py). Not with a one-process cache (locmem://): a logout in one
    server process would stay unseen by the others, so sessions are then read from the database."""
    if cache["BACKEND"].endswith("LocMemCache"):
        return "django.contrib.sessions.backends.db"
    return "django.contrib.sessions.backends.cached_db"


def filesystem_broker(folder: Path) -> dict[str, object]:
    """Celery transport options for kombu's filesystem broker in ``folder`` (created here): a
    broker that needs no server, for `make run` and the tests."""
    for sub in ("queue", "control"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "control_folder": str(folder / "control"),
        "polling_interval": 0.25,
    }


def analysis_cache(url: str, *, base_dir: Path) -> dict[str, Any]:
    """The CACHES entry for round analyses (NSM_ANALYSIS_CACHE_URL, as NSM_CACHE_URL; default
    ``locmem://nsm-analysis``): a few large entries, so at most eight are kept."""
    return {**parse_cache_url(url, base_dir=base_dir), "OPTIONS": {"MAX_ENTRIES": 8}}
