"""Building the parser a job asked for, from its parameters and the settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from nsmcore.parsers import BACKENDS, Parser, ParserUnavailable, make_parser
from registry.models import RegisteredParser
from registry.selectors import (
    UnknownParser,
    best_parser,
    is_spec,
    looks_like_spec,
    parser_for_folder,
    parser_get,
    registered_line,
)
from rules.rulesets import active_rule_set


class ModelFolderError(ValueError):
    """A job's model folder outside NSM_MODEL_DIR; the message names the setting."""


def inside_model_dir(value: str) -> Path:
    """A job's model folder: relative to NSM_MODEL_DIR, and inside it. The worker writes models
    there and loads pickled ones from there only, so a job's parameter can neither make it write
    elsewhere nor unpickle a file someone placed elsewhere. JobError names the setting."""
    root = Path(settings.NSM_MODEL_DIR).expanduser().resolve()
    path = Path(value).expanduser()
    resolved = (path if path.is_absolute() else root / path).resolve()
    if resolved != root and root not in resolved.parents:
        raise ModelFolderError(
            _(
                "%(value)s: model folders live inside NSM_MODEL_DIR (%(root)s); give a folder name there "
                "(or a registered parser's name)"
            )
            % {"value": value, "root": root}
        )
    return resolved


def default_prefill() -> tuple[str, str]:
    """(backend, model) of a prefill that names no parser. One order everywhere: a classifier
    the settings name (NSM_PARSER_BACKEND=classifier with NSM_PARSER_MODEL), else the best
    registered parser (registry.selectors.best_parser), else the settings' backend."""
    if settings.NSM_PARSER_BACKEND == "classifier" and settings.NSM_PARSER_MODEL:
        return "classifier", settings.NSM_PARSER_MODEL
    best = best_parser()
    if best is not None:
        return best.backend, best.spec
    return settings.NSM_PARSER_BACKEND, ""


def resolved_model(backend: str, model: str) -> str:
    """The model a prefill job stores for a classifier given none (the setting, else the best
    registered parser): resolved when the job is made, so a queued or resumed job runs the
    parser that was checked, whatever is registered meanwhile."""
    if backend == "classifier" and not model:
        return settings.NSM_PARSER_MODEL or _best_spec()
    return model


def parser_options(backend: str, model: str = "", adapter: str = "") -> dict[str, Any]:
    """The backend's keyword arguments: the job's model (if any) over the settings. The adapter
    setting goes with the model setting: a job naming another model gets its own adapter or none."""
    if backend == "lexical":
        return {"cues": model or settings.NSM_LEXICAL_CUES}
    if backend == "transformers":
        found = _registered(model, "transformers")
        if found is not None:  # a registered LoRA adapter, by name: its folder names its base
            return {
                "model": found.folder, "adapter": "", "label": found.spec,
                "device": settings.NSM_PARSER_DEVICE, "batch_size": settings.NSM_PARSER_BATCH_SIZE,
            }  # fmt: skip
        return {
            "model": model or settings.NSM_PARSER_MODEL,
            "adapter": adapter or ("" if model else settings.NSM_PARSER_ADAPTER),
            "device": settings.NSM_PARSER_DEVICE,
            "batch_size": settings.NSM_PARSER_BATCH_SIZE,
        }
    if backend == "classifier":
        spec = resolved_model(backend, model)
        if spec and is_spec(spec):  # a registered parser, by name: its folder, named by its spec
            found = parser_get(spec)
            return {"model": found.folder, "label": found.spec}
        # a folder the job names is read inside NSM_MODEL_DIR only (the setting's is trusted)
        if model:
            try:
                spec = str(inside_model_dir(model))
            except ModelFolderError as error:
                raise ParserUnavailable(str(error)) from None
        # a registered parser's folder given as a path is still that parser (one name per model)
        found = parser_for_folder(spec) if spec else None
        return {"model": spec, "label": found.spec} if found else {"model": spec}
    if backend == "openai":
        return {
            "base_url": settings.NSM_OPENAI_BASE_URL,
            "model": model or settings.NSM_OPENAI_MODEL,
            "api_key": settings.NSM_OPENAI_API_KEY,
            "mode": settings.NSM_OPENAI_MODE,
            "timeout": settings.NSM_OPENAI_TIMEOUT,
            "concurrency": settings.NSM_OPENAI_CONCURRENCY,
            "retries": settings.NSM_OPENAI_RETRIES,
        }
    return {}


def _lookup(model: str) -> Any:
    """The registered parser a job's model names (NAME or NAME@VERSION); the refusal's text for
    an unknown version of a registered name; None when it names none (a path, or a hub name
    such as ``gpt2``: only a registered name counts)."""
    if not model or not is_spec(model):
        return None
    try:
        return parser_get(model)
    except UnknownParser as error:
        return str(error)


