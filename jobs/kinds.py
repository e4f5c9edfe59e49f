"""What a kind of job is, to the job plumbing: a name, a label, its typed parameters, how it runs
and how it describes itself, and the form that starts it. Each feature app registers its kinds
from its own module, imported by its ``AppConfig.ready`` (predictions: prefill; verification:
verify; training: train; exports: export and raw export; learning: ranking, retrain and
simulate), so the plumbing in jobs/ names none:
its pages, API and commands serve whatever kinds are registered.

A kind's parameters are a frozen dataclass of plain values (str, bool, int, float, or one of them
or None). A field declared with ``setting`` carries its bounds, label and help: the one declaration
that the parameters' own check, the kind's form (jobs.forms.setting_field), its API (which runs the
form) and its command read, so no two of them can disagree. They are stored as JSON in
``Job.params`` and read back only through ``Job.typed_params``, which checks them: a key the
dataclass has no field for, a missing key with no default, a value of the wrong type or out of its
bounds is a JobError naming the field.

To add a kind: in its feature app, a module with a ``Params`` subclass, a runner and one
``job_kind_register`` call, and ``job_kind_module(name, module)`` in the app's ``AppConfig.ready``;
a start form (``form``) puts it on the Jobs page. The module is imported when the kind is first
asked for (``registered_kind``, ``kinds``), not at start: a job worker at rest holds none of the
kinds' libraries (numpy, the parsers' and the exports' code; issue 24's memory goal).
"""

from __future__ import annotations

import dataclasses
import importlib
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy


class JobError(ValueError):
    """A job that cannot be started, changed or read; the message says why. The API answers it
    400 (config.errors.api_exception_handler reads ``api_status``)."""

    api_status = 400


@dataclass(frozen=True)
class Params:
    """The base of every kind's parameters. A subclass declares its fields (with defaults where a
    value may be left out) and checks them in ``validate``, raising JobError via ``self.bad``."""

    #: the kind these parameters belong to, for messages (set by job_kind_register)
    kind: typing.ClassVar[str] = "job"

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            expected = hints[field.name]
            if not _is_a(value, expected):
                self.bad(
                    field.name,
                    _("expected %(type)s, got %(value)s")
                    % {"type": _type_name(expected), "value": repr(value)},
                )
            low, high = field.metadata.get("min"), field.metadata.get("max")
            if isinstance(value, int | float) and not isinstance(value, bool):
                if low is not None and value < low:
                    self.bad(
                        field.name,
                        _("must be at least %(low)s, got %(value)s") % {"low": low, "value": value},
                    )
                if high is not None and value > high:
                    self.bad(
                        field.name,
                        _("must be at most %(high)s, got %(value)s") % {"high": high, "value": value},
                    )
        self.validate()

    def validate(self) -> None:
        """Checks between values, or of a value's range; raise with ``self.bad``."""

    def bad(self, field: str, problem: str) -> typing.NoReturn:
        raise JobError(
            _("%(kind)s job parameter %(field)s: %(problem)s")
            % {"kind": self.kind, "field": repr(field), "problem": problem}
        )

    @classmethod
    def from_json(cls, data: Any) -> Self:
        """Parameters as stored in ``Job.params``, checked."""
        if not isinstance(data, dict):
            raise JobError(
                _("%(kind)s job parameters: expected an object, got %(data)s")
                % {"kind": cls.kind, "data": repr(data)}
            )
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise JobError(
                _("%(kind)s job parameter %(field)s: unknown; the parameters are %(fields)s")
                % {"kind": cls.kind, "field": repr(unknown[0]), "fields": ", ".join(fields)}
            )
        for name, field in fields.items():
            no_default = field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
            if name not in data and no_default:
                raise JobError(
                    _("%(kind)s job parameter %(field)s: missing") % {"kind": cls.kind, "field": repr(name)}
                )
        return cls(**data)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


#: the largest whole number a parameter takes unless it says less (jobs.kinds.setting)
INT_MAX = 2**31 - 1


def setting(
    default: Any, *, min: float | None = None, max: float | None = None, help: str = "", label: str = ""
) -> Any:
    """A parameter's field with its bounds (inclusive), its help and its label, declared once: the
    parameters check the bounds, and the form, the API and the command are built from them. A
    whole number has an upper bound even where none is given (a 32-bit integer's): a 20-digit count
    means nothing, and the database could not even store it."""
    if max is None and isinstance(default, int) and not isinstance(default, bool):
        max = INT_MAX
    metadata = {"min": min, "max": max, "help": help, "label": label}
    return dataclasses.field(default=default, metadata=metadata)


def _is_a(value: Any, expected: Any) -> bool:
    if isinstance(expected, types.UnionType) or typing.get_origin(expected) is typing.Union:
        return any(_is_a(value, t) for t in typing.get_args(expected))
    if expected is type(None):
        return value is None
    if expected is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if typing.get_origin(expected) is typing.Literal:
        return value in typing.get_args(expected)
    return isinstance(value, expected)


def _type_name(expected: Any) -> str:
    if typing.get_origin(expected) is typing.Literal:
        return " or ".join(repr(v) for v in typing.get_args(expected))
    if isinstance(expected, types.UnionType) or typing.get_origin(expected) is typing.Union:
        return " or ".join(_type_name(t) for t in typing.get_args(expected))
    return "null" if expected is type(None) else expected.__name__


