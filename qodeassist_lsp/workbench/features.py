"""The feature table: every feature of the process, built once, its operations served by path.

A feature is a package declaring a `core.operations.FeatureSpec`; this table lists the built-in
ones one line each (`BUILT_IN`) and finds plugins through the entry-point group
``qodeassist_lsp.features`` (an entry point names a ``FeatureSpec``: ``echo = pkg:SPEC``). A
plugin that fails to import, is not a ``FeatureSpec``, repeats a name, or whose ``build``
raises is logged and left out; the server keeps serving.

`FeatureTable` builds each feature once with the engine's `FeatureServices`, starts them (each
``start`` in a task of its own), offers their chat tools, tells them of file changes and
reloads, gathers their status parts and closes them. `FeatureTable.operation` finds an
operation by ``<feature>/<op>``; `BoundOperation.call` validates the params with its request
model and returns the result as JSON, so the three doors (``lsp/operation_handlers.py``,
``acp_agent/operations.py``, ``http_api/operation_routes.py``) only translate their protocol.

Light on purpose: importing it imports no pydantic and no feature; the language server reads
the table before it answers ``initialize`` (it registers one method per operation).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qodeassist_lsp.core.operations import (
    Feature,
    FeatureServices,
    FeatureSpec,
    FileChange,
    FileChangeKind,
    Operation,
    ProgressReporter,
    ProgressTask,
)
from qodeassist_lsp.wire.errors import ErrorKind, InvalidParams, QodeAssistError

if TYPE_CHECKING:
    from pydantic import ValidationError

    from qodeassist_lsp.config.confinement import Confinement
    from qodeassist_lsp.config.pipelines import PipelineSpec
    from qodeassist_lsp.config.settings_types import SettingsSection
    from qodeassist_lsp.context.documents import DocumentEvent, DocumentStore
    from qodeassist_lsp.core.runtime_view import RuntimeView
    from qodeassist_lsp.core.tools import ToolRegistry

__all__ = [
    "BUILT_IN",
    "ENTRY_POINT_GROUP",
    "BoundOperation",
    "FeatureTable",
    "LoggedProgress",
    "OperationNotFound",
    "feature_specs",
    "problems",
    "services",
    "settings_sections",
]

log = logging.getLogger("qodeassist.features")

ENTRY_POINT_GROUP = "qodeassist_lsp.features"
"""The entry-point group a plugin's ``FeatureSpec`` is registered in."""

BUILT_IN: tuple[str, ...] = (
    "qodeassist_lsp.features.codebase:SPEC",  # the project index (docs/codebase.md)
)
"""The built-in features, one line each: ``"<module>:<attribute>"`` naming the package's
``FeatureSpec`` (the form of an entry point; imported when the table is read)."""


_DEFAULT_SPECS: list[tuple[FeatureSpec, ...]] = []


class OperationNotFound(QodeAssistError, LookupError):
    """No feature or operation of that name (every door answers "not found" naming the known)."""

    error_kind = ErrorKind.NOT_FOUND


def _load(name: str, value: str) -> FeatureSpec | None:
    """Import the ``FeatureSpec`` at ``value`` (``module:attribute``); None, logged, if it fails."""
    from importlib import import_module

    module, _, attribute = value.partition(":")
    try:
        spec = import_module(module.strip())
        for part in attribute.strip().split(".") if attribute.strip() else ():
            spec = getattr(spec, part)
    except Exception:  # a broken feature must not stop the server
        log.exception("feature %s (%s) failed to import; left out", name, value)
        return None
    if not isinstance(spec, FeatureSpec):
        log.error("feature %s (%s) is a %s, not a FeatureSpec; left out", name, value,
                  type(spec).__name__)  # fmt: skip
        return None
    return spec


def feature_specs(
    built_in: Iterable[str] = BUILT_IN, group: str = ENTRY_POINT_GROUP
) -> tuple[FeatureSpec, ...]:
    """Return the built-in features, then the plugins of ``group``; a repeated name is left out."""
    from importlib.metadata import entry_points

    default = built_in is BUILT_IN and group == ENTRY_POINT_GROUP
    if default and _DEFAULT_SPECS:  # read once: the settings and the table both ask
        return _DEFAULT_SPECS[0]
    rows = [(value, value) for value in built_in]
    rows += [(entry.name, entry.value) for entry in entry_points(group=group)]
    specs: dict[str, FeatureSpec] = {}
    for name, value in rows:
        spec = _load(name, value)
        if spec is None:
            continue
        if spec.name in specs:
            log.error("feature %s (%s) is declared twice; left out", spec.name, value)
            continue
        specs[spec.name] = spec
    found = tuple(specs.values())
    if default:
        _DEFAULT_SPECS[:] = [found]
    return found


