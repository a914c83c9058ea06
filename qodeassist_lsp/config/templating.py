"""``[body]`` templates: Jinja2 strings inside a TOML table that render to raw JSON.

Every string in an agent's ``[body]`` that contains ``{{`` or ``{%`` is compiled once, in a
``SandboxedEnvironment``, when the agent is built; rendering walks the table, renders those
strings against ``ctx``, strips trailing commas outside JSON strings, parses the text as JSON and
splices the value in place. An empty render drops the key (or the array item). Everything else
passes through unchanged. The contract is documented in ``docs/agent-template-context.md``.

Compiling the bundled agents' templates is most of a configuration load (Jinja parses, generates
Python source and ``compile()``s it), so a :class:`BodyCompiler` given a
:class:`~qodeassist_lsp.config.code_cache.CodeTable` takes the code objects from it: keyed by a
hash of the Jinja version, the environment's code-generating options, the kind (the text
template, or the lone ``| tojson`` expression, stored as ``None`` for sources that are not one)
and the source, so a warm load parses and compiles nothing. Only sources that compiled are
stored: a syntax error is raised at every load, as without the cache.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.sandbox import SandboxedEnvironment

from qodeassist_lsp.config.code_cache import MISSING, CodeTable, cache_file
from qodeassist_lsp.config.fim_templates import FIM_HELPERS, FimTemplateError
from qodeassist_lsp.wire.errors import QodeAssistError

_MARKERS = ("{{", "{%")
SIGNATURE_SUFFIX = "\n[Signature: "


class TemplateError(QodeAssistError):
    """A body template failed to compile or render; ``key`` is the dotted body path."""

    def __init__(self, key: str, message: str, snippet: str = "") -> None:
        super().__init__(f"[body].{key}: {message}")
        self.key = key
        self.message = message
        self.snippet = snippet


def to_json(value: Any) -> str:
    """Serialise ``value`` as compact JSON, keeping non-ASCII text readable."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_undefined_json)


def _undefined_json(value: Any) -> Any:
    if isinstance(value, jinja2.Undefined):
        value._fail_with_undefined_error()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def filter_by_type(blocks: Iterable[Mapping[str, Any]], block_type: str) -> list[Any]:
    """Keep the content blocks whose ``type`` is ``block_type``."""
    return [block for block in blocks if block.get("type") == block_type]


def filter_skip_role(history: Iterable[Mapping[str, Any]], role: str) -> list[Any]:
    """Drop the messages whose ``role`` is ``role``."""
    return [message for message in history if message.get("role") != role]


def strip_signature_suffix(text: str) -> str:
    """Cut a legacy signature tail (newline + ``[Signature: …``) off thinking text."""
    index = text.find(SIGNATURE_SUFFIX)
    return text if index < 0 else text[:index]


BODY_HELPERS: dict[str, Callable[..., Any]] = {
    "tojson": to_json,
    "filter_by_type": filter_by_type,
    "filter_skip_role": filter_skip_role,
    "strip_signature_suffix": strip_signature_suffix,
    **FIM_HELPERS,
}


class SandboxedLoader(jinja2.BaseLoader):
    """Resolve ``{% include %}`` names under fixed roots; refuse absolute names and ``..``."""

    def __init__(self, roots: Sequence[Path]) -> None:
        self._roots = [root.resolve() for root in roots]

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        """Return the text of ``template`` from the first root that holds it."""
        relative = Path(template)
        if relative.is_absolute() or template.startswith(("/", "\\")) or ".." in relative.parts:
            raise jinja2.TemplateNotFound(
                f"{template} (include names must be relative, without '..')"
            )
        for root in self._roots:
            candidate = (root / relative).resolve()
            if candidate.is_relative_to(root) and candidate.is_file():
                mtime = candidate.stat().st_mtime
                text = candidate.read_text(encoding="utf-8")
                return text, str(candidate), lambda c=candidate, m=mtime: _unchanged(c, m)
        searched = ", ".join(str(root) for root in self._roots)
        raise jinja2.TemplateNotFound(f"{template} (searched {searched})")


def _unchanged(path: Path, mtime: float) -> bool:
    try:
        return path.stat().st_mtime == mtime
    except OSError:
        return False


def default_code_cache_path(env: Mapping[str, str] | None = None) -> Path | None:
    """Return the file of compiled body-template code, or ``None`` when the cache is off."""
    return cache_file("jinja-code", f"jinja2-{jinja2.__version__}", env)


