"""From a file to annotatable work (issue 17): 5,400 crowd-enVent rows, two annotators, side by
side through the browser's pages and through the one API request, on SQLite and PostgreSQL.

(a) pages: the upload form (preview), its confirmation, the item-set form (a draw of every row of
    the source), the new-round form; each POST and the page its redirect leads to, as a browser
    follows it. Four steps, each a form a person fills in between (not timed).
(b) API: one `POST /api/imports/` with the file, the item set's and the round's names and the two
    annotators, authenticated by a token, sent by the Python client (nsmclient).

The same harness for both: the production settings (DEBUG off, whitenoise, the psycopg pool)
under gunicorn (`config.wsgi`, two workers), a new HTTP connection per request, each repetition
under a source of its own so that every run creates all 5,400 items. The three crowd-enVent
splits are read from /work/shared (never copied into the repository) and sent as one TSV.

Target: (b) under 0.8 s (a comparable tool's single import request takes 1.6 s on this machine).

With NSM_BENCH_BASELINE naming another checkout (`git archive main | tar -x -C /tmp/base`), its
pages are timed too, on a server of their own, alternating with the others: the same steps as
they were before this change.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode

from benchmarks.common import figure
from nsmclient import Client

ROOT = Path(__file__).resolve().parent.parent
CROWD = ROOT.parent / "shared" / "data" / "crowd-enVent"
RUN = f"{os.getpid()}_{uuid.uuid4().hex[:6]}"
BENCH_DIR = ROOT / "var" / "bench" / f"api_import_{RUN}"
PG_ADMIN = os.environ.get("NSM_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
PG_NAME = f"nsm_bench_api_{RUN}"
HOST = "127.0.0.1"
TARGET_S = 0.8
PASSWORD = "bench-admin-pw-" + secrets.token_hex(4)

# Run inside Django against the fresh database: an admin with a token, two annotators.
SETUP = f"""
import json, django
django.setup()
from django.contrib.auth.models import Group, User
try:
    from annotator.tokens import token_create
except ImportError:  # a baseline checkout from before tokens
    token_create = None
admin = User.objects.create_user("bench-admin", password={PASSWORD!r})
admin.groups.add(Group.objects.get_or_create(name="admin")[0])
annotators = []
for name in ("bench-a1", "bench-a2"):
    user = User.objects.create_user(name, password="x-" + name)
    user.groups.add(Group.objects.get_or_create(name="annotator")[0])
    annotators.append(user.pk)
