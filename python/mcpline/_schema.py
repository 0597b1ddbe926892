"""Python types as JSON Schema (draft 2020-12), for a tool's arguments and its result.

A ``Builder`` builds the schemas of one document (a tool's input schema, or its output
schema): ``int str float bool None``, ``list[T]``, ``dict[str, T]``, tuples, sets, unions,
``Literal``, ``Enum``, ``TypedDict``, dataclasses, ``Annotated`` descriptions and
constraints (``_constraints``), ``NewType`` and
``type`` aliases, the standard-library types in ``_stdtypes`` (dates, UUIDs, paths, bytes
...), and pydantic models (recognised by ``model_json_schema``, never imported).
Types that refer to themselves go to ``$defs``.
"""

from __future__ import annotations

import sys

from mcpline._constraints import apply_metadata
from mcpline._docstrings import cleandoc
from mcpline._introspect import (
    EMPTY,
    NONE_TYPE,
    annotated_description,
    evaluate,
    format_annotation,
    get_args,
    get_origin,
    is_plain_class,
    typing_forms,
    union_origins,
)
from mcpline._jsonvalue import try_jsonable
from mcpline._startup import TYPE_CHECKING, dataclasses, isfinite, loaded, re, typing
from mcpline._stdtypes import schema_for

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Schema = dict[str, Any]

__all__ = ["Builder", "Unsupported"]


class Unsupported(Exception):
    """An annotation has no JSON Schema equivalent (message says why)."""


_PRIMITIVES: dict[Any, str] = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
}

# The generic origins of each kind of container: the builtins and the `collections.abc`
# classes (an annotation such as `Sequence[int]` cannot exist before that module is imported).
_ORIGINS = {
    "array": ((list,), ("Sequence", "MutableSequence")),
    "set": ((set, frozenset), ("Set", "MutableSet")),
    "mapping": ((dict,), ("Mapping", "MutableMapping")),
}


def _origins(kind: str) -> tuple[Any, ...]:
    builtins, abstract = _ORIGINS[kind]
    return (*builtins, *(loaded("collections.abc", name) for name in abstract))


# --------------------------------------------------------------------------------------------
# What the Builder uses: kinds of classes, enum values, descriptions, $ref renaming


def _explicitly_required(hint: Any) -> bool | None:
    """True for ``Required[...]``, False for ``NotRequired[...]``, None when unmarked."""
    required, not_required = typing_forms("Required"), typing_forms("NotRequired")
    for _ in range(8):
        origin = typing.get_origin(hint) or getattr(hint, "__origin__", None)
        if origin in required:
            return True
        if origin in not_required:
            return False
        if origin is None or origin not in (typing.Annotated, *typing_forms("ReadOnly")):
            return None
        hint = typing.get_args(hint)[0]
    return None


def _is_dataclass_class(tp: type) -> bool:
    """``dataclasses.is_dataclass`` for a class, without importing dataclasses."""
    return hasattr(tp, "__dataclass_fields__")


def _is_typeddict(tp: type) -> bool:
    return (
        issubclass(tp, dict)
        and hasattr(tp, "__required_keys__")
        and hasattr(tp, "__optional_keys__")
    )


def _is_pydantic_model(tp: type) -> bool:
    return callable(getattr(tp, "model_json_schema", None))


def _scalar_json_type(value: Any) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number" if isfinite(value) else None
    if isinstance(value, str):
        return "string"
    return None


def _enum_schema(values: list[Any]) -> Schema:
    kinds: list[str] = []
    for value in values:
        kind = _scalar_json_type(value)
        if kind is None:
            raise Unsupported(f"value {value!r} is not a JSON string, number, boolean or null")
        if kind not in kinds:
            kinds.append(kind)
    if "integer" in kinds and "number" in kinds:
        kinds.remove("integer")
    schema: Schema = {"enum": values}
    if len(kinds) == 1:  # values of several types: the enum alone says it (no type lists)
        schema["type"] = kinds[0]
    return schema


