"""``@server.completion``: the server's completer of prompt arguments and template variables.

``completer(ref, argument, context)`` gets what the client is completing: ``ref.type`` is
``"ref/prompt"`` (``ref.name``) or ``"ref/resource"`` (``ref.uri``, the template),
``argument.name`` and ``argument.value`` (what was typed so far), and ``context.arguments`` (the
values already chosen for the others). It returns the suggestions (strings), or ``None`` for
those of the argument's declared type (``Literal``, ``Enum``, ``bool``); an object with a
``values`` attribute (the official SDK's ``Completion``) works too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcpline._results import ToolResult
from mcpline._startup import Value


class Reference(Value):
    """What is being completed: ``type`` ``"ref/prompt"`` with ``name``, or ``"ref/resource"``
    with ``uri`` (the URI template)."""

    __slots__ = ("name", "type", "uri")
    type: str
    name: str | None
    uri: str | None


class Argument(Value):
    """The argument (or template variable) being completed, and what was typed so far."""

    __slots__ = ("name", "value")
    name: str
    value: str


class CompletionContext(Value):
    """The values already chosen for the other arguments."""

    __slots__ = ("arguments",)
    arguments: dict[str, str]


def values_of(made: Any) -> list[str] | None:
    """What a completer returned, as suggestions (``None``: the declared ones)."""
    if made is None:
        return None
    made = getattr(made, "values", made)
    if isinstance(made, str):
        return [made]
    return [str(value) for value in made]


def as_completer(func: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
    """``func`` made into what the core runs for ``completion/complete``."""

    def called_with(
        ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]
    ) -> tuple[Reference, Argument, CompletionContext]:
        return (
            Reference(type=ref.get("type", ""), name=ref.get("name"), uri=ref.get("uri")),
            Argument(name=argument.get("name", ""), value=argument.get("value", "")),
            CompletionContext(arguments=dict(context.get("arguments") or {})),
        )

    if is_async:
        run_async: Callable[..., Awaitable[Any]] = func

        async def complete_async(
            ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]
        ) -> ToolResult:
            made = await run_async(*called_with(ref, argument, context))
            return ToolResult(structured={"values": values_of(made)})

        return complete_async

    def complete(
        ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]
    ) -> ToolResult:
        made = func(*called_with(ref, argument, context))
        return ToolResult(structured={"values": values_of(made)})

    return complete
