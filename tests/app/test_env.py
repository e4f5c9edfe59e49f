import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.core.management import call_command
from django.db.backends.sqlite3.base import DatabaseWrapper

from config.cli import PROJECT_APPS
from config.env import (
    ConfigError,
    check_secret_key,
    database_identity,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_rule_set,
    env_str,
    parse_cache_url,
    parse_database_url,
    postgres_pool,
)
from tests.app.test_layers import LAYERS

BASE = Path("/srv/app")


@pytest.mark.parametrize("raw, expected", [("1", True), ("Yes", True), ("off", False), ("", False)])
def test_env_bool_reads_common_spellings(monkeypatch, raw, expected):
    monkeypatch.setenv("FLAG", raw)
    assert env_bool("FLAG", not expected) is expected


def test_env_bool_refuses_anything_else(monkeypatch):
    monkeypatch.setenv("DEBUG", "ture")
    with pytest.raises(ConfigError, match="DEBUG='ture' is not a boolean"):
        env_bool("DEBUG", False)


def test_a_rule_set_setting_too_complex_to_read_is_a_configuration_error(monkeypatch, tmp_path):
    """Found by a security probe: NSM_RULE_SET naming a file nested 50,000 deep stopped every
    command with a 47-line traceback instead of one line naming the setting."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 50_000 + "]" * 50_000)
    monkeypatch.setenv("NSM_RULE_SET", str(deep))
    with pytest.raises(ConfigError, match=r"NSM_RULE_SET=.*deep\.json: JSON nested too deeply to read"):
        env_rule_set("NSM_RULE_SET", "1")


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


def test_sqlite_connections_read_through_a_memory_map_and_write_in_turn(tmp_path, django_db_blocker):
    """A connection opened by Django's SQLite backend from a DATABASE_URL (whatever database the
    suite itself runs on)."""
    database = parse_database_url(f"sqlite:///{tmp_path / 'x.db'}", base_dir=BASE)
    wrapper = DatabaseWrapper({**database, "TIME_ZONE": None, "CONN_MAX_AGE": 0, "CONN_HEALTH_CHECKS": False,
                               "AUTOCOMMIT": True, "ATOMIC_REQUESTS": False, "TEST": {}, "USER": "",
                               "PASSWORD": "", "HOST": "", "PORT": ""})  # fmt: skip
    try:
        with django_db_blocker.unblock(), wrapper.cursor() as cursor:
            cursor.execute("PRAGMA mmap_size")
            assert cursor.fetchone()[0] == 1 << 30
        # a transaction takes the write lock when it begins: of two writers, one waits, none fails
        assert wrapper.transaction_mode == "IMMEDIATE"
    finally:
        wrapper.close()


def test_a_sqlite_database_with_content_is_switched_to_write_ahead_logging(tmp_path, django_db_blocker):
    """WAL lets readers go on while another process writes; an empty file is left as it is (a
    command run against it before migrate must not write to it), a migrated one is switched."""
    path = tmp_path / "x.db"
    assert (
        "journal_mode"
        not in parse_database_url(f"sqlite:///{path}", base_dir=BASE)["OPTIONS"]["init_command"]
    )
    path.touch()
    assert (
        "journal_mode"
        not in parse_database_url(f"sqlite:///{path}", base_dir=BASE)["OPTIONS"]["init_command"]
    )
    with sqlite3.connect(path) as conn:  # as migrate leaves it: tables, in the default journal mode
        conn.execute("CREATE TABLE t (x)")
    database = parse_database_url(f"sqlite:///{path}", base_dir=BASE)
    wrapper = DatabaseWrapper({**database, "TIME_ZONE": None, "CONN_MAX_AGE": 0, "CONN_HEALTH_CHECKS": False,
                               "AUTOCOMMIT": True, "ATOMIC_REQUESTS": False, "TEST": {}, "USER": "",
                               "PASSWORD": "", "HOST": "", "PORT": ""})  # fmt: skip
    try:
        with django_db_blocker.unblock(), wrapper.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode")
            assert cursor.fetchone()[0] == "wal"
    finally:
        wrapper.close()
    with sqlite3.connect(path) as conn:  # kept in the file, for every later connection
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


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


def test_postgres_gets_a_bounded_pool_instead_of_persistent_connections(monkeypatch):
    monkeypatch.setenv("NSM_DB_POOL_MIN", "2")
    monkeypatch.setenv("NSM_DB_POOL_MAX", "3")
    monkeypatch.delenv("NSM_DB_POOL_TIMEOUT", raising=False)
    url = parse_database_url("postgres://u@h:5432/nsm?sslmode=require", base_dir=BASE)
    db = postgres_pool(url)
    assert db["OPTIONS"] == {"sslmode": "require", "pool": {"min_size": 2, "max_size": 3, "timeout": 10}}
    assert (db["CONN_MAX_AGE"], db["CONN_HEALTH_CHECKS"]) == (0, True)  # Django refuses a pool with both
    assert url["OPTIONS"] == {"sslmode": "require"}  # the parsed entry is left as it was


def test_sqlite_has_no_pool_but_a_bad_pool_setting_is_refused_all_the_same(monkeypatch):
    sqlite = parse_database_url("sqlite:///var/x.db", base_dir=BASE)
    assert postgres_pool(sqlite) == sqlite
    for variable, value, message in [
        ("NSM_DB_POOL_MAX", "0", "NSM_DB_POOL_MAX=0 must be at least 1"),
        ("NSM_DB_POOL_MIN", "5", "NSM_DB_POOL_MIN=5 must be between 0 and NSM_DB_POOL_MAX=4"),
        ("NSM_DB_POOL_TIMEOUT", "0", "NSM_DB_POOL_TIMEOUT=0 must be at least 1"),
    ]:
        with monkeypatch.context() as env:
            env.setenv(variable, value)
            with pytest.raises(ConfigError, match=message):
                postgres_pool(sqlite)


@pytest.mark.parametrize("settings_module", ["config.settings.dev", "config.settings.prod"])
def test_development_and_production_settings_pool_postgresql_alike(settings_module):
    """As `make run` and `manage.py serve` load them: a PostgreSQL DATABASE_URL gets the bounded
    pool in both (the development server once held 94 of PostgreSQL's 100 connections)."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("NSM_", "DJANGO_", "DATABASE_"))}
    env = {
        **keep,
        "DJANGO_SETTINGS_MODULE": settings_module,
        "DATABASE_URL": "postgres://u@db.invalid:5432/nsm",
        "NSM_DB_POOL_MAX": "3",
        "SECRET_KEY": "a-real-secret-for-this-test-only-4f9c2e7b1a8d3f6e0c5b",
        "ALLOWED_HOSTS": "nsm.example.org",
    }
    show = (
        "from django.conf import settings; d = settings.DATABASES['default']; "
        "print(d['OPTIONS']['pool'], d['CONN_MAX_AGE'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {show}"],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "{'min_size': 1, 'max_size': 3, 'timeout': 10} 0"


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
    assert settings.CACHES["default"]["BACKEND"] != "django.core.cache.backends.locmem.LocMemCache"
    cache.set("nsm:round-version:1", "stale", timeout=None)
    call_command("migrate", verbosity=0)
    assert cache.get("nsm:round-version:1") is None


ROOT = Path(__file__).resolve().parents[2]


def manage(tmp_path, *argv: str, **env: str):
    """``python manage.py ARGV`` as a person runs it, with only the environment given here (and
    a database of its own, so nothing under var/ is touched)."""
    return python(tmp_path, "manage.py", *argv, **env)


def python(tmp_path, *argv: str, timeout: float = 120, **env: str):
    """``python ARGV`` in the project's folder with manage()'s environment."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("NSM_", "DJANGO_", "DATABASE_"))}
    keep.pop("DEBUG", None)
    full = {**keep, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", **env}
    return subprocess.run(
        [sys.executable, *argv], env=full, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
        check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    "variable, value, says",
    [
        ("NSM_RULE_SET", "7", "no bundled rule set version '7'"),
        ("DEBUG", "maybe", "is not a boolean"),
        ("NSM_VERIFIER_MODEL", "/models/no-such-nli", "no model folder at /models/no-such-nli"),
        ("NSM_PARSER_MODEL", "./models/no-such-lm", "no model folder at ./models/no-such-lm"),
        ("NSM_JOB_BATCH_SIZE", "lots", "is not an integer"),
        ("NSM_PARSER_BACKEND", "gpt", "one of lexical, transformers, openai"),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_variable_not_a_traceback(tmp_path, variable, value, says):
    result = manage(tmp_path, "check", **{variable: value})
    assert result.returncode != 0
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"configuration error: {variable}=") and says in lines[0]
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_good_settings_pass_the_check(tmp_path):
    result = manage(tmp_path, "check", NSM_RULE_SET="1", DEBUG="no", NSM_VERIFIER_MODEL="")
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def commands(apps) -> list[str]:
    found = (ROOT / app / "management" / "commands" for app in apps)
    return sorted(path.stem for folder in found for path in folder.glob("[!_]*.py"))


PROJECT_COMMANDS = commands(LAYERS)


def test_every_app_with_commands_but_server_checks_its_database_first():
    assert set(PROJECT_APPS) == {app for app in LAYERS if commands([app])} - {"server"}


def test_the_project_commands_are_the_ones_the_readme_lists():
    readme = (ROOT / "README.md").read_text()
    listed = readme[readme.index("Management commands:") :].split("\n\n")[0]
    assert PROJECT_COMMANDS and all(f"`{name}`" in listed for name in PROJECT_COMMANDS), listed


# Each command as manage.py runs it (config.cli.main, which checks the database before the
# command), all in one fresh interpreter: a process per command took 23 Django start-ups, two
# minutes of CI on two cores. What each wrote and returned is kept, and each command's test reads it.
UNMIGRATED_RUNS = """
import contextlib, io, json, sys
from pathlib import Path
from config.cli import main
empty = Path(sys.argv[1])
found = {}
for command in sys.argv[2:]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["manage.py", command])
    found[command] = {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue(),
                      "size": empty.stat().st_size}
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def unmigrated_runs(tmp_path_factory) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("unmigrated")
    empty = folder / "empty.sqlite3"
    empty.touch()
    names = commands(PROJECT_APPS)
    run = python(
        folder, "-c", UNMIGRATED_RUNS, str(empty), *names, timeout=300, DATABASE_URL=f"sqlite:///{empty}"
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("command", commands(PROJECT_APPS))
def test_a_command_on_an_unmigrated_database_says_to_migrate(unmigrated_runs, command):
    result = unmigrated_runs[command]
    assert result["code"] == 1, result["stderr"]
    assert result["stderr"] == "error: the database is not migrated: run `python manage.py migrate`\n"
    assert result["stdout"] == "" and result["size"] == 0  # nothing was created in it


def test_migrate_itself_still_runs_on_an_empty_database(tmp_path):
    empty = tmp_path / "empty.sqlite3"
    result = manage(tmp_path, "migrate", "--noinput", DATABASE_URL=f"sqlite:///{empty}")
    assert result.returncode == 0, result.stderr
    assert manage(tmp_path, "agreement", "--help", DATABASE_URL=f"sqlite:///{empty}").returncode == 0


@pytest.mark.parametrize(
    "key, message",
    [
        ("", "SECRET_KEY is empty"),
        ("   ", "SECRET_KEY is empty"),
        ("change-me", "too weak (9 characters"),
        ("abc", "too weak (3 characters, 3 different"),
        ("a" * 60, "60 characters, 1 different"),
        ("dev-only-insecure-key-change-me" + "x" * 30, "the development default"),
        ("django-insecure-" + "k3" * 30, "the development default"),
        # long and varied enough, but one short string over and over (found by a security probe)
        ("abcde" * 10, "'abcde' repeated"),
        ("1234567890" * 5, "'1234567890' repeated"),
        ("change-me" * 6, "'change-me' repeated"),
    ],
)
def test_a_weak_or_empty_secret_key_is_refused_in_production(key, message):
    with pytest.raises(ConfigError, match=re.escape(message)) as refused:
        check_secret_key(key)
    assert "secrets.token_urlsafe(50)" in str(refused.value)
    strong = "x7-Kq2vR9mZ4pL8wN3tY6bH1cF5jD0gS-aE2uI9oP4kM7nB3vC8xZ1"
    assert check_secret_key(strong) == strong


def test_production_settings_do_not_start_with_a_weak_secret_key():
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("NSM_", "DJANGO_", "DATABASE_"))}
    env = {**keep, "DJANGO_SETTINGS_MODULE": "config.settings.prod", "SECRET_KEY": "change-me",
           "ALLOWED_HOSTS": "nsm.example.org"}  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode != 0 and "SECRET_KEY is too weak" in result.stderr


def test_the_suite_runs_torch_on_one_thread_and_so_do_the_processes_it_starts():
    """config.settings.test sets it for the run (its processes outnumber the cores, and torch's own
    threads would spin waiting for a core): a command or worker a test starts inherits it."""
    result = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
        env=os.environ.copy(), capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert result.stdout.split() == ["1"]
