"""The shared data beside the checkout (crowd-enVent and silver-156: read there, never copied into
the project). A test that reads it skips where it is absent on a developer's machine, and fails in
CI (``CI`` set), where .ci/run finds it beside the checkout or beside the one it was cloned from
and says where in ``NSM_SHARED_DATA``: a missing folder there is a broken run, not a pass."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import settings


def shared_data(*parts: str) -> Path:
    """A file or folder of the shared data (``NSM_SHARED_DATA``, default ../shared/data)."""
    root = Path(os.environ.get("NSM_SHARED_DATA") or Path(settings.BASE_DIR).parent / "shared" / "data")
    path = root.joinpath(*parts)
    if not path.exists():
        message = f"{path} is absent: set NSM_SHARED_DATA to the shared data folder"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(reason=message)
    return path