token = token_create(user=admin).key if token_create else None
print(json.dumps({{"token": token, "annotators": annotators}}))
"""


def crowd_tsv() -> bytes:
    """The three splits as one TSV: the header once, then every row."""
    parts = [(CROWD / f"crowd-enVent-{split}.tsv").read_bytes() for split in ("train", "val", "test")]
    header, first = parts[0].split(b"\n", 1)
    rows = [first.rstrip(b"\n")]
    for part in parts[1:]:
        other_header, body = part.split(b"\n", 1)
        if other_header != header:
            raise RuntimeError("the crowd-enVent splits have different headers")
        rows.append(body.rstrip(b"\n"))
    return header + b"\n" + b"\n".join(rows) + b"\n"


# --- the server --------------------------------------------------------------------------------

# one key for every process of the run, as strong as production settings require (config.env)
SECRET = secrets.token_urlsafe(50)


def _env(database_url: str, tree: Path = ROOT) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.prod",
        "DATABASE_URL": database_url,
        "SECRET_KEY": SECRET,
        "ALLOWED_HOSTS": HOST,
        "SECURE_SSL_REDIRECT": "0",  # plain HTTP on loopback, no TLS proxy in front
        "SECURE_COOKIES": "0",
        "NSM_STATIC_ROOT": str(BENCH_DIR / f"static-{tree.name}"),
        "NSM_IMPORT_STAGING_DIR": str(BENCH_DIR / "staging"),
        "NSM_CACHE_URL": f"file://{BENCH_DIR / f'cache-{tree.name}'}",
        "NSM_LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(tree),
    }


def _run(args: list[str], database_url: str, tree: Path = ROOT) -> str:
    result = subprocess.run(
        [sys.executable, *args],
        cwd=tree,
        env=_env(database_url, tree),
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:2])} failed:\n{result.stderr[-3000:]}")
    return result.stdout


def _fresh_database(kind: str, suffix: str = "") -> str | None:
    if kind == "sqlite":
        return f"sqlite:///{BENCH_DIR / f'api_import{suffix}.sqlite3'}"
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{PG_NAME}{suffix}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{PG_NAME}{suffix}"')
    except Exception as error:  # no server: report it and go on with SQLite alone
        print(f"  PostgreSQL not available ({error}); skipping it")
        return None
    return f"{PG_ADMIN.rsplit('/', 1)[0]}/{PG_NAME}{suffix}"


def _drop_postgres() -> None:
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as conn:
            for suffix in ("", "_base"):
                conn.execute(f'DROP DATABASE IF EXISTS "{PG_NAME}{suffix}" WITH (FORCE)')
    except Exception as error:  # no server: nothing was created
        print(f"  PostgreSQL database {PG_NAME} not dropped ({error})")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _start_server(database_url: str, tree: Path = ROOT) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "--bind",
            f"{HOST}:{port}",
            "--workers",
            "2",
            "--timeout",
            "120",
        ],
        cwd=tree,
        env=_env(database_url, tree),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {server.returncode}")
        try:
            status, _, _ = _request(port, "GET", "/accounts/login/")
            if status == 200:
                return server, port
        except OSError:
            time.sleep(0.1)
    server.terminate()
    raise RuntimeError("gunicorn did not answer within 60 s")


# --- the client: a new connection per request ---------------------------------------------------


class Answer:
    def __init__(self, status: int, body: bytes, headers: dict[str, str]):
        self.status, self.body, self.headers = status, body, headers

    def text(self) -> str:
        return self.body.decode()


def _request(
    port: int, method: str, path: str, *, body: bytes = b"", headers: dict[str, str] | None = None
) -> tuple[int, bytes, dict[str, str]]:
    conn = http.client.HTTPConnection(HOST, port, timeout=120)
    try:
        conn.request(method, path, body=body or None, headers={"Host": HOST, **(headers or {})})
        response = conn.getresponse()
        data = response.read()
        found = {k.lower(): v for k, v in response.getheaders() if k.lower() != "set-cookie"}
        cookies = [v for k, v in response.getheaders() if k.lower() == "set-cookie"]
        if cookies:
            found["set-cookie"] = "\n".join(cookies)
        return response.status, data, found
    finally:
        conn.close()


def _multipart(fields: dict[str, str | list[str]], file_name: str, data: bytes) -> tuple[bytes, str]:
    boundary = "nsm-bench-" + uuid.uuid4().hex
    out = bytearray()
    for name, value in fields.items():
        for v in value if isinstance(value, list) else [value]:
            out += f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{v}\r\n'.encode()
    out += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{file_name}"\r\n'
        "Content-Type: text/tab-separated-values\r\n\r\n"
    ).encode()
    out += data + f"\r\n--{boundary}--\r\n".encode()
    return bytes(out), f"multipart/form-data; boundary={boundary}"


class Browser:
    """Cookies and CSRF token as a browser keeps them; follows a redirect as a browser does."""

    def __init__(self, port: int):
        self.port = port
        self.cookies: dict[str, str] = {}

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        return {"Cookie": cookie, **(extra or {})}

    def _keep(self, headers: dict[str, str]) -> None:
        for line in headers.get("set-cookie", "").split("\n"):
            found = re.match(r"\s*([^=;]+)=([^;]*)", line)
            if found:
                self.cookies[found.group(1)] = found.group(2)

    def get(self, path: str) -> Answer:
        status, body, headers = _request(self.port, "GET", path, headers=self._headers())
        self._keep(headers)
        return Answer(status, body, headers)

    def post(self, path: str, body: bytes, content_type: str) -> Answer:
        extra = {"Content-Type": content_type, "Referer": f"http://{HOST}:{self.port}{path}"}
        status, data, headers = _request(self.port, "POST", path, body=body, headers=self._headers(extra))
        self._keep(headers)
        if status in (301, 302, 303):
            return self.get(headers["location"])
        return Answer(status, data, headers)

    def form(self, path: str, fields: dict[str, str | list[str]]) -> Answer:
        return self.post(path, urlencode(fields, doseq=True).encode(), "application/x-www-form-urlencoded")

    def csrf(self, path: str) -> str:
        page = self.get(path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text())
        if page.status != 200 or not token:
            raise RuntimeError(f"{path} answered {page.status} without a form")
        return token.group(1)


def _login(port: int) -> Browser:
    browser = Browser(port)
    token = browser.csrf("/accounts/login/")
    page = browser.form(
        "/accounts/login/", {"username": "bench-admin", "password": PASSWORD, "csrfmiddlewaretoken": token}
    )
    if "sessionid" not in browser.cookies or page.status != 200:
        raise RuntimeError(f"login failed ({page.status})")
    return browser


def _expect(answer: Answer, status: int, step: str) -> Answer:
    if answer.status != status:
        raise RuntimeError(f"{step}: expected {status}, got {answer.status}: {answer.text()[:800]}")
    return answer


# --- the two paths -------------------------------------------------------------------------------


def pages_path(browser: Browser, data: bytes, tag: str, annotators: list[int]) -> tuple[float, str]:
    """Upload, confirm, draw, new round, through the pages. Seconds spent in requests (not the
    untimed page loads that give each form its CSRF token) and the round's name."""
    token = browser.csrf("/manage/import/")
    spent = 0.0
    body, content_type = _multipart(
        {"source": tag, "format": "tsv", "csrfmiddlewaretoken": token}, "crowd.tsv", data
    )
    start = time.perf_counter()
    preview = _expect(browser.post("/manage/import/", body, content_type), 200, "upload")
    staged = {
        name: re.search(rf'name="{name}" value="([^"]+)"', preview.text()).group(1)
        for name in ("token", "sha256")
    }
    _expect(browser.form("/manage/import/confirm/", {**staged, "csrfmiddlewaretoken": token}), 200, "confirm")
    spent += time.perf_counter() - start
    token = browser.csrf("/manage/item-sets/")
    start = time.perf_counter()
    drawn = browser.form(
        "/manage/item-sets/",
        {
            "name": tag,
            "tier": "other",
            "seed": "1",
            "size": str(data.count(b"\n") - 1),
            "source": tag,
            "csrfmiddlewaretoken": token,
        },
    )
    spent += time.perf_counter() - start
    _expect(drawn, 200, "draw")
    item_set = re.search(rf'data-item-set="{re.escape(tag)}".*?\?item_set=(\d+)', drawn.text(), re.S).group(1)
    token = browser.csrf(f"/manage/rounds/new/?item_set={item_set}")
    fields = {
        "name": tag, "item_set": item_set, "annotators_per_item": "2",
        "annotators": [str(a) for a in annotators], "mode": "blind", "text_field": "masked_text",
        "prefill_parser": "", "csrfmiddlewaretoken": token,
    }  # fmt: skip
    start = time.perf_counter()
    _expect(browser.form("/manage/rounds/new/", fields), 200, "new round")
    spent += time.perf_counter() - start
    return spent, tag


