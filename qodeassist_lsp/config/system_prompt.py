"""Rendering an agent's ``system_prompt``: a sandboxed Jinja2 template with file helpers.

``${PROJECT_DIR}`` and ``${CONFIG_DIR}`` are substituted first. ``read_file`` and friends may
only reach the project dir, the config dir, the bundled tree (``:/…`` paths) and the user's
``allowed_roots``; ``..`` segments, symlinks leading out and absolute paths elsewhere are refused
by the ``Confinement`` resolver with a message naming the path and the setting. ``check_paths``
finds such paths statically (in every branch of the template) so ``agents validate`` reports
them before a send does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.sandbox import SandboxedEnvironment

from qodeassist_lsp.config.confinement import (
    ALLOWED_ROOTS_SETTING,
    Confinement,
    PathRefused,
    kind_of,
)
from qodeassist_lsp.wire.errors import QodeAssistError

MAX_READ_BYTES = 1024 * 1024
_UNRESOLVED = "${"


class SystemPromptError(QodeAssistError):
    """The system prompt could not be rendered; the message says why and what to do."""


class PromptPathRefused(SystemPromptError):
    """A prompt file path leads outside the folders prompts may read (a configuration error)."""


_PATH_HELPERS = frozenset({"read_file", "file_exists", "read_dir"})


@dataclass(frozen=True)
class PromptRoots:
    """The directories ``read_file`` may reach and the values of the ``${…}`` variables."""

    bundled: Path
    config_dir: Path | None = None
    project_dir: Path | None = None
    extra: tuple[Path, ...] = ()
    """The user's ``allowed_roots``."""

    def allowed(self) -> list[Path]:
        """Return the resolved sandbox roots."""
        return list(self.confinement().roots)

    def confinement(self) -> Confinement:
        """Return the resolver of prompt file paths."""
        roots = [r for r in (self.bundled, self.config_dir, self.project_dir) if r is not None]
        return Confinement(
            Confinement.of(roots, self.extra).roots,
            scope="the folders system prompts may read (the project, the config dir and "
            "bundled ':/' files)",
            advice=f"; move the file there or add its folder to `{ALLOWED_ROOTS_SETTING}` in "
            "your user settings",
        )