class BodyCompiler:
    """A sandboxed environment for body templates plus a cache of compiled sources.

    Concrete agents inherit their message serialisation from a few wire bases, so the same
    template text appears in many agents; compiling each distinct text once keeps loading fast.
    ``code`` is the persistent table of compiled code objects (none: compile every source).
    """

    def __init__(self, include_roots: Sequence[Path], code: CodeTable | None = None) -> None:
        env = SandboxedEnvironment(
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            trim_blocks=True,
            lstrip_blocks=True,
            loader=SandboxedLoader(include_roots),
        )
        env.filters.update(BODY_HELPERS)
        env.globals.update(BODY_HELPERS)
        self.env = env
        self._cache: dict[str, CompiledSource] = {}
        self._code = code if code is not None else CodeTable(None)
        self._salt = _code_salt(env)

    def compile(self, source: str) -> CompiledSource:
        """Return ``source`` compiled (raises ``TemplateSyntaxError``), once per distinct text."""
        compiled = self._cache.get(source)
        if compiled is None:
            compiled = CompiledSource(self._template(source), self._value_template(source))
            self._cache[source] = compiled
        return compiled

    def _template(self, source: str) -> jinja2.Template:
        key = self._key(b"text", source)
        code = self._code.get(key, (types.CodeType,))
        if not isinstance(code, types.CodeType):
            code = self.env.compile(source)  # what env.from_string compiles
            self._code.add(key, code)
        return self._from_code(code)

    def _value_template(self, source: str) -> jinja2.Template | None:
        key = self._key(b"value", source)
        code = self._code.get(key, (types.CodeType, type(None)))
        if code is MISSING:
            tree = _value_tree(self.env, source)
            code = None if tree is None else self.env.compile(tree)
            self._code.add(key, code)
        return self._from_code(code) if isinstance(code, types.CodeType) else None

    def _from_code(self, code: types.CodeType) -> jinja2.Template:
        env = self.env
        return env.template_class.from_code(env, code, env.make_globals(None))

    def _key(self, kind: bytes, source: str) -> bytes:
        text = source.encode("utf-8", "surrogatepass")
        return hashlib.sha1(self._salt + kind + b"\0" + text, usedforsecurity=False).digest()


def _code_salt(env: SandboxedEnvironment) -> bytes:
    """Return what, besides the source, decides the code Jinja generates in ``env``."""
    options = (
        jinja2.__version__,
        sys.flags.optimize,
        _name(type(env)),
        _name(env.code_generator_class),
        # the lexer's options (jinja2.lexer.get_lexer's key) and the parser's extensions
        env.block_start_string,
        env.block_end_string,
        env.variable_start_string,
        env.variable_end_string,
        env.comment_start_string,
        env.comment_end_string,
        env.line_statement_prefix,
        env.line_comment_prefix,
        env.trim_blocks,
        env.lstrip_blocks,
        env.newline_sequence,
        env.keep_trailing_newline,
        sorted(env.extensions),
        # the code generator's inputs
        env.optimized,
        env.is_async,
        env.autoescape if isinstance(env.autoescape, bool) else _name(env.autoescape),
        None if env.finalize is None else (_name(env.finalize), _pass_arg(env.finalize)),
        env.sandboxed,
        sorted(env.intercepted_binops),
        sorted(env.intercepted_unops),
        sorted((name, _pass_arg(f)) for name, f in env.filters.items()),
        sorted((name, _pass_arg(f)) for name, f in env.tests.items()),
    )
    return repr(options).encode("utf-8", "surrogatepass") + b"\0"


def _name(value: object) -> str:
    kind = value if isinstance(value, type) else type(value)
    name = getattr(value, "__qualname__", kind.__qualname__)
    return f"{getattr(value, '__module__', kind.__module__)}.{name}"


def _pass_arg(function: Any) -> str:
    # What jinja2.pass_context and friends set, and the code generator reads.
    found = getattr(function, "jinja_pass_arg", None)
    return "" if found is None else str(getattr(found, "name", found))


class CompiledSource:
    """One template string, rendered as text or, when it is one ``| tojson``, evaluated."""

    def __init__(self, template: jinja2.Template, value: jinja2.Template | None) -> None:
        """Wrap ``template``; ``value`` evaluates a lone ``| tojson`` expression, if any."""
        self.template = template
        self._value = value
        # Rendering through Template.render copies the globals ChainMap into a new dict on
        # every call (a third of a small template's cost, measured): build that dict once.
        self._globals = dict(template.globals)

    def render(self, variables: Mapping[str, Any]) -> str:
        """Render the template as text."""
        template = self.template
        context = template.new_context({**self._globals, **variables}, shared=True)
        return template.environment.concat(template.root_render_func(context))

    def evaluate(self, variables: Mapping[str, Any]) -> Any:
        """Return the JSON value the string stands for, or `_NOT_DIRECT` to render it as text.

        A string that is one ``{{ expression | tojson }}`` stands for the expression's value
        when that is a string, number, boolean or null: serialising it and parsing it back
        would give the same value (a tenth of the cost of a prompt-sized render, measured).
        """
        template = self._value
        if template is None:
            return _NOT_DIRECT
        context = template.new_context({**self._globals, **variables}, shared=True)
        for _ in template.root_render_func(context):
            pass
        value = context.vars["result"]
        if value is None or type(value) in _SCALARS:
            return value
        return json.loads(to_json(value))  # lists, maps, tuples: as tojson would write them


