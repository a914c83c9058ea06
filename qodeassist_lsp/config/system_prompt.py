"""Rendering an agent's ``system_prompt``: a sandboxed Jinja2 template with file helpers.

``${PROJECT_DIR}`` and ``${CONFIG_DIR}`` are substituted first. ``read_file`` and friends may
only reach the project dir, the config dir and the bundled tree (``:/…`` paths); ``..``
segments, symlinks leading out and absolute paths elsewhere are refused with a clear message.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from qodeassist_lsp.wire.errors import QodeAssistError

MAX_READ_BYTES = 1024 * 1024
_UNRESOLVED = "${"


class SystemPromptError(QodeAssistError):
    """The system prompt could not be rendered; the message says why and what to do."""


@dataclass(frozen=True)
class PromptRoots:
    """The directories ``read_file`` may reach and the values of the ``${…}`` variables."""

    bundled: Path
    config_dir: Path | None = None
    project_dir: Path | None = None

    def allowed(self) -> list[Path]:
        """Return the resolved sandbox roots."""
        roots = [self.bundled, self.config_dir, self.project_dir]
        return [root.resolve() for root in roots if root is not None]


class SystemPromptRenderer:
    """Compiles and renders ``system_prompt`` templates inside the sandbox of ``roots``."""

    def __init__(self, roots: PromptRoots) -> None:
        self._roots = roots
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
            raise SystemPromptError(f"{path!r}: '..' is not allowed in prompt file paths")
        resolved = (base / relative).resolve()
        if not any(resolved.is_relative_to(root) for root in self._roots.allowed()):
            raise SystemPromptError(
                f"{path!r} is outside the allowed folders (the project, the config dir "
                "and bundled ':/' files); move the file there"
            )
        return resolved

    def read_file(self, path: str) -> str:
        """Return the text of ``path`` (sandboxed); a missing file is an error."""
        resolved = self.resolve(path)
        try:
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


def head_lines(text: str, count: int) -> str:
    """Return the first ``count`` lines of ``text``."""
    return "\n".join(str(text).splitlines()[: max(int(count), 0)])