class SystemPromptRenderer:
    """Compiles and renders ``system_prompt`` templates inside the sandbox of ``roots``."""

    def __init__(self, roots: PromptRoots) -> None:
        self._roots = roots
        self._confinement = roots.confinement()
        env = SandboxedEnvironment(
            undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True
        )
        helpers: dict[str, Callable[..., Any]] = {
            "read_file": self.read_file,
            "file_exists": self.file_exists,
            "read_dir": self.read_dir,
            "head_lines": head_lines,
            "basename": lambda p: os.path.basename(str(p).rstrip("/")),
            "dirname": lambda p: os.path.dirname(str(p)),
            "ext": lambda p: os.path.splitext(str(p))[1].lstrip("."),
            "lower": lambda s: str(s).lower(),
            "upper": lambda s: str(s).upper(),
        }
        env.globals.update(helpers)
        env.filters.update(helpers)
        self._env = env
        self._compiled: dict[str, jinja2.Template] = {}

    def substitute(self, text: str) -> str:
        """Replace ``${PROJECT_DIR}`` and ``${CONFIG_DIR}`` where they are known."""
        for name, value in (
            ("PROJECT_DIR", self._roots.project_dir),
            ("CONFIG_DIR", self._roots.config_dir),
        ):
            if value is not None:
                text = text.replace("${" + name + "}", str(value))
        return text

    def compile(self, source: str) -> jinja2.Template:
        """Compile ``source`` once per distinct text; a syntax error is a ``SystemPromptError``."""
        template = self._compiled.get(source)
        if template is None:
            try:
                template = self._env.from_string(self.substitute(source))
            except jinja2.TemplateSyntaxError as exc:
                raise SystemPromptError(
                    "system_prompt has a template syntax error on its line "
                    f"{exc.lineno}: {exc.message}"
                ) from exc
            self._compiled[source] = template
        return template

    def render(self, source: str, language: str = "") -> str:
        """Render ``source`` for a file of ``language``; the result is stripped."""
        if not source.strip():
            return ""
        template = self.compile(source)
        try:
            return template.render(language=language).strip()
        except SystemPromptError:
            raise
        except (jinja2.TemplateError, TypeError, ValueError, LookupError) as exc:
            raise SystemPromptError(f"system_prompt render failed: {exc}") from exc

    def resolve(self, path: str) -> Path:
        """Map a template path to a file inside the sandbox, or raise ``SystemPromptError``."""
        if _UNRESOLVED in path:
            raise SystemPromptError(
                f"{path!r} uses a variable that is not known here "
                "(${PROJECT_DIR} needs an open project)"
            )
        if path.startswith(":/"):
            base, relative = self._roots.bundled, Path(path[2:])
        else:
            candidate = Path(path).expanduser()
            if candidate.is_absolute():
                base, relative = Path(candidate.anchor), candidate.relative_to(candidate.anchor)
            else:
                base = self._roots.project_dir or self._roots.config_dir or self._roots.bundled
                relative = candidate
        if ".." in relative.parts:
            raise PromptPathRefused(
                f"{path!r}: '..' is not allowed in prompt file paths; name a file inside the "
                f"project, the config dir, bundled ':/' files or `{ALLOWED_ROOTS_SETTING}`"
            )
        try:
            return self._confinement.resolve(base / relative)
        except PathRefused as exc:
            raise PromptPathRefused(str(exc)) from None

    def check_paths(self, source: str) -> list[str]:
        """Return a message per literal helper path in ``source`` that would be refused.

        Every ``read_file``/``file_exists``/``read_dir`` call with a constant path is checked,
        also in branches the dry render does not take. Paths with a variable not known here
        (``${PROJECT_DIR}`` without a project) are left to the render at send time.
        """
        try:
            tree = self._env.parse(self.substitute(source))
        except jinja2.TemplateSyntaxError:
            return []  # the render reports it
        found: list[str] = []
        for helper, path in _literal_paths(tree):
            if _UNRESOLVED in path:
                continue
            try:
                resolved = self.resolve(path)
                if helper == "read_file" and resolved.exists():
                    _regular(path, resolved)
            except SystemPromptError as exc:
                if str(exc) not in found:
                    found.append(str(exc))
        return found

    def read_file(self, path: str) -> str:
        """Return the text of ``path`` (sandboxed); a missing file is an error."""
        resolved = self.resolve(path)
        try:
            _regular(path, resolved)
            if resolved.stat().st_size > MAX_READ_BYTES:
                raise SystemPromptError(f"{path!r} is larger than {MAX_READ_BYTES} bytes")
            return resolved.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError as exc:
            raise SystemPromptError(f"read_file({path!r}): no such file") from exc
        except OSError as exc:
            raise SystemPromptError(f"read_file({path!r}): {exc.strerror}") from exc

    def file_exists(self, path: str) -> bool:
        """Return whether ``path`` exists; unresolved variables count as absent."""
        if _UNRESOLVED in path:
            return False
        return self.resolve(path).is_file()

    def read_dir(self, path: str) -> list[str]:
        """Return the sorted entry names of the directory ``path`` (sandboxed)."""
        resolved = self.resolve(path)
        try:
            return sorted(entry.name for entry in resolved.iterdir())
        except OSError as exc:
            raise SystemPromptError(f"read_dir({path!r}): {exc.strerror}") from exc


def _regular(path: str, resolved: Path) -> None:
    """Refuse a FIFO or device by what it is (reading one would block or never end)."""
    kind = kind_of(resolved.stat().st_mode)
    if kind is not None:
        raise PromptPathRefused(f"{path!r}: {resolved} is {kind}, not a regular file")


def _literal_paths(tree: nodes.Template) -> list[tuple[str, str]]:
    """Return ``(helper, path)`` for each constant path given to a helper (call or filter)."""
    found: list[tuple[str, str]] = []
    for call in tree.find_all(nodes.Call):
        if isinstance(call.node, nodes.Name) and call.node.name in _PATH_HELPERS and call.args:
            first = call.args[0]
            if isinstance(first, nodes.Const) and isinstance(first.value, str):
                found.append((call.node.name, first.value))
    for flt in tree.find_all(nodes.Filter):
        node = flt.node
        value = node.value if isinstance(node, nodes.Const) else None
        if flt.name in _PATH_HELPERS and isinstance(value, str):
            found.append((flt.name, value))
    return found


def head_lines(text: str, count: int) -> str:
    """Return the first ``count`` lines of ``text``."""
    return "\n".join(str(text).splitlines()[: max(int(count), 0)])