def settings_sections(
    built_in: Sequence[SettingsSection[Any]], specs: Iterable[FeatureSpec] | None = None
) -> tuple[SettingsSection[Any], ...]:
    """Return ``built_in`` and the ``[section]`` each feature of ``specs`` declares in its row.

    ``specs`` default to the table's (`feature_specs`: a plugin's ``FeatureSpec(settings=...)``).
    A section whose name is taken (a core or another feature's section), or whose model is not a
    ``config.settings_types.Section`` (strict, unknown keys refused), is logged and left out.
    """
    from qodeassist_lsp.config.settings import Settings
    from qodeassist_lsp.config.settings_types import Section

    sections = {section.name: section for section in built_in}
    for spec in feature_specs() if specs is None else specs:
        own = spec.settings
        if own is None or sections.get(own.name) == own:
            continue
        if own.name in sections or own.name in Settings.model_fields:
            log.error("feature %s: settings section [%s] is taken; left out", spec.name, own.name)
        elif not (isinstance(own.model, type) and issubclass(own.model, Section)):
            log.error("feature %s: settings model %r does not derive from "
                      "qodeassist_lsp.config.settings_types.Section; [%s] left out",
                      spec.name, own.model, own.name)  # fmt: skip
        else:
            sections[own.name] = own
    return tuple(sections.values())


def problems(exc: ValidationError) -> str:
    """Return each field of params that failed validation and why (``a.b: msg; c: msg``)."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'params'}: {e['msg']}" for e in exc.errors()
    )


@dataclass(frozen=True, slots=True)
class BoundOperation:
    """One operation of one built feature, called by its path ``<feature>/<op>``."""

    feature: str
    operation: Operation[Any, Any]

    @property
    def path(self) -> str:
        """``<feature>/<op>``: what follows ``qodeassist/`` at every door."""
        return f"{self.feature}/{self.operation.name}"

    async def call(self, params: Any) -> dict[str, Any]:
        """Validate ``params`` with the request model, run, return the result as JSON.

        Params that do not fit are `InvalidParams` naming each field; what the operation raises
        goes on to the door's error table.
        """
        from pydantic import BaseModel, ValidationError

        op = self.operation
        try:
            request = op.request.model_validate({} if params is None else params)
        except ValidationError as exc:
            raise InvalidParams(
                f"qodeassist/{self.path}: {op.request.__name__}: {problems(exc)}"
            ) from None
        result = await op.run(request)
        if not isinstance(result, BaseModel):
            raise TypeError(f"qodeassist/{self.path} returned a {type(result).__name__}")
        answer: dict[str, Any] = result.model_dump(mode="json", by_alias=True)
        return answer


class LoggedProgress:
    """The progress port of a door without progress notifications: begin and end are logged."""

    async def begin(self, title: str, message: str = "") -> ProgressTask:
        """Log the start of ``title``."""
        log.info("%s: %s", title, message or "started")
        return _LoggedTask(title)


class _LoggedTask:
    def __init__(self, title: str) -> None:
        self._title = title

    def report(self, message: str, percentage: int | None = None) -> None:
        log.debug("%s: %s", self._title, message)

    def end(self, message: str = "") -> None:
        log.info("%s: %s", self._title, message or "done")


_DOCUMENT_KINDS: dict[str, FileChangeKind] = {
    "opened": "opened",
    "changed": "changed",
    "closed": "closed",
}


@contextlib.contextmanager
def _isolated(feature: str, hook: str) -> Iterator[None]:
    try:
        yield
    except Exception:  # one broken feature must not stop the others or the door
        log.exception("feature %s: %s failed; the others go on", feature, hook)


def services(
    view: RuntimeView,
    folders: Callable[[], Sequence[Path]],
    *,
    ignored_by: Callable[[Path], str | None],
    confinement: Callable[[], Confinement],
    progress: ProgressReporter | None = None,
) -> FeatureServices:
    """Return what a door's features get: ``progress`` None logs (doors without progress)."""
    return FeatureServices(
        view=view,
        folders=folders,
        ignored_by=ignored_by,
        confinement=confinement,
        data_root=lambda: view.configuration.paths.data_root,
        progress=progress or LoggedProgress(),
    )


def _add(
    spec: FeatureSpec,
    feature: Feature,
    built: dict[str, Feature],
    operations: dict[str, BoundOperation],
) -> None:
    """Add ``feature`` and its operations (``<feature>/<op>``) to ``built`` and ``operations``."""
    name = spec.name
    bound: dict[str, BoundOperation] = {}
    for op in feature.operations:
        path = f"{name}/{op.name}"
        if path in bound:
            raise ValueError(f"operation {path} is declared twice")
        bound[path] = BoundOperation(name, op)
    declared = {f"{name}/{op}" for op in spec.operations}
    if declared and declared != set(bound):
        log.error("feature %s declares operations %s but serves %s; served as built",
                  name, sorted(declared), sorted(bound))  # fmt: skip
    built[name] = feature
    operations.update(bound)


