"""What keeps ``import mcpline`` and a server's start-up cheap, written down once.

An MCP host spawns the server and waits for its ``initialize`` answer before the user can do
anything, so start-up is latency users feel; the bar is a plain standard-library loop
(``bench/``). The rule, pinned by ``tests/test_api_import_cost.py``:

* ``import mcpline`` loads no extension module (``mcpline._core``), ``asyncio``, ``json`` or
  pydantic: the public names resolve on first access (``mcpline.__getattr__``).
* Defining a ``Server`` and registering tools whose parameters are JSON types (``int``,
  ``str``, ``list[str]``, ``dict[str, int]``, ``X | None`` ...) with one-line docstrings
  imports none of ``typing``, ``inspect``, ``dataclasses``, ``re``, ``enum``, ``collections``,
  ``signal``, ``asyncio`` or pydantic. Each costs a millisecond or more (``typing`` alone
  brings ``re``, ``collections`` and ``functools``); together they cost more than the rest of
  start-up. Nor ``types`` or ``math``, which cost 0.3 and 0.2 ms.

How the package keeps it, with the names this module offers:

* ``TYPE_CHECKING``: import it from here, not from ``typing``, to guard imports that only
  annotations need (mypy treats a name ``TYPE_CHECKING`` as true wherever it comes from).
* ``typing``, ``inspect``, ``dataclasses``, ``re`` and ``abc`` (``collections.abc``):
  the real modules to a type checker, lazy proxies at run time. Write
  ``from mcpline._startup import typing`` and use ``typing.get_type_hints(...)`` as usual: the
  module is imported on the first attribute access, so only on the paths that need it.
* ``loaded(module, name)``: recognise a value without importing its module, e.g.
  ``isinstance(x, loaded("enum", "Enum"))``. Nothing can be an instance of a class from a
  module nobody imported, so an absent module yields a class nothing is an instance of.
* ``import_module``: ``importlib.import_module`` without importing ``importlib``.
* ``signal``: the C module ``_signal`` (``signal`` itself wraps it in enums).
* ``FunctionType``, ``MethodType``, ``GenericAlias`` and ``UnionType``: the classes ``types``
  names, made here as ``types`` makes them, from values of them (importing ``types`` costs
  0.3 ms).
* ``isfinite``: ``math.isfinite`` for floats, without loading the ``math`` extension.
* ``Value``: the base of small immutable records, instead of ``dataclasses``.

Code needed only on rarer paths (argument conversion, the ``async`` runner, the CLI, the
testing client) is ordinary Python imported where it is first used.
"""

from __future__ import annotations

import sys

__all__ = [
    "TYPE_CHECKING",
    "FunctionType",
    "GenericAlias",
    "MethodType",
    "UnionType",
    "Value",
    "abc",
    "dataclasses",
    "import_module",
    "inspect",
    "isfinite",
    "loaded",
    "re",
    "signal",
    "typing",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    import dataclasses
    import inspect
    import re
    import signal
    import typing
    from collections import abc
    from types import FunctionType, GenericAlias, MethodType, ModuleType, UnionType
    from typing import Any

    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: object) -> object:
        """At run time a no-op; to a type checker, ``typing.dataclass_transform``."""
        return lambda cls: cls


def import_module(name: str) -> ModuleType:
    """``importlib.import_module`` for an absolute name, without importing ``importlib`` (which
    brings ``warnings``)."""
    module = sys.modules.get(name)
    if module is None:
        __import__(name)
        module = sys.modules[name]
    return module


class _LazyModule:
    """A standard module imported on first attribute access."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


if not TYPE_CHECKING:
    import _signal as signal

    class _Methods:
        def method(self) -> None:
            """A method, to take the class of bound methods from."""

    FunctionType = type(import_module)
    MethodType = type(_Methods().method)
    GenericAlias = type(list[int])
    UnionType = type(int | None)

    dataclasses = _LazyModule("dataclasses")
    inspect = _LazyModule("inspect")
    re = _LazyModule("re")
    typing = _LazyModule("typing")
    abc = _LazyModule("collections.abc")


_INFINITY = float("inf")


def isfinite(value: float) -> bool:
    """Whether a float is neither infinite nor NaN (``math.isfinite``)."""
    return -_INFINITY < value < _INFINITY


class _Absent:
    """What ``loaded`` returns for a module not imported: no value is an instance of it."""


def loaded(module: str, name: str) -> Any:
    """``module.name`` if ``module`` is already imported (and has it), else a class that
    nothing is an instance or a subclass of."""
    return getattr(sys.modules.get(module), name, _Absent)


@dataclass_transform(kw_only_default=True, frozen_default=True)
class Value:
    """An immutable value: its fields are its ``__slots__``, which ``==``, ``hash`` and ``repr``
    use. A subclass declares ``__slots__`` and annotates each field; its constructor takes every
    field as a keyword (type-checked like a frozen dataclass's), unless it defines its own
    ``__init__`` that calls ``self._init``."""

    __slots__: tuple[str, ...] = ()

    def __init__(self, **fields: Any) -> None:
        missing = [name for name in self.__slots__ if name not in fields]
        if missing:
            raise TypeError(f"{type(self).__name__}() missing fields: {', '.join(missing)}")
        self._init(**fields)

    def _init(self, **fields: Any) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Value)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash((type(self), self._fields()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({shown})"