#: the queue of a kind that names none: Celery's default, which every worker consumes
DEFAULT_QUEUE = "celery"


def default_queue() -> str:
    return DEFAULT_QUEUE


@dataclass(frozen=True)
class JobKind:
    """One kind of job. ``run(job, params)`` does the work in the worker, writing progress into the
    job's row (and the model or parser it runs with into ``engine``), and returns False when it
    stopped because cancel was asked. ``describe(job, params)`` is the one line the job pages show
    for what the job does and with what (HTML-safe: build it with format_html)."""

    name: str
    label: str
    params: type[Params]
    run: Callable[[Any, Any], bool]
    describe: Callable[[Any, Any], str]
    #: what a job with neither an item set nor a round works on
    whole: str = gettext_lazy("everything")
    #: errors of this kind's engine (a model, a parser, a server that cannot work): they fail the
    #: job with their message alone, instead of as an unexpected error with a traceback
    expected: tuple[type[Exception], ...] = ()
    #: what a failed run keeps, said after its error ("5 items parsed ... are kept"); "" for nothing
    kept: Callable[[Any], str] | None = None
    #: the fragment of the job's status block that only this kind has (summary, download...)
    status_template: str = ""
    #: what ``total`` and ``done`` count, on the pages and the commands' progress line
    unit: str = gettext_lazy("items")
    #: more context for ``status_template`` (a chart...), computed from the job by the views
    status_context: Callable[[Any], dict[str, Any]] | None = None
    #: the Celery queue its jobs are sent to, asked when a job is sent (so a setting can name it:
    #: verification's is NSM_VERIFY_QUEUE); a worker takes the queues it is started with (-Q)
    queue: Callable[[], str] = default_queue
    #: the dotted path of the form that starts a job of this kind from the Jobs page (a form with
    #: ``start(user=...)``; named, not imported, so a kind's module and its form may import each
    #: other's app freely); empty: not started from the Jobs page
    form: str = ""
    #: the template that renders that form (given ``form``, ``kind`` and ``action``); empty: the
    #: plain one (jobs/_start_form.html)
    form_template: str = ""
    #: relations of a job to read with it in lists (``select_related``): the export it wrote...
    related: tuple[str, ...] = ()
    #: the URL path of what the job made (a file to download), or None while there is none
    result_path: Callable[[Any], str | None] | None = None
    #: the URL name and the link text of the page that lists what jobs of this kind make (the
    #: exports' history): a job's page links to it; empty: no such page
    results_page: tuple[str, str] = ("", "")
    #: why a job of this kind, given its params, would fail again at once if resumed now (a model
    #: or a setting it needs is gone), known without loading anything; None when it can go on.
    #: A job it names offers no Resume, and resuming it is refused with the reason.
    resume_problem: Callable[[Any, Any], str | None] | None = None


#: every registered kind, by name (read it through ``kinds`` or ``registered_kind``, which import
#: the declared modules first)
KINDS: dict[str, JobKind] = {}
#: the modules that register each declared kind, in the order the apps declared them
DECLARED: dict[str, tuple[str, ...]] = {}
#: the declared kinds whose modules are imported
_IMPORTED: set[str] = set()


def job_kind_module(name: str, *modules: str) -> None:
    """Declare that importing ``modules`` registers the kind ``name`` (an app's ready())."""
    DECLARED[name] = modules


def job_kind_register(kind: JobKind) -> JobKind:
    if kind.name in KINDS and KINDS[kind.name] is not kind:
        raise ValueError(f"job kind {kind.name!r} is registered twice")
    kind.params.kind = kind.name
    KINDS[kind.name] = kind
    return kind


def registered_kind(name: str) -> JobKind | None:
    """The kind ``name``, its declared modules imported first (all of them, even when another
    module imported the one that registers it); None if no app has it."""
    modules = DECLARED.get(name, ())
    if modules and name not in _IMPORTED:
        for module in modules:
            importlib.import_module(module)
        if name not in KINDS:
            raise LookupError(f"job kind {name!r} is declared, but {', '.join(modules)} registered none")
        _IMPORTED.add(name)
    return KINDS.get(name)


def kinds() -> dict[str, JobKind]:
    """Every kind, each declared one imported: in the order the apps declared them, then any
    registered without a declaration."""
    for name in DECLARED:
        registered_kind(name)
    order = [*DECLARED, *(name for name in KINDS if name not in DECLARED)]
    return {name: KINDS[name] for name in order if name in KINDS}


def job_kind(name: str) -> JobKind:
    kind = registered_kind(name)
    if kind is None:
        known = ", ".join(sorted(kinds())) or _("none")
        raise JobError(
            _("unknown job kind %(name)s; kinds: %(known)s") % {"name": repr(name), "known": known}
        )
    return kind


def kinds_related() -> list[str]:
    """Every kind's relations to read with a job in lists."""
    return sorted({name for kind in kinds().values() for name in kind.related})


def kinds_startable() -> list[JobKind]:
    """The kinds a form starts from the Jobs page, in the order they were declared."""
    return [kind for kind in kinds().values() if kind.form]
