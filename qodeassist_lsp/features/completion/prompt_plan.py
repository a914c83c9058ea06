"""What one completion request sends, and how its answer is cleaned: its prompt plan.

Given the routed agent, the document and the cursor, ``PromptPlanner.plan`` builds the FIM
context (the prefix/suffix window, healed where the agent continues the text, led by the
extra-context ring's chunks), the ``completion.context`` system layer, and the post-processor
(single-line or not, the healed whitespace to take off the answer). Kept apart from the
service, which decides *whether* and *when* a request goes upstream.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from qodeassist_lsp.config.agent_profile import AgentProfile
from qodeassist_lsp.context.documents import Document, DocumentStore
from qodeassist_lsp.features.completion.context_builder import (
    CompletionContext,
    Cursor,
    HeaderCache,
    build_context,
    context_layer,
)
from qodeassist_lsp.features.completion.extra_context import ExtraContextRing, ExtraFile
from qodeassist_lsp.features.completion.healing import continues_text, heal_prefix
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
    ) -> None:
        self._documents = documents
        self._headers = headers
        self._ring = ring
        self._is_ignored = is_ignored
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
        known = cursor is not None
        cursor = cursor or Cursor.at_position(document.text, 0, 0, 0)
        language = self.languages.detect(document.path, document.language_id)
        header = self._headers.get(document, language) if cs.skip_license_header else None
        context = build_context(document, cursor, cs, header)
        healed = ""
        if continues_text(profile.endpoint, profile.body, profile.tags):
            prefix, healed = heal_prefix(context.prefix)
            context = dataclasses.replace(context, prefix=prefix)
        comment_prefix = language.comment_prefix if language else DEFAULT_COMMENT_PREFIX
        if cs.extra_context_chunks > 0:
            window = context.prefix + context.suffix if known else ""
            chunks = self._ring.for_request(document, cursor.line if known else None, window)
            extra = tuple(ExtraFile.of(chunk, comment_prefix) for chunk in chunks)
            context = dataclasses.replace(context, extra=extra)
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
        )
        name = language.name if language else ""
        return PromptPlan(context, layer, name, Postprocessor(options))
