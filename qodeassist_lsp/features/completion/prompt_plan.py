"""What one completion request sends, and how its answer is cleaned: its prompt plan.

Given the routed agent, the document and the cursor, ``PromptPlanner.plan`` builds the FIM
context (the prefix/suffix window, healed where the agent continues the text, led by the
extra-context ring's chunks), the ``completion.context`` system layer, and the post-processor
(single-line or not, the healed whitespace or word to take off the answer). Kept apart from the
service, which decides *whether* and *when* a request goes upstream.

On a model on this machine, a file the model has not read yet gets a *cold window*
(``local_cold_lines_before``): its first request reads a few lines, not the whole
``lines_before`` window (which takes seconds on two cores), and the window's first line is kept
per document while the cursor works down, so each prompt extends the last one and the model's
prompt cache reuses it. A jump of the cursor (above that line, or farther than the cold window
from the last request) starts a new one; the usual stepped window takes over once it starts
lower.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from qodeassist_lsp.config.agent_profile import AgentProfile
from qodeassist_lsp.context.documents import Document, DocumentStore
from qodeassist_lsp.features.completion.codebase_context import CodebaseContext, Definitions
from qodeassist_lsp.features.completion.cold_window import window_start
from qodeassist_lsp.features.completion.context_builder import (
    CompletionContext,
    Cursor,
    HeaderCache,
    build_context,
    context_layer,
    stepped,
)
from qodeassist_lsp.features.completion.extra_context import ExtraContextRing, ExtraFile
from qodeassist_lsp.features.completion.healing import continues_text, heal_prefix, heal_word
from qodeassist_lsp.features.completion.languages import (
    DEFAULT_COMMENT_PREFIX,
    LanguageTable,
    mime_type,
)
from qodeassist_lsp.features.completion.postprocess import (
    PostprocessOptions,
    Postprocessor,
    inside_block,
)
from qodeassist_lsp.features.completion.settings import CompletionSettings
from qodeassist_lsp.features.completion.triggers import single_line_mode

_RING_NAMES = ("files_metadata", "fim_prompt(")
_HEALED_WORD = ("healed_word",)


def uses_extra_context(profile: AgentProfile) -> bool:
    """Whether ``profile``'s body sends the extra context (``ctx.files_metadata``)."""
    return mentions(profile.body, _RING_NAMES)


def heals_words(profile: AgentProfile) -> bool:
    """Whether ``profile``'s model continues the prompt and its body sends ``ctx.healed_word``."""
    return continues_text(profile.endpoint, profile.body, profile.tags) and mentions(
        profile.body, _HEALED_WORD
    )


def mentions(value: Any, names: tuple[str, ...]) -> bool:
    """Whether a string of the body ``value`` (nested dicts and lists) contains one of ``names``."""
    if isinstance(value, str):
        return any(name in value for name in names)
    if isinstance(value, dict):
        return any(mentions(item, names) for item in value.values())
    if isinstance(value, list):
        return any(mentions(item, names) for item in value)
    return False


@dataclass(frozen=True)
class PromptPlan:
    """The context and system layer to send, and the post-processor of the answer."""

    context: CompletionContext
    layer: str
    language: str
    postprocessor: Postprocessor


