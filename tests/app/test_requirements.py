"""The requirements files are the lock: every package installed in the environment the suite runs
in is pinned there, at the version installed (a package pulled in unpinned by another would install
a different version on the next machine)."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from django.conf import settings

TOOLS = {"pip", "setuptools", "wheel", "nsm-audit"}  # the installer, and the project itself


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict[str, str]:
    found: dict[str, str] = {}
    for name in ("requirements.txt", "requirements-dev.txt"):
        for line in (Path(settings.BASE_DIR) / name).read_text().splitlines():
            line = line.split("#")[0].strip()
            if not line or line.startswith("-"):
                continue
            package, _, version = line.partition("==")
            assert version, f"{name}: {line!r} is not pinned with =="
            found[_norm(re.sub(r"\[.*\]", "", package))] = version.strip()
    return found


def test_every_installed_package_is_pinned_at_its_installed_version():
    pinned = pins()
    # a local version label names the build (torch's "+cpu" on this machine's index), not the release
    installed = {_norm(d.metadata["Name"]): d.version.split("+")[0] for d in metadata.distributions()}
    unpinned = sorted(set(installed) - set(pinned) - TOOLS)
    assert not unpinned, f"installed but not pinned in requirements*.txt: {unpinned}"
    differ = {n: (installed[n], v) for n, v in pinned.items() if n in installed and installed[n] != v}
    assert not differ, f"installed version differs from the pin: {differ}"
