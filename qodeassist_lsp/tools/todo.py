"""``todo``: a todo list per chat, kept in memory while the server runs.

The list is keyed on the call's scope (the chat id), so each chat plans on its own; the number of
lists kept is bounded, the oldest dropped first.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Final, Literal

from pydantic import Field

from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.tools.base import KitTool, ToolArguments, ToolInputError

MAX_LISTS: Final = 256


@dataclass
class _Item:
    id: int
    task: str
    done: bool = False


class TodoArgs(ToolArguments):
    """Arguments of ``todo``."""

    operation: Literal["add", "complete", "list"] = Field(
        description="'add' new tasks, 'complete' tasks by id, or 'list' them."
    )
    tasks: list[str] = Field(default_factory=list, description="Tasks to add (for 'add').")
    ids: list[int] = Field(default_factory=list, description="Task ids to complete.")


class TodoTool(KitTool[TodoArgs]):
    """A todo list per chat."""

    name = "todo"
    description = (
        "Keep a todo list for this chat to plan multi-step work: 'add' tasks, 'complete' them "
        "by id, 'list' them. Returns the whole list, done tasks struck through."
    )
    permission = "read"
    arguments = TodoArgs

    def __init__(self) -> None:
        self._lists: OrderedDict[str, list[_Item]] = OrderedDict()

    async def call(self, args: TodoArgs, context: ToolContext) -> ToolOutput:
        """Apply the operation and return the list."""
        items = self._lists.setdefault(context.scope, [])
        self._lists.move_to_end(context.scope)
        while len(self._lists) > MAX_LISTS:
            self._lists.popitem(last=False)
        if args.operation == "add":
            if not args.tasks:
                raise ToolInputError("'add' needs `tasks`, a list of task texts")
            next_id = max((item.id for item in items), default=0) + 1
            for offset, task in enumerate(t.strip() for t in args.tasks if t.strip()):
                items.append(_Item(next_id + offset, task))
        elif args.operation == "complete":
            known = {item.id: item for item in items}
            unknown = [i for i in args.ids if i not in known]
            if not args.ids or unknown:
                ids = ", ".join(map(str, sorted(known))) or "none"
                raise ToolInputError(f"'complete' needs `ids` of existing tasks (they are: {ids})")
            for i in args.ids:
                known[i].done = True
        if not items:
            return ToolOutput("The todo list is empty.")
        lines = [f"{i.id}. ~~{i.task}~~" if i.done else f"{i.id}. {i.task}" for i in items]
        done = sum(i.done for i in items)
        return ToolOutput(f"Todo ({done}/{len(items)} done):\n" + "\n".join(lines))
