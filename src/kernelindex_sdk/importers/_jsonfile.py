"""A foreign tool's JSON file, read whole, with the line of any JSON pointer on demand.

Other tools write what their JSON library writes. Google Benchmark writes ``NaN`` and
``Infinity`` for a counter it could not compute, and Python's json does the same for
pytest-benchmark: such a literal is read as the float it names (a record keeps it as
text, see :func:`kernelindex_sdk.importers._keys.metric_value`), not refused with the
whole file. A key repeated in one object is refused: two readers could see two files.
"""

from __future__ import annotations

import codecs
import json
from typing import Any, Final

import attrs

from .._base.display import short_repr
from .._json.places import places
from ..errors import InputError

__all__ = ["MAX_FILE_BYTES", "FileRejectedError", "JsonFile", "array_at", "load_json", "object_at"]

#: The largest file read (a file of the tools' output is a few MiB; this stops
#: ``/dev/zero`` before it exhausts memory).
MAX_FILE_BYTES: Final = 1 << 30
_MAX_INT_DIGITS: Final = 4300
_BOMS: Final = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


class FileRejectedError(Exception):
    """The whole file cannot be read as the format: its line and why."""

    def __init__(self, reason: str, line: int = 1) -> None:
        super().__init__(reason)
        self.reason, self.line = reason, line


@attrs.define
class JsonFile:
    """A parsed JSON file: its value, and the line where a pointer's value starts."""

    value: Any
    text: str

    def line(self, pointer: str) -> int | None:
        """The 1-based line of the value at ``pointer``, or None when it is not found.

        Only a rejected entry asks, so the text is read afresh each time, only as far as
        the pointer's value.
        """
        found = places(self.text, (pointer,)).get(pointer)
        return None if found is None else found[0]


def object_at(parent: Any, key: str) -> dict[str, Any]:
    """``parent[key]`` when both are JSON objects, else an empty object: a context part
    a file leaves out (or writes as another type) says nothing."""
    if isinstance(parent, dict):
        value = parent.get(key)
        if isinstance(value, dict):
            return value
    return {}


def array_at(parent: dict[str, Any], key: str) -> list[Any]:
    """``parent[key]`` as a list: an absent key or null is an empty one.

    Raises:
        ValueError: when it is another type (the entry cannot be read).
    """
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{key} is {short_repr(value)}, expected an array")  # noqa: TRY004 (an entry's content)
    return value


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"key {short_repr(key)} appears twice in one object")
        result[key] = value
    return result


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text)} digits")
    return int(text)


def load_json(source: str) -> JsonFile:
    """Read and parse ``source``.

    Raises:
        InputError: when the file cannot be opened or read.
        FileRejectedError: for text that is not UTF-8 JSON (with the line where known),
            a repeated key, a file over :data:`MAX_FILE_BYTES`, or nesting too deep.
    """
    try:
        with open(source, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise InputError.from_os_error(source, err) from err
    if len(data) > MAX_FILE_BYTES:
        raise FileRejectedError(f"larger than {MAX_FILE_BYTES} bytes; stopped reading")
    for bom, name in _BOMS:
        if data.startswith(bom):
            raise FileRejectedError(f"the file is {name} text; expected UTF-8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise FileRejectedError(
            f"not UTF-8: bytes {data[err.start : err.start + 4]!r}", line
        ) from None
    if not text.strip(" \t\r\n"):
        raise FileRejectedError("the file is empty")
    try:
        value = json.loads(text, object_pairs_hook=_unique, parse_int=_integer)
    except json.JSONDecodeError as err:
        raise FileRejectedError(f"not JSON: {err.msg} (column {err.colno})", err.lineno) from None
    except RecursionError:
        raise FileRejectedError("nested too deeply to read") from None
    except ValueError as err:
        raise FileRejectedError(f"not JSON: {err}") from None
    return JsonFile(value, text)
