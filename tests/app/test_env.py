from pathlib import Path

import pytest

from config.env import (
    ConfigError,
    database_identity,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_str,
    parse_cache_url,
    parse_database_url,
)

BASE = Path("/srv/app")


@pytest.mark.parametrize("raw, expected", [("1", True), ("Yes", True), ("off", False), ("", False)])
def test_env_bool_reads_common_spellings(monkeypatch, raw, expected):
    monkeypatch.setenv("FLAG", raw)
    assert env_bool("FLAG", not expected) is expected


def test_env_bool_refuses_anything_else(monkeypatch):
    monkeypatch.setenv("DEBUG", "ture")
    with pytest.raises(ConfigError, match="DEBUG='ture' is not a boolean"):
        env_bool("DEBUG", False)


def test_env_int_and_list_and_str(monkeypatch):
    monkeypatch.setenv("N", "12")
    monkeypatch.setenv("HOSTS", "a.org, b.org,,")
    assert env_int("N", 0) == 12
    assert env_int("UNSET_N", 3) == 3
    assert env_list("HOSTS", []) == ["a.org", "b.org"]
    monkeypatch.setenv("N", "twelve")
    with pytest.raises(ConfigError, match="N='twelve' is not an integer"):
        env_int("N", 0)
    with pytest.raises(ConfigError, match="UNSET_SECRET must be set"):
        env_str("UNSET_SECRET")


def test_env_float(monkeypatch):
    monkeypatch.setenv("SHARE", "0.66")
    assert env_float("SHARE", 0.5) == 0.66
    assert env_float("UNSET_SHARE", 0.5) == 0.5
    monkeypatch.setenv("SHARE", "two thirds")
    with pytest.raises(ConfigError, match="SHARE='two thirds' is not a number"):
        env_float("SHARE", 0.5)


def test_sqlite_urls_relative_absolute_and_memory():
    assert parse_database_url("sqlite:///var/x.db", base_dir=BASE)["NAME"] == BASE / "var/x.db"
    assert parse_database_url("sqlite:////tmp/x.db", base_dir=BASE)["NAME"] == Path("/tmp/x.db")
    assert parse_database_url("sqlite://:memory:", base_dir=BASE)["NAME"] == ":memory:"


def test_sqlite_connections_read_through_a_memory_map(tmp_path, django_db_blocker):
    """A connection opened by Django's SQLite backend from a DATABASE_URL (whatever database the
    suite itself runs on)."""
    from django.db.backends.sqlite3.base import DatabaseWrapper

    settings = parse_database_url(f"sqlite:///{tmp_path / 'x.db'}", base_dir=BASE)
    wrapper = DatabaseWrapper({**settings, "TIME_ZONE": None, "CONN_MAX_AGE": 0, "CONN_HEALTH_CHECKS": False,
                               "AUTOCOMMIT": True, "ATOMIC_REQUESTS": False, "TEST": {}, "USER": "",
                               "PASSWORD": "", "HOST": "", "PORT": ""})  # fmt: skip
    try:
        with django_db_blocker.unblock(), wrapper.cursor() as cursor:
            cursor.execute("PRAGMA mmap_size")
            assert cursor.fetchone()[0] == 1 << 30
    finally:
        wrapper.close()


def test_postgres_url_with_credentials_port_and_options():
    db = parse_database_url("postgres://u%40x:p%2Fw@db.local:6543/nsm?sslmode=require", base_dir=BASE)
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["USER"], db["PASSWORD"], db["HOST"], db["PORT"], db["NAME"]) == (
        "u@x",
        "p/w",
        "db.local",
        "6543",
        "nsm",
    )
    assert db["OPTIONS"] == {"sslmode": "require"}


@pytest.mark.parametrize(
    "url, message",
    [
        ("mysql://h/db", "unsupported scheme 'mysql'"),
        ("postgres://h:port/db", "port is not a number"),
        ("postgres://h:5432/", "no database name"),
    ],
)
def test_bad_database_urls_say_what_is_wrong(url, message):
    with pytest.raises(ConfigError, match=message):
        parse_database_url(url, base_dir=BASE)


def test_cache_urls_name_a_shared_folder_redis_or_one_process():
    assert parse_cache_url("file:///tmp/nsm-cache", base_dir=BASE) == {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": "/tmp/nsm-cache",
    }
    assert parse_cache_url("file://var/cache", base_dir=BASE)["LOCATION"] == str(BASE / "var/cache")
    assert parse_cache_url("redis://127.0.0.1:6379/2", base_dir=BASE) == {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:6379/2",
    }
    assert parse_cache_url("locmem://", base_dir=BASE)["BACKEND"].endswith("LocMemCache")
    with pytest.raises(ConfigError, match="unsupported scheme 'memcached'"):
        parse_cache_url("memcached://h:11211", base_dir=BASE)
    for url in ("file://", "file:/tmp/cache"):
        with pytest.raises(ConfigError, match="no folder after file://"):
            parse_cache_url(url, base_dir=BASE)


def test_each_database_gets_its_own_default_cache_folder():
    one = parse_database_url("sqlite:///var/db.sqlite3", base_dir=BASE)
    other = parse_database_url("postgres://u@h:5432/nsm", base_dir=BASE)
    assert database_identity(one) == database_identity(dict(one))
    assert database_identity(one) != database_identity(other)


def test_the_app_shares_a_cache_across_processes_and_migrate_empties_it(db):
    from django.conf import settings
    from django.core.cache import cache
    from django.core.management import call_command

    assert settings.CACHES["default"]["BACKEND"] != "django.core.cache.backends.locmem.LocMemCache"
    cache.set("nsm:round-version:1", "stale", timeout=None)
    call_command("migrate", verbosity=0)
    assert cache.get("nsm:round-version:1") is None
