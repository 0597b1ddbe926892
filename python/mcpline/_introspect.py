"""Reading a callable and its annotations: the parameters, the name, ``async``, and types.

``signature(fn)`` reads a plain function's parameters from its code object, exactly as
``inspect.signature`` reports them (``tests/test_schema_signature_reader.py`` compares the two);
anything else goes through ``inspect``. ``get_origin``/``get_args`` take annotations apart as
``typing``'s functions of the same names do, and ``resolve`` evaluates string annotations.

The plain-type shortcut (``_parts``) lives here: ``None``, plain classes, builtin generics
such as ``list[int]`` and unions written ``A | B`` are read directly; only ``typing`` forms
(``Annotated``, ``Literal``, ``Optional`` ...) need ``typing``.
"""

from __future__ import annotations

import sys

from mcpline._startup import (
    TYPE_CHECKING,
    FunctionType,
    GenericAlias,
    MethodType,
    UnionType,
    inspect,
    loaded,
    re,
    typing,
)

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "EMPTY",
    "NONE_TYPE",
    "CallableInfo",
    "Param",
    "annotated_description",
    "evaluate",
    "format_annotation",
    "get_args",
    "get_origin",
    "is_plain_class",
    "is_plain_json",
    "resolve",
    "signature",
    "typing_forms",
    "union_origins",
]

NONE_TYPE = type(None)


class _Empty:
    """No annotation, or no default (what ``inspect.Parameter.empty`` stands for)."""


EMPTY: Any = _Empty

# Code object flags (the `inspect` constants of the same names).
_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08
_CO_GENERATOR = 0x20
_CO_COROUTINE = 0x80
_CO_ASYNC_GENERATOR = 0x200


# --------------------------------------------------------------------------------------------
# Callables


class CallableInfo:
    """The name, docstring, ``async``-ness and globals (for string annotations) of a callable:
    a function, a method, a ``functools.partial``, a class or an object with ``__call__``.
    ``label`` names it in error messages."""

    __slots__ = ("doc", "globalns", "is_async", "label", "name", "yields")

    def __init__(self, fn: Any) -> None:
        inner: Any = fn
        while isinstance(inner, loaded("functools", "partial")):
            inner = inner.func
        if isinstance(inner, type):
            self.name: str = inner.__name__
            self.doc: str | None = inner.__doc__
            code_owner: Any = getattr(inner, "__init__", inner)
            self.is_async = False
        elif _is_plain_function(inner) or inspect.isroutine(inner):
            self.name = getattr(inner, "__name__", "")
            self.doc = getattr(inner, "__doc__", None)
            code_owner = inner
            self.is_async = _is_coroutine_function(fn)
        elif callable(inner):
            call = type(inner).__call__
            self.name = type(inner).__name__
            self.doc = getattr(call, "__doc__", None) or type(inner).__doc__
            code_owner = call
            self.is_async = _is_coroutine_function(fn) or _is_coroutine_function(call)
        else:
            raise TypeError(f"cannot describe {fn!r}: it is not callable")
        # A generator function (sync or async): calling it runs nothing, it returns an iterator.
        self.yields = _is_generator_function(code_owner)
        qualname = getattr(inner, "__qualname__", None) or self.name or repr(fn)
        self.label = str(qualname)
        self.globalns = _globals_of(code_owner)


def _is_plain_function(fn: Any) -> bool:
    """A ``def`` function (or lambda) that no decorator marked: nothing in its ``__dict__`` (no
    ``__wrapped__``, ``__signature__`` or coroutine mark), so its code object tells it all."""
    return type(fn) is FunctionType and not fn.__dict__


def _is_coroutine_function(fn: Any) -> bool:
    target = fn.__func__ if type(fn) is MethodType else fn
    if _is_plain_function(target):
        return bool(target.__code__.co_flags & _CO_COROUTINE)
    return inspect.iscoroutinefunction(fn)


def _is_generator_function(fn: Any) -> bool:
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    flags = getattr(code, "co_flags", 0)
    return bool(flags & (_CO_GENERATOR | _CO_ASYNC_GENERATOR))


