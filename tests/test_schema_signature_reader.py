"""Parameters are read from a plain function's code object (no `inspect` import at start-up);
what that reading finds must be exactly what ``inspect.signature`` reports."""

from __future__ import annotations

import functools
import inspect
from typing import Any

import pytest
from mcpline._introspect import EMPTY, signature


def positional_only(a: int, b: str = "x", /, c: float = 1.0) -> None: ...


def keyword_only(a: int, *, b: str, c: int = 3) -> str:
    return ""


def var_positional(a: int, *rest: int, flag: bool = False) -> None: ...


def var_keyword(a: int, **extra: Any) -> None: ...


def everything(p: int, /, q: str, *args: int, k: float = 2.0, **kw: str) -> dict[str, int]:
    return {}


def unannotated(a, b=2, *c, d=4, **e):  # type: ignore[no-untyped-def]
    return a


def with_locals(a: int) -> int:
    local_one = a + 1
    local_two = local_one * 2
    return local_two


async def coroutine(a: int, b: str = "z") -> str:
    return b


class Holder:
    def method(self, a: int, b: int = 2) -> int:
        return a + b

    def star_self(*args: int) -> None: ...


lambda_tool = lambda a, b=3: a  # noqa: E731

CASES = [
    positional_only,
    keyword_only,
    var_positional,
    var_keyword,
    everything,
    unannotated,
    with_locals,
    coroutine,
    lambda_tool,
    Holder().method,
    Holder().star_self,
]


def expected(fn: Any) -> tuple[list[tuple[str, str, Any, Any]], Any]:
    sig = inspect.signature(fn)
    params = [
        (
            p.name,
            p.kind.name,
            EMPTY if p.default is p.empty else p.default,
            EMPTY if p.annotation is p.empty else p.annotation,
        )
        for p in sig.parameters.values()
    ]
    returns = EMPTY if sig.return_annotation is sig.empty else sig.return_annotation
    return params, returns


@pytest.mark.parametrize("fn", CASES, ids=lambda fn: getattr(fn, "__name__", repr(fn)))
def test_code_object_reading_matches_inspect_signature(fn: Any) -> None:
    params, returns = signature(fn)
    got = [(p.name, p.kind, p.default, p.annotation) for p in params]
    assert (got, returns) == expected(fn)


def test_decorated_functions_follow_wrapped_like_inspect() -> None:
    @functools.wraps(keyword_only)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return keyword_only(*args, **kwargs)

    params, returns = signature(wrapper)
    got = [(p.name, p.kind, p.default, p.annotation) for p in params]
    assert (got, returns) == expected(wrapper)
    assert [p.name for p in params] == ["a", "b", "c"]  # the wrapped function's, not *args


def test_partials_and_callable_objects_go_through_inspect() -> None:
    part = functools.partial(everything, 1)

    class Callable:
        def __call__(self, x: int, y: str = "") -> None: ...

    for fn in (part, Callable()):
        params, returns = signature(fn)
        got = [(p.name, p.kind, p.default, p.annotation) for p in params]
        assert (got, returns) == expected(fn)


def test_a_method_without_a_self_parameter_is_refused_like_inspect() -> None:
    class Broken:
        def nothing() -> None: ...  # type: ignore[misc]

    bound = Broken().nothing
    with pytest.raises(ValueError):
        inspect.signature(bound)
    with pytest.raises(ValueError):
        signature(bound)