def _class_description(tp: type) -> str | None:
    doc = tp.__dict__.get("__doc__")
    if not isinstance(doc, str) or not doc.strip():
        return None
    if _is_dataclass_class(tp) and doc.startswith(f"{tp.__name__}("):
        return None  # the signature dataclasses writes when there is no docstring
    return cleandoc(doc)


def _rewrite_refs(node: Any, renames: dict[str, str]) -> Any:
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                head, sep, tail = value[len("#/$defs/") :].partition("/")
                value = f"#/$defs/{renames.get(head, head)}{sep}{tail}"
            else:
                value = _rewrite_refs(value, renames)
            out[key] = value
        return out
    if isinstance(node, list):
        return [_rewrite_refs(item, renames) for item in node]
    return node


class Builder:
    """Builds JSON Schemas for one document; recursive types go to ``defs``."""

    def __init__(self, *, output: bool, globalns: dict[str, Any]) -> None:
        self.output = output
        # Where forward references are looked up: the tool's module, then (while describing
        # the fields of a class) that class's module and namespace.
        self._namespaces: list[tuple[dict[str, Any], dict[str, Any] | None]] = [(globalns, None)]
        self.defs: dict[str, Schema] = {}
        self._ref_names: dict[Any, str] = {}
        self._stack: list[Any] = []
        self._used_names: set[str] = set()

    def schema(self, tp: Any) -> Schema:
        if tp is EMPTY or tp is object or tp is loaded("typing", "Any"):
            return {}
        if tp is None or tp is NONE_TYPE:
            return {"type": "null"}
        if is_plain_class(tp):
            primitive = _PRIMITIVES.get(tp)
            return {"type": primitive} if primitive is not None else self._class(tp)
        if tp is loaded("typing", "LiteralString"):
            return {"type": "string"}
        origin = get_origin(tp)
        if origin is not None:
            return self._generic(tp, origin)
        supertype = getattr(tp, "__supertype__", None)  # typing.NewType
        if supertype is not None:
            return self.schema(supertype)
        if type(tp).__name__ == "TypeAliasType" and hasattr(tp, "__value__"):  # `type X = ...`
            return self._named(tp, lambda alias: self.schema(alias.__value__))
        if isinstance(tp, (str, typing.ForwardRef)):
            # Python 3.10's get_type_hints leaves strings nested in builtin generics
            # (list["Node"]) unevaluated; evaluate them here.
            return self.schema(self._evaluate(tp))
        if isinstance(tp, typing.TypeVar):
            raise Unsupported(f"type variables such as {tp!r} have no JSON Schema")
        raise Unsupported(f"{tp!r} has no JSON Schema equivalent")

    # -- generic aliases -------------------------------------------------------------------

    def _generic(self, tp: Any, origin: Any) -> Schema:
        args = get_args(tp)
        if origin is loaded("typing", "Annotated"):
            schema = apply_metadata(self.schema(args[0]), tp.__metadata__)
            text = annotated_description(tp)
            return {**schema, "description": text} if text else schema
        if origin in union_origins():
            return self._union(args)
        if origin is loaded("typing", "Literal"):
            enum_class = loaded("enum", "Enum")
            return _enum_schema([a.value if isinstance(a, enum_class) else a for a in args])
        if origin in _origins("array"):
            return self._array(args)
        if origin in _origins("set"):
            return {**self._array(args), "uniqueItems": True}
        if origin is tuple:
            return self._tuple(args)
        if origin in _origins("mapping"):
            return self._mapping(args)
        if origin in typing_forms("Required", "NotRequired", "ReadOnly"):
            return self.schema(args[0])
        if isinstance(origin, type) and (_is_dataclass_class(origin) or _is_typeddict(origin)):
            raise Unsupported(
                f"generic {origin.__qualname__}[...] is not supported; use a concrete class"
            )
        raise Unsupported(f"{format_annotation(tp)} has no JSON Schema equivalent")

    def _array(self, args: tuple[Any, ...]) -> Schema:
        if not args:
            return {"type": "array"}
        return {"type": "array", "items": self.schema(args[0])}

    def _tuple(self, args: tuple[Any, ...]) -> Schema:
        if not args:
            return {"type": "array"}
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": self.schema(args[0])}
        return {
            "type": "array",
            "prefixItems": [self.schema(a) for a in args],
            "minItems": len(args),
            "maxItems": len(args),
        }

    def _mapping(self, args: tuple[Any, ...]) -> Schema:
        if not args:
            return {"type": "object"}
        key, value = args
        try:
            key_schema = self.schema(key)
        except Unsupported:
            key_schema = {"type": "unsupported"}
        if key_schema and key_schema.get("type") != "string":
            raise Unsupported(
                f"dictionary keys must be str because JSON object keys are strings; got "
                f"{format_annotation(key)} keys"
            )
        schema: Schema = {"type": "object", "additionalProperties": self.schema(value)}
        if "enum" in key_schema:
            schema["propertyNames"] = key_schema
        return schema

    def _union(self, args: tuple[Any, ...]) -> Schema:
        """Every union (``T | None`` included) is ``anyOf``, the one form all clients read."""
        members: list[Schema] = []
        for arg in args:
            member = self.schema(arg)
            if member not in members:
                members.append(member)
        return members[0] if len(members) == 1 else {"anyOf": members}

    # -- classes ---------------------------------------------------------------------------

    def _class(self, tp: type) -> Schema:
        if issubclass(tp, loaded("enum", "Enum")):
            members: Any = tp
            try:
                return _enum_schema([member.value for member in members])
            except Unsupported as exc:
                raise Unsupported(f"enum {tp.__qualname__}: {exc}") from None
        if _is_typeddict(tp):
            return self._named(tp, self._typeddict)
        if _is_dataclass_class(tp):
            return self._named(tp, self._dataclass)
        if _is_pydantic_model(tp):
            return self._pydantic(tp)
        if tp is list or tp is tuple:
            return {"type": "array"}
        if tp is set or tp is frozenset:
            return {"type": "array", "uniqueItems": True}
        if tp is dict:
            return {"type": "object"}
        special = schema_for(tp, output=self.output)
        if special is not None:
            return special
        raise Unsupported(
            f"{tp.__qualname__} is not a dataclass, TypedDict, Enum or pydantic model"
        )

    def _class_hints(self, tp: type) -> dict[str, Any]:
        try:
            return typing.get_type_hints(tp, include_extras=True)
        except Exception as exc:
            raise Unsupported(
                f"cannot resolve the annotations of {tp.__qualname__}: {type(exc).__name__}: {exc}"
            ) from None

    def _field(self, owner: type, field: str, annotation: Any) -> Schema:
        try:
            return self.schema(annotation)
        except Unsupported as exc:
            raise Unsupported(
                f"field {owner.__qualname__}.{field} ({format_annotation(annotation)}): {exc}"
            ) from None

    def _evaluate(self, ref: str | typing.ForwardRef) -> Any:
        text = ref if isinstance(ref, str) else ref.__forward_arg__
        globalns, localns = self._namespaces[-1]
        try:
            value = evaluate(text, globalns, localns)
        except Exception as exc:
            raise Unsupported(
                f"the forward reference {text!r} could not be resolved: {type(exc).__name__}: {exc}"
            ) from None
        if isinstance(value, (str, typing.ForwardRef)):
            raise Unsupported(f"the forward reference {text!r} could not be resolved")
        return value

    def _enter(self, tp: type) -> None:
        module = sys.modules.get(tp.__module__)
        self._namespaces.append((vars(module) if module is not None else {}, dict(vars(tp))))

    def _typeddict(self, tp: type) -> Schema:
        self._enter(tp)
        try:
            return self._typeddict_fields(tp)
        finally:
            self._namespaces.pop()

    def _dataclass(self, tp: type) -> Schema:
        self._enter(tp)
        try:
            return self._dataclass_fields(tp)
        finally:
            self._namespaces.pop()

    def _typeddict_fields(self, tp: type) -> Schema:
        hints = self._class_hints(tp)
        required_keys: frozenset[str] = getattr(tp, "__required_keys__", frozenset(hints))
        properties: dict[str, Schema] = {}
        required: list[str] = []
        for key, annotation in hints.items():
            properties[key] = self._field(tp, key, annotation)
            # __required_keys__ misses Required/NotRequired written as strings (PEP 563).
            marked = _explicitly_required(annotation)
            if marked if marked is not None else key in required_keys:
                required.append(key)
        return self._object(tp, properties, required)

    def _dataclass_fields(self, tp: type) -> Schema:
        hints = self._class_hints(tp)
        properties: dict[str, Schema] = {}
        required: list[str] = []
        for field in dataclasses.fields(tp):
            if not self.output and not field.init:
                continue
            schema = self._field(tp, field.name, hints.get(field.name, field.type))
            if field.default is not dataclasses.MISSING:
                ok, default = try_jsonable(field.default)
                if ok:
                    schema = {**schema, "default": default}
            # Results always carry every field (to_jsonable), arguments may omit defaulted ones.
            if self.output or (
                field.default is dataclasses.MISSING
                and field.default_factory is dataclasses.MISSING
            ):
                required.append(field.name)
            properties[field.name] = schema
        return self._object(tp, properties, required)

    def _object(self, tp: type, properties: dict[str, Schema], required: list[str]) -> Schema:
        schema: Schema = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        text = _class_description(tp)
        if text:
            schema["description"] = text
        return schema

    def _pydantic(self, tp: type) -> Schema:
        model: Any = tp
        mode = "serialization" if self.output else "validation"
        try:
            raw = model.model_json_schema(mode=mode)
        except Exception as exc:
            raise Unsupported(
                f"{tp.__qualname__}.model_json_schema() failed: {type(exc).__name__}: {exc}"
            ) from None
        if not isinstance(raw, dict):
            raise Unsupported(f"{tp.__qualname__}.model_json_schema() did not return a dict")
        schema: Schema = dict(raw)
        incoming = schema.pop("$defs", None)
        if not isinstance(incoming, dict) or not incoming:
            return schema
        clash = any(
            name in self._used_names and self.defs.get(name) != definition
            for name, definition in incoming.items()
        )
        if clash:
            # Rename every incoming name already in use (identical ones too: they may refer
            # to a definition that is itself being renamed).
            renames = {
                name: self._fresh_name(name) if name in self._used_names else name
                for name in incoming
            }
            schema = _rewrite_refs(schema, renames)
            incoming = {renames[k]: _rewrite_refs(v, renames) for k, v in incoming.items()}
        for def_name, definition in incoming.items():
            self._used_names.add(def_name)
            self.defs.setdefault(def_name, definition)
        return schema

    # -- recursion -------------------------------------------------------------------------

    def _named(self, tp: Any, build: Callable[[Any], Schema]) -> Schema:
        """Inline ``tp`` unless it refers to itself; then emit ``$defs`` + ``$ref``."""
        name = self._ref_names.get(tp)
        if name is not None:
            return {"$ref": f"#/$defs/{name}"}
        if tp in self._stack:
            name = self._fresh_name(str(getattr(tp, "__name__", "Type")))
            self._ref_names[tp] = name
            return {"$ref": f"#/$defs/{name}"}
        self._stack.append(tp)
        try:
            schema = build(tp)
        finally:
            self._stack.pop()
        name = self._ref_names.get(tp)
        if name is None:
            return schema
        self.defs[name] = schema
        return {"$ref": f"#/$defs/{name}"}

    def _fresh_name(self, base: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", base) or "Type"
        name, counter = base, 1
        while name in self._used_names or name in self.defs:
            counter += 1
            name = f"{base}{counter}"
        self._used_names.add(name)
        return name