def _globals_of(obj: Any) -> dict[str, Any]:
    target = getattr(obj, "__func__", obj)
    if hasattr(target, "__wrapped__"):
        try:
            target = inspect.unwrap(target)
        except ValueError:
            pass
    globalns = getattr(target, "__globals__", None)
    if isinstance(globalns, dict):
        return globalns
    module = sys.modules.get(getattr(target, "__module__", None) or "")
    return dict(vars(module)) if module is not None else {}


class Param:
    """One parameter: ``kind`` is the name of an ``inspect.Parameter`` kind."""

    __slots__ = ("annotation", "default", "kind", "name")

    def __init__(self, name: str, kind: str, default: Any, annotation: Any) -> None:
        self.name = name
        self.kind = kind
        self.default = default
        self.annotation = annotation


def signature(fn: Any) -> tuple[list[Param], Any]:
    """The parameters and the return annotation of ``fn``, as ``inspect.signature`` reads them.

    A plain function (or a method bound to one) is read from its code object; anything else
    (decorated, partial, builtin, callable object) goes through ``inspect.signature``.
    """
    bound = type(fn) is MethodType
    target = fn.__func__ if bound else fn
    if not _is_plain_function(target):
        sig = inspect.signature(fn)
        read = [
            Param(
                p.name,
                p.kind.name,
                EMPTY if p.default is p.empty else p.default,
                EMPTY if p.annotation is p.empty else p.annotation,
            )
            for p in sig.parameters.values()
        ]
        returns = sig.return_annotation
        return read, EMPTY if returns is sig.empty else returns
    code = target.__code__
    names = code.co_varnames
    positional = code.co_argcount
    keyword_only = code.co_kwonlyargcount
    annotations = target.__annotations__
    defaults = target.__defaults__ or ()
    kw_defaults = target.__kwdefaults__ or {}
    first_default = positional - len(defaults)
    params: list[Param] = []

    def add(name: str, kind: str, default: Any = EMPTY) -> None:
        params.append(Param(name, kind, default, annotations.get(name, EMPTY)))

    for index, name in enumerate(names[:positional]):
        kind = "POSITIONAL_ONLY" if index < code.co_posonlyargcount else "POSITIONAL_OR_KEYWORD"
        add(name, kind, defaults[index - first_default] if index >= first_default else EMPTY)
    extra = positional + keyword_only
    if code.co_flags & _CO_VARARGS:
        add(names[extra], "VAR_POSITIONAL")
        extra += 1
    for name in names[positional : positional + keyword_only]:
        add(name, "KEYWORD_ONLY", kw_defaults.get(name, EMPTY))
    if code.co_flags & _CO_VARKEYWORDS:
        add(names[extra], "VAR_KEYWORD")
    if bound:
        if not params or params[0].kind == "KEYWORD_ONLY" or params[0].kind == "VAR_KEYWORD":
            raise ValueError("invalid method signature")
        if params[0].kind != "VAR_POSITIONAL":  # `self` is absorbed by *args
            params.pop(0)
    return params, annotations.get("return", EMPTY)


# --------------------------------------------------------------------------------------------
# Annotations


def _parts(tp: Any) -> tuple[Any, tuple[Any, ...]] | None:
    """The plain-type shortcut: ``(origin, args)`` as ``typing.get_origin``/``get_args`` give
    them, for ``None`` and plain classes (``(None, ())``), builtin generics (``list[int]``) and
    ``A | B`` unions; ``None`` for anything else, which only ``typing`` can take apart."""
    kind = type(tp)
    if kind is GenericAlias:
        return tp.__origin__, tp.__args__
    if kind is UnionType:
        return UnionType, tp.__args__
    if tp is None or isinstance(tp, type):
        return None, ()
    return None


def is_plain_class(tp: Any) -> bool:
    """A class that is not a parameterised generic (``list[int]`` passes ``isinstance(type)``
    on Python 3.10)."""
    return isinstance(tp, type) and not isinstance(tp, GenericAlias)


def get_origin(tp: Any) -> Any:
    """``typing.get_origin(tp)``."""
    parts = _parts(tp)
    return parts[0] if parts is not None else typing.get_origin(tp)


