"""The Hugging Face options of ``manage.py export_corpus`` (exports.hf, exports.hub): declared,
checked before the export runs (bad input exits 2 naming it, before anything is written), and
carried out once the archive is made."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from exports.hf import FORMATS, HfError, folder_check, format_check, hf_folder_write, license_check
from exports.hub import TOKEN_VARIABLE, HubError, hub_push, hub_token, repo_check
from exports.models import Export


def hf_arguments(parser) -> None:
    parser.add_argument(
        "--hf-folder", type=Path, metavar="PATH",
        help="also write a Hugging Face datasets folder here (a new or empty folder): gold, contrast and raw "
        "configs with a dataset card; datasets.load_dataset(PATH) reads it",
    )  # fmt: skip
    parser.add_argument(
        "--format", default=None, metavar="FORMAT",
        help=f"the folder's splits: {' or '.join(FORMATS)} (default jsonl; parquet needs pyarrow)",
    )  # fmt: skip
    parser.add_argument(
        "--license", default="", help="the card's licence, a Hub identifier (default: the export's, or other)"
    )
    parser.add_argument(
        "--push-to-hub", metavar="OWNER/NAME",
        help=f"upload the datasets folder to this Hub dataset repository (token from {TOKEN_VARIABLE})",
    )  # fmt: skip
    parser.add_argument(
        "--private", action="store_true", help="with --push-to-hub: create the repository private"
    )


@dataclass(frozen=True)
class HfPlan:
    folder: Path | None
    format: str
    license: str
    repo: str | None
    token: str
    private: bool


def hf_plan(options: dict) -> HfPlan | None:
    """What the options ask for, checked; None when they ask for no datasets folder."""
    folder, repo, format = options.get("hf_folder"), options.get("push_to_hub"), options.get("format")
    try:
        if folder is None and repo is None:
            for name in ("format", "license", "private"):
                if options.get(name):
                    raise HfError(f"--{name} goes with --hf-folder or --push-to-hub")
            return None
        if options.get("background"):
            raise HfError("--hf-folder and --push-to-hub run here: leave out --background")
        format_check(format or "jsonl")
        if folder is not None:
            folder_check(folder)
        if options.get("license"):
            license_check(options["license"])
        token = ""
        if repo is not None:
            repo_check(repo)
            token = hub_token()
    except (HfError, HubError) as error:
        raise CommandError(str(error), returncode=2) from None
    return HfPlan(
        folder, format or "jsonl", options.get("license", ""), repo, token, options.get("private", False)
    )


def hf_carry_out(command: BaseCommand, export: Export, plan: HfPlan | None) -> None:
    """Write the folder (and push it) for the export just made."""
    if plan is None:
        return
    with tempfile.TemporaryDirectory(prefix=".hf-push-") as temp:
        folder = plan.folder or Path(temp) / "folder"
        configs = hf_folder_write(export.path, folder, format=plan.format, license=plan.license)
        splits = ", ".join(
            f"{name}/{split} {f['rows']}" for name, s in configs.items() for split, f in s.items()
        )
        if plan.folder is not None:
            command.stdout.write(f"Hugging Face datasets folder in {folder} ({splits})")
        if plan.repo is not None:
            url = hub_push(
                folder=folder, repo_id=plan.repo, token=plan.token, private=plan.private,
                message=f"EmoExpl {export.scope}: {export.filename}",
            )  # fmt: skip
            command.stdout.write(f"pushed to {url} ({splits})")