def api_path(port: int, key: str, data: bytes, tag: str, annotators: list[int]) -> tuple[float, int]:
    """The one request, sent by the Python client (nsmclient, docs/api.md) on a connection of its
    own, as before; seconds and the round's id. No retries: a 503 is a failure, not hidden time.
    httpx encodes the multipart body inside the timed call (the old harness did it before the
    clock started): about 1 ms for 2 MB on the benchmark machine."""
    with Client(f"http://{HOST}:{port}", token=key, timeout=120, retries=0) as api:
        start = time.perf_counter()
        answer = api.import_items(
            file=("crowd.tsv", data), source=tag, item_set=tag, round=tag, annotators=annotators
        )
        spent = time.perf_counter() - start
    if answer["round"] is None:
        raise RuntimeError(f"POST /api/imports/ made no round: {answer}")
    return spent, answer["round"]["id"]


def _annotatable(port: int, key: str, name: str) -> int:
    """Assignments of the round named ``name``, read back through the API (untimed check)."""
    with Client(f"http://{HOST}:{port}", token=key, timeout=120) as api:
        for row in api.paginate(api.rounds_list):
            if row["name"] == name:
                return row["progress"]["assigned"]
    return -1


def _serve(kind: str, tree: Path, suffix: str = "") -> tuple[subprocess.Popen, int, dict] | None:
    """A fresh database for ``tree``'s code, migrated, with the personas; its server started."""
    url = _fresh_database(kind, suffix)
    if url is None:
        return None
    _run(["manage.py", "migrate", "--noinput", "-v0"], url, tree)
    _run(["manage.py", "collectstatic", "--noinput", "-v0"], url, tree)
    setup = json.loads(_run(["-c", SETUP], url, tree))
    server, port = _start_server(url, tree)
    return server, port, setup


