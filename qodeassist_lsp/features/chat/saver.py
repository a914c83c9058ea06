"""``ChatSaver``: writes chats to their history files in the background, in order, merged.

A save snapshots the chat (its history goes on changing while the save waits for its turn) and
runs in a task; the writes of one chat land in the order they were made, each merged with what
other writers (another editor's server, the CLI) added to the file meanwhile. A callback given to
``schedule`` runs once the chat is on disk (or at once without autosave): the terminal chat
event waits for it, so a client that lists or reopens chats right after an answer sees it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable

from qodeassist_lsp.features.chat.chat_state import Chat
from qodeassist_lsp.features.chat.history_format import ChatFile
from qodeassist_lsp.features.chat.store import ChatStore

log = logging.getLogger("qodeassist.chat")


class ChatSaver:
    """The background saves of one chat service."""

    def __init__(self, store: Callable[[], ChatStore], autosave: Callable[[], bool]) -> None:
        self._store = store
        self._autosave = autosave
        self._saves: set[asyncio.Task[None]] = set()

    def schedule(self, chat: Chat, then: Callable[[], None] | None = None) -> None:
        """Save ``chat`` in the background, then call ``then``."""
        if not self._autosave():
            if then is not None:
                then()
            return
        chat.file.messages = list(chat.history.messages)
        snapshot = dataclasses.replace(
            chat.file,
            messages=list(chat.file.messages),
            linked_files=list(chat.file.linked_files),
            usage=dict(chat.file.usage),
        )
        task = asyncio.create_task(
            self._write(chat, snapshot, then), name=f"qa-save-{chat.chat_id}"
        )
        self._saves.add(task)
        task.add_done_callback(self._saves.discard)

    async def _write(self, chat: Chat, snapshot: ChatFile, then: Callable[[], None] | None) -> None:
        """Save ``snapshot``, keeping what other writers added to the file meanwhile."""
        store = self._store()
        try:
            async with chat.saving:  # writes of one chat land in the order they were made
                await asyncio.to_thread(store.save_merged, chat.chat_id, snapshot, chat.seen)
                # What this server holds, not the merge: another writer's messages are not in
                # its history, so the next save must find them in the file again and keep them.
                chat.seen = tuple(snapshot.messages)
        except OSError as exc:
            log.error("could not save chat %s in %s: %s", chat.chat_id, store.root, exc)
        finally:
            if then is not None:
                then()

    async def flush(self) -> None:
        """Wait until every scheduled save is written."""
        while self._saves:
            await asyncio.gather(*list(self._saves), return_exceptions=True)