class FeatureTable:
    """The features of one process, built once from ``specs`` with ``services``."""

    def __init__(
        self, specs: Sequence[FeatureSpec], services: FeatureServices, *, lazy: bool = False
    ) -> None:
        """Build every feature of ``specs`` (with ``lazy``, on first use: `build`).

        A feature whose ``build`` raises is logged and left out.
        """
        self.specs = tuple(specs)
        self.services = services
        self._built: dict[str, Feature] = {}
        self._operations: dict[str, BoundOperation] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._started = False
        self._closed = False
        self._building = threading.Lock()
        self._ready = False
        if not lazy:
            self.build()

    def build(self) -> None:
        """Build the features now (once; safe from a worker thread while the loop reads)."""
        with self._building:
            if self._ready:
                return
            built: dict[str, Feature] = {}
            operations: dict[str, BoundOperation] = {}
            for spec in self.specs:
                with _isolated(spec.name, "build"):
                    _add(spec, spec.build(self.services), built, operations)
            # swapped in whole: the event loop may be iterating the empty ones meanwhile
            self._built, self._operations = built, operations
            self._ready = True

    @property
    def built(self) -> bool:
        """Whether the features are built (a lazy table builds on first use)."""
        return self._ready

    @property
    def features(self) -> Mapping[str, Feature]:
        """The built features by name."""
        self.build()
        return self._built

    def operations(self) -> Mapping[str, BoundOperation]:
        """Every operation, by ``<feature>/<op>``."""
        self.build()
        return self._operations

    def operation(self, path: str) -> BoundOperation:
        """Return the operation at ``<feature>/<op>``, or raise `OperationNotFound`."""
        found = self.operations().get(path)
        if found is not None:
            return found
        feature = path.partition("/")[0]
        if feature not in self.features:
            known = ", ".join(sorted(self.features)) or "none"
            raise OperationNotFound(f"no feature {feature!r} (features: {known})")
        ops = sorted(p.partition("/")[2] for p in self._operations if p.startswith(f"{feature}/"))
        raise OperationNotFound(
            f"feature {feature!r} has no operation {path.partition('/')[2]!r} "
            f"(operations: {', '.join(ops) or 'none'})"
        )

    def provided(self, name: str) -> object | None:
        """Return what feature ``name`` offers the others (``Feature.provides``), or None."""
        feature = self.features.get(name)
        return feature.provides if feature is not None else None

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        """Run each feature's ``start`` in a task of its own (once; the door is up)."""
        if self._started or self._closed:
            return
        self._started = True
        for name, feature in self.features.items():
            if feature.start is not None:
                task = asyncio.create_task(
                    self._run(name, feature.start), name=f"qa-feature-{name}"
                )
                self._tasks.append(task)

    @staticmethod
    async def _run(name: str, start: Callable[[], Any]) -> None:
        with _isolated(name, "start"):
            await start()

    async def aclose(self) -> None:
        """Cancel the ``start`` tasks, then close every feature (each guarded)."""
        if self._closed:
            return
        self._closed = True
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        for name, feature in self._built.items():  # never built: nothing to close
            if feature.aclose is not None:
                with _isolated(name, "aclose"):
                    await feature.aclose()

    def reloaded(self) -> None:
        """Tell every feature that the configuration reloaded."""
        for name, feature in self._built.items():
            if feature.reloaded is not None:
                with _isolated(name, "reloaded"):
                    feature.reloaded()

    def files_changed(self, changes: Sequence[FileChange]) -> None:
        """Tell every feature of ``changes``."""
        if not changes:
            return
        for name, feature in self._built.items():
            if feature.files_changed is not None:
                with _isolated(name, "files_changed"):
                    feature.files_changed(changes)

    def watch(self, documents: DocumentStore) -> None:
        """Tell the features of every open, change and close of ``documents``.

        A lazy table listens from the start; what happens before it is built is not told (a
        feature's first work reads the files as they are then).
        """
        if not self._ready or any(f.files_changed is not None for f in self._built.values()):
            documents.add_listener(self._on_document)

    def _on_document(self, event: DocumentEvent) -> None:
        path = event.document.path
        kind = _DOCUMENT_KINDS.get(str(event.kind))
        if path and kind is not None:
            text = None if kind == "closed" else event.document.text
            self.files_changed([FileChange(path=Path(path), kind=kind, text=text)])

    # -- what the doors show --------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Every built feature's part of ``qodeassist/status``, under its name."""
        parts: dict[str, Any] = {}
        for name, feature in self._built.items():
            if feature.status is not None:
                with _isolated(name, "status"):
                    parts[name] = dict(feature.status())
        return parts

    def contribute(self, registry: ToolRegistry, pipeline: PipelineSpec) -> None:
        """Add every feature's chat tools to ``registry`` (a ``ToolContributor``)."""
        for name, feature in self.features.items():
            if feature.tools is not None:
                with _isolated(name, "tools"):
                    feature.tools(registry, pipeline)