def _measure(kind: str, repeat: int, data: bytes, rows: int, baseline: Path | None) -> list[dict]:
    served = _serve(kind, ROOT)
    if served is None:
        return []
    servers = [served[0]]
    _, port, setup = served
    pages, api, before = [], [], []
    try:
        browser = _login(port)
        base = None
        if baseline is not None:
            base_server, base_port, base_setup = _serve(kind, baseline, "_base")
            servers.append(base_server)
            base = (_login(base_port), base_setup)
            pages_path(
                base[0], data[: data.index(b"\n", 2000) + 1], f"warm-base-{kind}", base_setup["annotators"]
            )
        # warm-up: each gunicorn worker imports and connects once before anything is timed
        for i in range(2):
            small = data[: data.index(b"\n", 2000) + 1]
            api_path(port, setup["token"], small, f"warm-{kind}-{i}", setup["annotators"])
        for i in range(repeat):  # alternating, so all see the same machine
            if base is not None:
                spent, _ = pages_path(base[0], data, f"base-{kind}-{i}", base[1]["annotators"])
                before.append(spent)
            spent, name = pages_path(browser, data, f"pages-{kind}-{i}", setup["annotators"])
            assert _annotatable(port, setup["token"], name) == 2 * rows, name
            pages.append(spent)
            spent, _ = api_path(port, setup["token"], data, f"api-{kind}-{i}", setup["annotators"])
            assert _annotatable(port, setup["token"], f"api-{kind}-{i}") == 2 * rows
            api.append(spent)
    finally:
        for running in servers:
            running.terminate()
            running.wait(timeout=30)
    page_s, api_s = statistics.median(pages), statistics.median(api)
    load = round(os.getloadavg()[0], 1)  # the machine is shared: how busy it was
    label = f"{rows:,} rows, 2 annotators, {kind}, median of {repeat}"
    figures = []
    if before:
        before_s = statistics.median(before)
        figures.append(
            figure(
                f"pages before this change ({baseline.name}): the same four steps ({label})",
                round(before_s, 3),
                "s",
                runs=[round(t, 3) for t in before],
                load_average=load,
            )
        )
    figures += [
        figure(
            f"pages: upload, confirm, draw, new round ({label})",
            round(page_s, 3),
            "s",
            runs=[round(t, 3) for t in pages],
            load_average=load,
        ),
        figure(
            f"API: one POST /api/imports/ ({label})",
            round(api_s, 3),
            "s",
            f"< {TARGET_S} s",
            api_s < TARGET_S,
            runs=[round(t, 3) for t in api],
            load_average=load,
        ),
        figure(f"pages / API ({kind})", round(page_s / api_s, 2), "x"),
    ]
    if before:
        figures.append(figure(f"pages before / API ({kind})", round(before_s / api_s, 2), "x"))
    return figures


def run(quick: bool = False, repeat: int | None = None) -> list[dict]:
    if not CROWD.is_dir():
        raise RuntimeError(f"the crowd-enVent copy is expected at {CROWD}")
    data = crowd_tsv()
    rows = data.count(b"\n") - 1
    repeat = repeat or (1 if quick else 3)
    figures: list[dict] = []
    baseline = Path(os.environ["NSM_BENCH_BASELINE"]) if os.environ.get("NSM_BENCH_BASELINE") else None
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    try:
        for kind in ("sqlite", "postgres"):
            figures += _measure(kind, repeat, data, rows, baseline)
    finally:
        shutil.rmtree(BENCH_DIR, ignore_errors=True)
        _drop_postgres()
    return figures


if __name__ == "__main__":  # python -m benchmarks.bench_api_import [repeat]
    sys.path.insert(0, str(ROOT))
    for f in run(repeat=int(sys.argv[1]) if len(sys.argv) > 1 else None):
        print(f)
