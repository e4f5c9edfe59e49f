"""Upload a datasets folder (exports.hf) to the Hugging Face Hub as a dataset repository, with
``huggingface_hub`` and a token from the environment (``HF_TOKEN``), never from the database or the
settings. ``manage.py export_corpus --push-to-hub OWNER/NAME``; the tests mock ``HfApi``."""

from __future__ import annotations

import os
import re
from pathlib import Path

from django.utils.translation import gettext as _

TOKEN_VARIABLE = "HF_TOKEN"
#: owner/name, as the Hub spells a repository
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")


class HubError(ValueError):
    """Bad input for an upload (no token, a malformed repository id): the message names it."""


def hub_token() -> str:
    token = os.environ.get(TOKEN_VARIABLE, "").strip()
    if not token:
        raise HubError(
            _("set %(variable)s to a Hugging Face token with write access to push to the Hub")
            % {"variable": TOKEN_VARIABLE}
        )
    return token


def repo_check(repo_id: str) -> None:
    if not REPO_ID.match(repo_id) or ".." in repo_id or "--" in repo_id:
        raise HubError(
            _("%(repo)s is not a Hub repository id; give it as owner/name") % {"repo": repr(repo_id)}
        )


def hub_push(*, folder: Path, repo_id: str, token: str, private: bool = False, message: str = "") -> str:
    """Create the dataset repository if it does not exist, upload the folder as one commit and
    return the repository's address."""
    from huggingface_hub import HfApi  # the worker's dependency; imported only when pushing

    api = HfApi(token=token)
    api.create_repo(repo_id=repo_id, repo_type="dataset", private=private, exist_ok=True)
    api.upload_folder(
        folder_path=str(folder),
        repo_id=repo_id,
        repo_type="dataset",
        commit_message=message or "Upload the EmoExpl datasets folder",
    )
    return f"https://huggingface.co/datasets/{repo_id}"