class PromptPlanner:
    """Builds the `PromptPlan` of a request from the documents, headers and extra context."""

    def __init__(
        self,
        documents: DocumentStore,
        headers: HeaderCache,
        ring: ExtraContextRing,
        is_ignored: Callable[[Document], bool],
        local: Callable[[AgentProfile], bool],
        codebase: CodebaseContext | None = None,
        held: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext,
    ) -> None:
        """``local(profile)``: the agent's model runs on this machine (cold windows apply).

        ``codebase``: definitions from the workspace's index (None: none are added).
        ``held()``: a scope in which ``is_ignored`` checks the folders and ignore files once
        (`IgnoredFiles.held`); a plan asks about every open document with recent changes.
        """
        self._documents = documents
        self._headers = headers
        self._ring = ring
        self._is_ignored = is_ignored
        self._held = held
        self._local = local
        self.codebase = codebase or CodebaseContext()
        """Definitions from the codebase index for the prompt (``codebase_context``)."""
        self._tops: dict[str, tuple[int, int]] = {}
        """Per document: the cold window's first line and the line last planned."""
        self._heals: dict[str, tuple[AgentProfile, bool]] = {}
        """Per agent: whether its prompts get word healing (``heals_words``), with its profile."""
        self.languages = LanguageTable()
        """The language table (replaced when ``custom_languages`` change)."""

    def plan(
        self,
        profile: AgentProfile,
        document: Document,
        cursor: Cursor | None,
        cs: CompletionSettings,
    ) -> PromptPlan:
        """Return what ``profile`` is sent for ``cursor`` in ``document`` under ``cs``.

        ``cursor`` None (a warm-up where it is not known): the start of the document, and the
        extra context is not matched against a cursor window.
        """
        with self._held():
            return self._plan(profile, document, cursor, cs)

    def _plan(
        self,
        profile: AgentProfile,
        document: Document,
        cursor: Cursor | None,
        cs: CompletionSettings,
    ) -> PromptPlan:
        known = cursor is not None
        cursor = cursor or Cursor.at_position(document.text, 0, 0, 0)
        language = self.languages.detect(document.path, document.language_id)
        header = self._headers.get(document, language) if cs.skip_license_header else None
        top = self._cold_top(profile, document, cursor.line, cs) if known else None
        context = build_context(document, cursor, cs, header, top)
        healed = word = ""
        if continues_text(profile.endpoint, profile.body, profile.tags):
            prefix = context.prefix
            if cs.heal_words and known and self._heals_words(profile):
                prefix, word = heal_word(prefix, cursor.line_after)
            if not word:
                prefix, healed = heal_prefix(prefix)
            context = dataclasses.replace(context, prefix=prefix)
        comment_prefix = language.comment_prefix if language else DEFAULT_COMMENT_PREFIX
        files = uses_extra_context(profile)
        definitions = Definitions()
        block = ""
        if cs.codebase_context and not files and cs.codebase_context_in_prefix:
            # The same text for every request in the file: llama.cpp's prompt cache keeps it.
            block = self.codebase.file_block(
                uri=document.uri,
                path=document.path,
                text=document.text,
                budget=cs.codebase_context_tokens,
                comment_prefix=comment_prefix,
            ).text
        if known and cs.codebase_context and files:
            definitions = self.codebase.definitions(
                uri=document.uri,
                path=document.path,
                text=document.text,
                line=cursor.line,
                line_start=cursor.line_start,
                line_before=cursor.line_before,
                budget=cs.codebase_context_tokens,
            )
        if cs.extra_context_chunks > 0:
            window = context.prefix + context.suffix if known else ""
            chunks = self._ring.for_request(document, cursor.line if known else None, window)
            extra = [ExtraFile.of(chunk, comment_prefix) for chunk in chunks]
            if files and definitions.items:
                # The definitions take their share of the ring's budget from its newest end:
                # the prompt's start (the oldest chunks, in the model's cache) stays put.
                room = cs.extra_context_tokens - definitions.tokens
                while extra and sum(c.tokens for c in chunks[: len(extra)]) > room:
                    extra.pop()
            context = dataclasses.replace(context, extra=tuple(extra))
        if definitions.items:
            defined = tuple(
                ExtraFile(path, code, f"{comment_prefix} {path}\n")
                for path, code in definitions.as_files()
            )
            context = dataclasses.replace(context, extra=context.extra + defined)
        if block:
            context = dataclasses.replace(context, prefix=block + context.prefix)
        layer = context_layer(
            document,
            mime=mime_type(document.path or document.uri, document.language_id),
            settings=cs,
            store=self._documents,
            is_ignored=self._is_ignored,
        )
        options = PostprocessOptions(
            output_handler=cs.output_handler,
            drop_prose=cs.drop_prose,
            comment_prefix=comment_prefix,
            single_line=single_line_mode(cs.multi_line, cursor.line_after, cursor.line_before)
            or (
                cs.multi_line == "smart"
                and inside_block(
                    cursor.line_before, cursor.line_after, cursor.line_below(document.text)
                )
            ),
            next_line_at_end=cs.multi_line == "smart"
            and not cursor.line_after.strip()
            and bool(cursor.line_before.strip()),
            line_before=cursor.line_before,
            line_after=cursor.line_after,
            next_line=cursor.next_line(document.text),
            is_fence_tag=self.languages.is_fence_tag,
            healed=healed,
            healed_word=word,
        )
        name = language.name if language else ""
        return PromptPlan(context, layer, name, Postprocessor(options))

    def _heals_words(self, profile: AgentProfile) -> bool:
        """``heals_words(profile)``, worked out once per agent (and configuration)."""
        known = self._heals.get(profile.name)
        if known is None or known[0] is not profile:
            known = (profile, heals_words(profile))
            self._heals[profile.name] = known
        return known[1]

    def forget(self, uri: str) -> None:
        """Drop what is kept for ``uri`` (closed)."""
        self._tops.pop(uri, None)
        self.codebase.forget(uri)

    def _cold_top(
        self, profile: AgentProfile, document: Document, line: int, cs: CompletionSettings
    ) -> int | None:
        """Return the cold window's first line for a request at ``line`` (or None).

        It starts where the top-level statement around ``cold`` lines above begins, or the
        function it calls right above it (``cold_window``), within the usual window.
        """
        cold = cs.local_cold_lines_before
        if cold <= 0 or cs.read_full_file or cs.max_context_tokens > 0 or not self._local(profile):
            return None
        uri = document.uri
        top, last = self._tops.get(uri, (-1, 0))
        if top < 0 or line < top or abs(line - last) > cold:
            highest = max(line - stepped(line, cs.lines_before), 0)
            top = window_start(document.text, max(line - cold, 0), highest, line)
        self._tops[uri] = (top, line)
        return top
