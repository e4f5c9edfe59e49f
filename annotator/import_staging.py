"""An uploaded file waits between the preview and the confirmation.

The upload is written in ``NSM_IMPORT_STAGING_DIR`` (default ``var/import-staging/``) as
``<token>.upload`` beside a ``<token>.json`` that records its sha256, format, source, size and
the admin who uploaded it.
The token is random (a guessed one finds nothing) and is only ever used as a file name after it
matched a strict pattern, so it cannot point outside the folder. Confirming checks the owner,
the age (an hour at most) and that the file still has the checksum the preview page carried, then
deletes both files. Every new upload first sweeps away what has expired.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from django.conf import settings
from django.utils.translation import gettext as _

STAGING_TTL_SECONDS = 3600
MAX_UPLOAD = 50 * 1024 * 1024
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{32}$")


class StagingError(ValueError):
    pass


@dataclass(frozen=True)
class Staged:
    token: str
    sha256: str
    fmt: str
    source: str
    name: str
    size: int
    owner_id: int
    digest: str  # which rows the preview said would be created (imports.ImportPreview.digest)


def staging_dir() -> Path:
    return Path(settings.NSM_IMPORT_STAGING_DIR)


def _paths(token: str) -> tuple[Path, Path]:
    return staging_dir() / f"{token}.upload", staging_dir() / f"{token}.json"


def staging_sweep(*, now: float | None = None) -> int:
    """Delete staged uploads older than the time limit; how many files went."""
    folder = staging_dir()
    if not folder.is_dir():
        return 0
    limit = (now or time.time()) - STAGING_TTL_SECONDS
    gone = 0
    for path in folder.iterdir():
        if path.suffix in (".upload", ".json", ".part") and path.stat().st_mtime < limit:
            path.unlink(missing_ok=True)
            gone += 1
    return gone


def upload_stage(*, data: bytes, fmt: str, source: str, name: str, owner_id: int, digest: str) -> Staged:
    if len(data) > MAX_UPLOAD:
        raise StagingError(_("the file is larger than %(mb)s MB") % {"mb": MAX_UPLOAD // 1024 // 1024})
    staging_sweep()
    staging_dir().mkdir(parents=True, exist_ok=True)
    staged = Staged(
        token=secrets.token_urlsafe(24),
        sha256=hashlib.sha256(data).hexdigest(),
        fmt=fmt,
        source=source,
        name=name,
        size=len(data),
        owner_id=owner_id,
        digest=digest,
    )
    upload, meta = _paths(staged.token)
    partial = upload.with_suffix(".part")
    partial.write_bytes(data)
    partial.replace(upload)  # atomic: a confirmation never reads half a file
    meta.write_text(json.dumps(asdict(staged)))
    return staged


def _no_such_upload() -> str:
    return _("no such upload (already imported, discarded or never made); upload the file again")


def upload_load(*, token: str, sha256: str, owner_id: int) -> tuple[Staged, bytes]:
    """The staged upload for a confirmation, or StagingError saying why not."""
    if not TOKEN_RE.match(token or ""):
        raise StagingError(_("the upload token is missing or malformed; upload the file again"))
    upload, meta = _paths(token)
    try:
        staged = Staged(**json.loads(meta.read_text()))
        age = time.time() - min(upload.stat().st_mtime, meta.stat().st_mtime)
        data = upload.read_bytes()
    except (OSError, ValueError, TypeError):
        raise StagingError(_no_such_upload()) from None
    if staged.owner_id != owner_id:
        raise StagingError(_no_such_upload())
    if age > STAGING_TTL_SECONDS:
        upload_discard(token=token)
        raise StagingError(
            _("the upload expired (kept %(minutes)s minutes); upload the file again")
            % {"minutes": STAGING_TTL_SECONDS // 60}
        )
    if sha256 != staged.sha256:
        raise StagingError(_("the checksum does not match the previewed upload; upload the file again"))
    if hashlib.sha256(data).hexdigest() != staged.sha256:
        raise StagingError(_("the staged file changed since the preview; upload the file again"))
    return staged, data


def upload_discard(*, token: str) -> None:
    if TOKEN_RE.match(token or ""):
        for path in _paths(token):
            path.unlink(missing_ok=True)
