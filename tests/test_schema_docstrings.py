"""describe(): the tool and parameter descriptions come from the docstring and Annotated."""

from typing import Annotated, Any

import pytest
from mcpline._tool import describe


def properties(fn: Any) -> dict[str, Any]:
    return describe(fn).input_schema["properties"]  # type: ignore[no-any-return]


def test_one_line_docstring_is_the_description() -> None:
    def tool(a: int) -> None:
        """Count the words in a UTF-8 text file."""

    assert describe(tool).description == "Count the words in a UTF-8 text file."


def test_function_without_docstring_has_no_description() -> None:
    def tool(a: int) -> None: ...

    shape = describe(tool)
    assert shape.description is None
    assert "description" not in shape.input_schema["properties"]["a"]


def test_summary_and_body_are_kept_and_dedented() -> None:
    def tool() -> None:
        """Summarise a folder.

        Walks the folder recursively.
            Indented detail stays indented.

        Symlinks are not followed.
        """

    assert describe(tool).description == (
        "Summarise a folder.\n\n"
        "Walks the folder recursively.\n"
        "    Indented detail stays indented.\n\n"
        "Symlinks are not followed."
    )


def test_args_returns_and_raises_sections_are_removed_from_the_description() -> None:
    def tool(path: str) -> int:
        """Count lines.

        Args:
            path: The file to read.

        Returns:
            The number of lines.

        Raises:
            FileNotFoundError: When the file is missing.

        Example:
            count("a.txt")
        """
        return 0

    description = describe(tool).description
    assert description == 'Count lines.\n\nExample:\n    count("a.txt")'


def test_docstring_made_only_of_sections_gives_no_description() -> None:
    def tool(path: str) -> None:
        """
        Args:
            path: The file to read.
        """

    shape = describe(tool)
    assert shape.description is None
    assert shape.input_schema["properties"]["path"]["description"] == "The file to read."


def test_args_entries_describe_parameters_with_or_without_a_type() -> None:
    def tool(path: str, limit: int = 3, verbose: bool = False) -> None:
        """Read a file.

        Args:
            path (str): Path relative to the root.
            limit (int, optional): Lines to return.
            verbose: Include line numbers.
        """

    props = properties(tool)
    assert props["path"]["description"] == "Path relative to the root."
    assert props["limit"] == {"type": "integer", "description": "Lines to return.", "default": 3}
    assert props["verbose"]["description"] == "Include line numbers."


def test_indented_continuation_lines_are_joined() -> None:
    def tool(pattern: str, root: str) -> None:
        """Search.

        Args:
            pattern: A glob pattern such as
                ``*.py``, matched against
                relative paths.
            root:
                Where to start.
        """

    props = properties(tool)
    assert props["pattern"]["description"] == (
        "A glob pattern such as ``*.py``, matched against relative paths."
    )
    assert props["root"]["description"] == "Where to start."


@pytest.mark.parametrize("header", ["Arguments:", "Parameters:", "Keyword Args:"])
def test_alternative_argument_section_headers_are_recognised(header: str) -> None:
    def tool(a: int) -> None: ...

    tool.__doc__ = f"Do it.\n\n{header}\n    a: The a.\n"
    shape = describe(tool)
    assert shape.description == "Do it."
    assert shape.input_schema["properties"]["a"]["description"] == "The a."


def test_documented_names_that_are_not_parameters_are_ignored() -> None:
    def tool(a: int) -> None:
        """Do it.

        Args:
            a: The a.
            b: Not a parameter.
            *args: Not accepted either.
        """

    assert list(properties(tool)) == ["a"]
    assert properties(tool)["a"]["description"] == "The a."


def test_annotated_description_wins_over_the_docstring() -> None:
    def tool(path: Annotated[str, "From Annotated."], mode: str = "r") -> None:
        """Open.

        Args:
            path: From the docstring.
            mode: The mode.
        """

    props = properties(tool)
    assert props["path"]["description"] == "From Annotated."
    assert props["mode"]["description"] == "The mode."


def test_annotated_metadata_with_a_description_attribute_is_used() -> None:
    class FieldInfo:
        description = "Described by an object."

    def tool(a: Annotated[int, FieldInfo()]) -> None: ...

    assert properties(tool)["a"]["description"] == "Described by an object."


def test_parameter_description_overrides_the_description_of_its_type() -> None:
    from dataclasses import dataclass

    @dataclass
    class Window:
        """A rectangle on screen."""

        width: int

    def tool(window: Window) -> None:
        """Resize.

        Args:
            window: The window to resize.
        """

    assert properties(tool)["window"]["description"] == "The window to resize."


def test_explicit_description_replaces_the_docstring_but_keeps_argument_docs() -> None:
    def tool(a: int) -> None:
        """Docstring summary.

        Args:
            a: The a.
        """

    shape = describe(tool, description="Explicit text.")
    assert shape.description == "Explicit text."
    assert shape.input_schema["properties"]["a"]["description"] == "The a."


def test_sphinx_fields_describe_parameters_and_are_removed() -> None:
    def tool(path: str, count: int) -> list[str]:
        """Read lines.

        :param path: The file.
        :param int count: How many lines,
            from the top.
        :type path: str
        :returns: The lines.
        :raises OSError: On failure.
        """
        return []

    shape = describe(tool)
    assert shape.description == "Read lines."
    props = shape.input_schema["properties"]
    assert props["path"]["description"] == "The file."
    assert props["count"]["description"] == "How many lines, from the top."


def test_returns_section_describes_a_wrapped_result() -> None:
    def tool(path: str) -> int:
        """Count lines.

        Returns:
            The number of lines
            in the file.
        """
        return 0

    output = describe(tool).output_schema
    assert output is not None
    assert output["properties"]["result"] == {
        "type": "integer",
        "description": "The number of lines in the file.",
    }