_SCALARS = (str, int, float, bool)
_NOT_DIRECT = object()


def _value_tree(env: jinja2.Environment, source: str) -> nodes.Template | None:
    """Return ``result = <expression>`` when ``source`` is just ``{{ expression | tojson }}``."""
    body = env.parse(source).body
    if len(body) != 1 or not isinstance(body[0], nodes.Output) or len(body[0].nodes) != 1:
        return None
    node = body[0].nodes[0]
    if not (
        isinstance(node, nodes.Filter)
        and node.name == "tojson"
        and node.node is not None
        and not node.args
        and not node.kwargs
        and node.dyn_args is None
        and node.dyn_kwargs is None
    ):
        return None
    assign = nodes.Assign(nodes.Name("result", "store"), node.node, lineno=1)
    return nodes.Template([assign], lineno=1)


_TRAILING_COMMA = re.compile(r",\s*[\]}]")
_STRING_OR_TRAILING_COMMA = re.compile(r'("(?:[^"\\]|\\.)*")|,(\s*[\]}])')


def strip_trailing_commas(text: str) -> str:
    """Remove commas that directly precede ``]`` or ``}``, ignoring those inside JSON strings."""
    if _TRAILING_COMMA.search(text) is None:
        return text  # the common case for prompt-sized strings: nothing to do
    return _STRING_OR_TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(2), text)


_DROP = object()


@dataclass(frozen=True)
class _Compiled:
    key: str
    source: CompiledSource


class BodyTemplate:
    """A ``[body]`` table with its template strings compiled once, rendered per request."""

    def __init__(self, body: Mapping[str, Any], compiler: BodyCompiler) -> None:
        self._compiler = compiler
        self._tree = self._compile(dict(body), "")

    def _compile(self, node: Any, key: str) -> Any:
        if isinstance(node, dict):
            return {k: self._compile(v, _join(key, k)) for k, v in node.items()}
        if isinstance(node, list):
            return [self._compile(v, f"{key}[{i}]") for i, v in enumerate(node)]
        if isinstance(node, str) and any(marker in node for marker in _MARKERS):
            try:
                return _Compiled(key, self._compiler.compile(node))
            except jinja2.TemplateSyntaxError as exc:
                raise TemplateError(
                    key, f"template syntax error on its line {exc.lineno}: {exc.message}", node
                ) from exc
        return node

    def render(self, ctx: Mapping[str, Any]) -> dict[str, Any]:
        """Render every template against ``ctx`` and return the JSON-ready body."""
        rendered = self._render(self._tree, {"ctx": ctx})
        return rendered if isinstance(rendered, dict) else {}

    def _render(self, node: Any, variables: dict[str, Any]) -> Any:
        if isinstance(node, _Compiled):
            return _render_one(node, variables)
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                result = self._render(value, variables)
                if result is not _DROP:
                    out[key] = result
            return out
        if isinstance(node, list):
            items = (self._render(value, variables) for value in node)
            return [item for item in items if item is not _DROP]
        return node


def _render_one(node: _Compiled, variables: dict[str, Any]) -> Any:
    try:
        value = node.source.evaluate(variables)
        if value is not _NOT_DIRECT:
            return value
        text = node.source.render(variables)
    except jinja2.UndefinedError as exc:
        raise TemplateError(node.key, f"undefined value: {exc.message}") from exc
    except FimTemplateError as exc:
        raise TemplateError(node.key, str(exc)) from exc
    except jinja2.TemplateNotFound as exc:
        raise TemplateError(node.key, f"include not found: {exc.message}") from exc
    except jinja2.TemplateError as exc:
        raise TemplateError(node.key, f"render failed: {exc}") from exc
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise TemplateError(node.key, f"render failed: {exc}") from exc
    if not text.strip():
        return _DROP
    cleaned = strip_trailing_commas(text)
    try:
        return json.loads(cleaned)
    except json.JSONDecodeError as exc:
        start = max(exc.pos - 80, 0)
        snippet = cleaned[start : exc.pos + 80]
        raise TemplateError(
            node.key,
            f"rendered text is not valid JSON ({exc.msg} at character {exc.pos}); "
            "emit strings through `| tojson`",
            snippet,
        ) from exc


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key
