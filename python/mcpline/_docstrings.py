"""Docstrings as tool and parameter descriptions: Google-style sections and Sphinx fields.

``parse_docstring`` splits a docstring into the tool's description (without its ``Args:``,
``Returns:`` and ``Raises:`` sections), per-parameter descriptions and the text about the
return value. A one-line docstring is returned as it is, without compiling a pattern.
"""

from __future__ import annotations

from mcpline._startup import re

__all__ = ["cleandoc", "parse_docstring"]

_SECTION_RE = r"^(?P<indent>[ \t]*)(?P<title>[A-Za-z][A-Za-z ]*?)[ \t]*:[ \t]*$"
_PARAM_SECTIONS = frozenset(
    {
        "args",
        "arguments",
        "parameters",
        "params",
        "keyword args",
        "keyword arguments",
        "other parameters",
    }
)
_RETURN_SECTIONS = frozenset({"returns", "return", "yields", "yield"})
_DROPPED_SECTIONS = frozenset({"raises", "raise", "exceptions"})
_ARG_RE = r"^\*{0,2}(?P<name>[A-Za-z_]\w*)[ \t]*(?:\([^)]*\))?[ \t]*:(?P<text>.*)$"
_SPHINX_RE = (
    r"^(?P<indent>[ \t]*):(?P<kind>param|parameter|arg|argument|key|keyword|type|returns?|"
    r"rtype|raises?|except|exception|yields?)\b(?P<rest>[^:]*):(?P<text>.*)$"
)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def cleandoc(doc: str) -> str:
    """``inspect.cleandoc``: tabs expanded, the common indentation of the lines after the first
    removed, leading and trailing blank lines dropped."""
    lines = doc.expandtabs().split("\n")
    margins = [len(line) - len(line.lstrip()) for line in lines[1:] if line.lstrip()]
    margin = min(margins, default=0)
    lines = [lines[0].lstrip()] + [line[margin:] for line in lines[1:]]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str], str | None]:
    """Return (description without sections, parameter descriptions, returns text)."""
    if not doc or not doc.strip():
        return None, {}, None
    cleaned = cleandoc(doc)
    if "\n" not in cleaned and not cleaned.rstrip().endswith(":") and not cleaned.startswith(":"):
        return cleaned.rstrip(), {}, None  # one line: no section, no field
    lines = cleaned.splitlines()
    kept: list[str] = []
    params: dict[str, str] = {}
    returns: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        section = re.match(_SECTION_RE, line)
        title = section["title"].lower() if section else ""
        if section and title in _PARAM_SECTIONS | _RETURN_SECTIONS | _DROPPED_SECTIONS:
            indent = len(section["indent"])
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > indent):
                j += 1
            body = lines[i + 1 : j]
            if title in _PARAM_SECTIONS:
                params.update(_parse_arg_entries(body))
            elif title in _RETURN_SECTIONS:
                returns.extend(b.strip() for b in body if b.strip())
            i = j
            continue
        field = re.match(_SPHINX_RE, line)
        if field:
            indent = len(field["indent"])
            text = [field["text"].strip()]
            j = i + 1
            while j < len(lines) and lines[j].strip() and _indent(lines[j]) > indent:
                text.append(lines[j].strip())
                j += 1
            joined = " ".join(t for t in text if t)
            kind = field["kind"]
            rest = field["rest"].split()
            if kind in ("param", "parameter", "arg", "argument", "key", "keyword") and rest:
                if joined:
                    params[rest[-1]] = joined
            elif kind in ("return", "returns") and joined:
                returns.append(joined)
            i = j
            continue
        kept.append(line)
        i += 1

    kept_text = "\n".join(line.rstrip() for line in kept).strip("\n")
    description = re.sub(r"\n{3,}", "\n\n", kept_text)  # blank lines left by removed sections
    return description or None, params, " ".join(returns) or None


def _parse_arg_entries(body: list[str]) -> dict[str, str]:
    entries: dict[str, list[str]] = {}
    nonblank = [line for line in body if line.strip()]
    if not nonblank:
        return {}
    entry_indent = min(_indent(line) for line in nonblank)
    current: list[str] | None = None
    for line in nonblank:
        match = re.match(_ARG_RE, line.strip()) if _indent(line) == entry_indent else None
        if match:
            current = entries.setdefault(match["name"], [])
            current.append(match["text"].strip())
        elif current is not None:
            current.append(line.strip())
    joined = {name: " ".join(p for p in parts if p) for name, parts in entries.items()}
    return {name: text for name, text in joined.items() if text}
