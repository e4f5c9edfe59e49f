"""Memory of the quick start (issue 24): every process `make run` leaves running, after an admin
has opened the main pages, against Label Studio's 388 MiB (its one process, measured by the
review on this machine). Goal: at most half of it, 194 MiB.

    python -m benchmarks.bench_memory [--write]

What runs is what `make run` runs, on a fresh SQLite database in a temporary folder with the demo
data: `manage.py runapp --noreload` (a bare supervisor process, the development web server and
the job worker, which loads no model until a job needs one). Figures: the resident set (RSS) of
each process and their sum (the goal's figure: it counts a page that two processes share, such as
a library's code, once in each), the sum of their proportional sets (PSS: each shared page split
among the processes that map it, so the sum is what the processes take together), and the sum of
their unique sets (USS: what stopping them would free).
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import figure  # noqa: E402

LABEL_STUDIO_MIB = 388
PAGES = ["/", "/work/", "/adjudicate/", "/rules/", "/jobs/", "/parsers/", "/guidelines/", "/api/rounds/"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def measure() -> dict:
    import psutil

    folder = Path(tempfile.mkdtemp(prefix="nsm-memory-"))
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "NSM_", "DATABASE_", "REDIS_"))
    }
    env |= {
        "NSM_VAR_DIR": str(folder),
        "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
        "NSM_BROKER_DIR": str(folder / "broker"),
        "NSM_CACHE_URL": f"file://{folder / 'cache'}",
    }
    run = [sys.executable, "manage.py"]
    subprocess.run([*run, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([*run, "seed_demo"], cwd=ROOT, env=env, check=True, capture_output=True)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = (folder / "run.log").open("w")
    app = subprocess.Popen(
        [*run, "runapp", f"127.0.0.1:{port}", "--noreload"], cwd=ROOT, env=env, stdout=log, stderr=log
    )
    try:
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        deadline = time.monotonic() + 90
        while True:
            try:
                page = opener.open(f"{base}/accounts/login/", timeout=5).read().decode()
                break
            except OSError:
                if time.monotonic() > deadline or app.poll() is not None:
                    raise RuntimeError((folder / "run.log").read_text()[-3000:]) from None
                time.sleep(0.5)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        form = f"csrfmiddlewaretoken={token}&username=admin&password=admin-demo".encode()
        opener.open(urllib.request.Request(f"{base}/accounts/login/", data=form, headers={"Referer": base}))
        for path in PAGES:
            opener.open(base + path).read()
        while "ready." not in (folder / "run.log").read_text():  # the worker too, all loaded
            time.sleep(0.5)
        time.sleep(2)
        processes = [psutil.Process(app.pid), *psutil.Process(app.pid).children(recursive=True)]
        rows = []
        for process in processes:
            info = process.memory_full_info()
            rows.append(
                {
                    "command": " ".join(process.cmdline())[:80],
                    **{k: round(getattr(info, k) / 2**20, 1) for k in ("rss", "pss", "uss")},
                }
            )
        return {"processes": rows, "load_average": os.getloadavg()}
    finally:
        app.terminate()
        app.wait(timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write", action="store_true", help="write benchmarks/results/memory.json")
    args = parser.parse_args()
    result = measure()
    processes = result["processes"]
    for p in processes:
        print(f"  {p['rss']:7.1f} MiB RSS {p['pss']:7.1f} MiB PSS {p['uss']:7.1f} MiB USS  {p['command']}")
    rss, pss, uss = (round(sum(p[k] for p in processes), 1) for k in ("rss", "pss", "uss"))
    goal = LABEL_STUDIO_MIB / 2
    figures = [
        figure(
            "make run, all processes, RSS after the main pages",
            rss,
            "MiB",
            f"<= {goal:g} (half of Label Studio's {LABEL_STUDIO_MIB})",
            rss <= goal,
            processes=processes,
            load_average=result["load_average"],
        ),
        figure("make run, all processes, PSS", pss, "MiB", load_average=result["load_average"]),
        figure("make run, all processes, USS", uss, "MiB", load_average=result["load_average"]),
    ]
    for f in figures:
        print(f"  {f['name']:60} {f['value']:>8} {f['unit']}")
    if args.write:
        from benchmarks.common import write

        print(f"  -> {write('memory', figures).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