def get_args(tp: Any) -> tuple[Any, ...]:
    """``typing.get_args(tp)``."""
    parts = _parts(tp)
    return parts[1] if parts is not None else typing.get_args(tp)


def union_origins() -> tuple[Any, ...]:
    """The origins of ``Union[A, B]``/``Optional[A]`` and of ``A | B``."""
    return (loaded("typing", "Union"), UnionType)


def typing_forms(*names: str) -> tuple[Any, ...]:
    """The ``typing`` and ``typing_extensions`` forms with these names (those imported)."""
    return tuple(
        loaded(module, name) for name in names for module in ("typing", "typing_extensions")
    )


def _holds_no_strings(tp: Any) -> bool:
    """Made of plain types all the way down: no forward reference to evaluate."""
    parts = _parts(tp)
    return parts is not None and all(_holds_no_strings(arg) for arg in parts[1])


_JSON_CLASSES = frozenset({str, int, float, bool, NONE_TYPE, list, dict, object})


def is_plain_json(annotation: Any) -> bool:
    """Whether arguments for ``annotation`` arrive ready to use: JSON's own types (``str``,
    ``int``, ``float``, ``bool``, ``None``, ``list``, ``dict``, ``object``, and ``list[...]``,
    ``dict[...]`` or ``A | B`` of those) need no conversion; anything else may."""
    parts = _parts(annotation)
    if parts is None:
        return False
    tp_origin, tp_args = parts
    if tp_origin is None:
        return annotation is None or annotation in _JSON_CLASSES
    return tp_origin in (list, dict, UnionType) and all(is_plain_json(a) for a in tp_args)


_PROBE_CODE = (lambda: None).__code__
_IDENT_RE = r"[A-Za-z_][\w.]*"


def evaluate(
    annotation: Any, globalns: dict[str, Any], localns: dict[str, Any] | None = None
) -> Any:
    """Evaluate a string annotation (and forward references nested in one) the way
    ``typing.get_type_hints`` does for a function defined in the module ``globalns``."""
    probe = FunctionType(_PROBE_CODE, globalns)
    probe.__annotations__ = {"x": annotation}
    return typing.get_type_hints(probe, localns=localns, include_extras=True)["x"]


def resolve(
    annotation: Any,
    globalns: dict[str, Any],
    label: str,
    what: str,
    context_types: tuple[type, ...],
) -> Any:
    """``annotation`` with string annotations (and nested forward references) evaluated;
    ``TypeError`` naming ``label`` and ``what`` when that fails."""
    if annotation is EMPTY or _holds_no_strings(annotation):
        return annotation
    try:
        return evaluate(annotation, globalns)
    except Exception as exc:
        # ``ctx: Context`` where Context is only imported under TYPE_CHECKING: recognise the
        # context parameter by name rather than failing.
        if isinstance(annotation, str) and context_types:
            names = {t.rsplit(".", 1)[-1] for t in re.findall(_IDENT_RE, annotation)}
            names -= {"None", "Optional", "Annotated", "typing"}
            for ctx in context_types:
                if names == {ctx.__name__}:
                    return ctx
        raise TypeError(
            f"{label}: cannot resolve the annotation {annotation!r} of {what}: "
            f"{type(exc).__name__}: {exc}"
        ) from None


def annotated_description(annotation: Any) -> str | None:
    """The description an ``Annotated[T, "text"]`` (or ``Annotated[T, Field(description=...)]``)
    carries, if any."""
    if get_origin(annotation) is not loaded("typing", "Annotated"):
        return None
    for meta in annotation.__metadata__:
        if isinstance(meta, str):
            return meta
        text = getattr(meta, "description", None)
        if isinstance(text, str) and text:
            return text
    return None


def format_annotation(annotation: Any) -> str:
    """``annotation`` as error messages show it (builtin classes without importing
    ``inspect``: every tool's declared result type is written once at registration)."""
    if isinstance(annotation, (GenericAlias, UnionType)):
        return repr(annotation)  # what inspect.formatannotation writes for these
    if is_plain_class(annotation) and annotation.__module__ == "builtins":
        return str(annotation.__qualname__)
    return inspect.formatannotation(annotation)