def model_backend(model: str) -> str:
    """The backend that runs ``model`` when none is chosen: the registered parser's own, else the
    settings' (NSM_PARSER_BACKEND)."""
    found = _lookup(model)
    return found.backend if isinstance(found, RegisteredParser) else settings.NSM_PARSER_BACKEND


def _registered(model: str, backend: str) -> Any:
    """The registered parser of that backend a job's model names, or None."""
    found = _lookup(model)
    return found if isinstance(found, RegisteredParser) and found.backend == backend else None


def _registry_problem(backend: str, model: str) -> str | None:
    """Why a model naming a registered parser cannot run on ``backend``: an unknown version of a
    registered name, or a parser of another backend."""
    found = _lookup(model)
    if isinstance(found, str):
        return found
    if found is not None and found.backend != backend:
        return _("%(spec)s is a %(backend)s parser: choose the backend %(backend)s for it") % {
            "spec": found.spec,
            "backend": found.backend,
        }
    return None


def _best_spec() -> str:
    best = best_parser()
    return best.spec if best is not None else ""


def looks_like_path(value: str) -> bool:
    """Whether a model given as a name is a folder on this server: absolute, relative to the home
    or the working folder, more than a hub's ``org/name``, or there on disk."""
    value = value.strip()
    if value.startswith(("/", "~", ".", "\\")) or "\\" in value or value.count("/") > 1:
        return True
    return Path(value).exists()


def model_name_problem(backend: str, model: str) -> str | None:
    """Why a model given over the web or the API is no name the backend can take, or None. Trained
    models are chosen by their registered name; a folder on the server is the settings' (or the
    command line's) business, never typed into a page, so no path becomes a parser's name."""
    model = model.strip()
    if not model or is_spec(model):  # a registered name: its backend is checked when the job is made
        return None
    if backend == "lexical":
        return _("the lexical baseline takes no model (its cue list is the setting NSM_LEXICAL_CUES)")
    if backend == "classifier":
        return _("no registered parser %(model)s (a classifier is chosen by its name); %(registered)s") % {
            "model": repr(model),
            "registered": registered_line(),
        }
    if looks_like_path(model):
        return _(
            "%(model)s: a model is chosen by name, not by a folder on the server: choose a trained "
            "parser (a train job registers it), give a hub or server model name, or set the folder in "
            "NSM_PARSER_MODEL"
        ) % {"model": model}
    return None


def parser_setting_problem(backend: str, model: str = "") -> str | None:
    """Why the backend has nothing to run with, naming the setting (no model, no server), known
    without loading anything; None otherwise. A prefill is refused with it before a job exists,
    instead of failing on the worker (and again on every resume)."""
    problem = _registry_problem(backend, model)
    if problem:
        return problem
    if backend == "classifier" and model and not is_spec(model):  # a folder given by the job
        try:
            inside_model_dir(model)
        except ModelFolderError as error:
            return str(error)
    if backend == "classifier":
        spec = resolved_model(backend, model)
        if not spec:
            return _("no model given: choose a registered parser (Parsers page) or set NSM_PARSER_MODEL")
        if (Path(spec).expanduser() / "card.json").is_file():
            return None
        if looks_like_spec(spec):
            try:
                parser_get(spec)
            except UnknownParser as error:
                return str(error)
            return None
        return _("no classifier model folder at %(spec)s (no card.json); %(registered)s") % {
            "spec": spec,
            "registered": registered_line(),
        }
    options = parser_options(backend, model)
    if backend == "transformers" and not options["model"]:
        return _("no model given: give one with the job, or set NSM_PARSER_MODEL (a model name or a folder)")
    if backend == "openai":
        if not options["base_url"]:
            return _("no server given: set NSM_OPENAI_BASE_URL (e.g. http://127.0.0.1:8001/v1)")
        if not options["model"]:
            return _("no model given: give one with the job, or set NSM_OPENAI_MODEL (one the server serves)")
    return None


#: the backends that decode inside a rule set (nsmcore.decoding): they decode into the active one
JOINT_BACKENDS = ("classifier", "transformers")


def parser_build(*, backend: str, model: str = "", mode: str = "", adapter: str = "") -> Parser:
    """Raises ParserUnavailable, with the reason, when the backend cannot work."""
    options = parser_options(backend, model, adapter)
    if backend == "openai" and mode:
        options["mode"] = mode
    if backend in JOINT_BACKENDS:
        options["rule_set"] = active_rule_set()
    return make_parser(backend, **options)


def backend_choices() -> list[tuple[str, str]]:
    labels = {
        "lexical": _("lexical baseline (cue lists, no model)"),
        "transformers": _("local causal LM (transformers, constrained)"),
        "openai": _("OpenAI-compatible server"),
        "classifier": _("classifier parser (scikit-learn, trained here: a registered parser by name)"),
    }
    return [(b, labels[b]) for b in BACKENDS]
