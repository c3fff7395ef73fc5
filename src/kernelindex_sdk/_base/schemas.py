"""The packaged JSON Schemas: where they are, and which one fits a document."""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from ..errors import InputError
from . import arguments as _arguments
from .files import ensure_folder, refuse_overwriting_inputs, write_text_atomic

API_VERSION: Final = "kernelindex.dev/v1alpha1"
#: The largest integer a double holds exactly (2^53 - 1): the bound of every integer
#: field, and of integers in a digest (RFC 8785). The one copy; others import it.
SAFE_INT: Final = 2**53 - 1
BASE_URI: Final = "https://kernelindex.dev/schemas/v1alpha1/"
BUNDLE: Final = "RecordBundle"

# Kind name -> schema file. A bundle has no `kind` of its own; it is recognized by shape.
SCHEMA_FILES: Final = {
    "BenchmarkRun": "benchmark-run.json",
    "BenchmarkProtocol": "benchmark-protocol.json",
    "ExecutionEnvironment": "execution-environment.json",
    BUNDLE: "bundle.json",
}
SUPPORTED_API_VERSIONS: Final = (API_VERSION,)


def schema_dir() -> Path:
    """Return the folder that holds the v1alpha1 schema files.

    A wheel carries them inside the package; a source checkout (editable install)
    keeps the one copy at the repository's top.
    """
    # This module lives in kernelindex_sdk/_base/: the package is one folder up.
    here = Path(__file__).resolve().parents[1]
    for candidate in (here / "schemas" / "v1alpha1", here.parents[1] / "schemas" / "v1alpha1"):
        if (candidate / "common.json").is_file():
            return candidate
    raise FileNotFoundError(f"kernelindex_sdk's schemas are missing beside {here}")


def _embedded(key: str) -> bool:
    # Under `$defs`, a schema file's name keys the copy of that file embedded in another;
    # the schemas' own definitions have names without a dot.
    return key.endswith(".json")


def _own_part(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema file without the copies of other files it embeds: what was written by hand."""
    defs = schema.get("$defs")
    if not isinstance(defs, dict) or not any(_embedded(key) for key in defs):
        return schema
    own = {key: value for key, value in defs.items() if not _embedded(key)}
    if own:
        # Back in its place among the keys, as written.
        return {key: (own if key == "$defs" else value) for key, value in schema.items()}
    return {key: value for key, value in schema.items() if key != "$defs"}


@functools.cache
def load_schemas() -> dict[str, dict[str, Any]]:
    """Return every packaged schema document, keyed by file name, as written by hand.

    Each file as shipped also embeds a copy of every file it refers to (see
    :func:`published_schemas`); those copies are left out here, so that every file's
    ``$ref``s resolve through a registry of all of them, one resource per file.
    """
    folder = schema_dir()
    return {
        path.name: _own_part(json.loads(path.read_text(encoding="utf-8")))
        for path in sorted(folder.glob("*.json"))
    }


def published_schemas() -> dict[str, str]:
    """Return the text of every schema file as shipped, keyed by file name.

    Each file is a JSON Schema 2020-12 compound document that embeds every file it
    refers to (:func:`self_contained_schema`), so any one of them validates offline in
    any validator; ``python -m codegen`` writes them so from the hand-written parts, and
    ``python -m codegen --check`` fails when a file differs.

    Returns:
        File name -> text: two-space JSON with a final newline (:func:`schema_text`).
    """
    kinds = {name: kind for kind, name in SCHEMA_FILES.items()}
    return {
        name: schema_text(self_contained_schema(kinds[name]) if name in kinds else schema)
        for name, schema in load_schemas().items()
    }


def schema_for(kind: str) -> dict[str, Any]:
    """Return the schema of a record kind (or of the bundle, kind ``RecordBundle``)."""
    return load_schemas()[SCHEMA_FILES[kind]]


def _file_of(kind: str) -> str:
    if kind not in SCHEMA_FILES:
        kinds = ", ".join(sorted(SCHEMA_FILES))
        raise InputError(source="kind", reason=f"expected one of {kinds}, got {kind!r}")
    return SCHEMA_FILES[kind]


def _refs(node: Any) -> Iterator[str]:
    # The schema files a schema's `$ref`s name (the part before '#').
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#"):
                yield ref.split("#", 1)[0]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def schema_files_for(kind: str | None = None) -> list[str]:
    """Return the schema files a kind needs: its own first, then every file it refers to.

    Args:
        kind: A record kind or ``RecordBundle``; ``None`` for every file.

    Raises:
        InputError: for an unknown kind.
        ArgumentError: when ``kind`` is not a str or None.
    """
    schemas = load_schemas()
    if kind is None:
        return sorted(schemas)
    _arguments.instance(kind, str, "kind")
    needed = [_file_of(kind)]
    for name in needed:
        needed.extend(ref for ref in sorted(set(_refs(schemas[name]))) if ref not in needed)
    return needed


def self_contained_schema(kind: str) -> dict[str, Any]:
    """Return a kind's schema with every schema it refers to embedded: one offline document.

    A JSON Schema 2020-12 compound document: the other files sit under ``$defs`` (keyed
    by file name) as embedded resources with their own ``$id``, so every ``$ref`` resolves
    inside it, in check-jsonschema, ajv, jsonschema-rs and python-jsonschema alike.

    Raises:
        InputError: for an unknown kind.
    """
    schemas = load_schemas()
    names = schema_files_for(kind)
    root = copy.deepcopy(schemas[names[0]])
    defs = root.setdefault("$defs", {})
    for name in names[1:]:
        embedded = copy.deepcopy(schemas[name])
        # One dialect throughout: the root's $schema says it.
        embedded.pop("$schema", None)
        defs[name] = embedded
    return root


def schema_text(schema: dict[str, Any]) -> str:
    """Return a schema as written to files: two-space indentation and a final newline."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def export_schemas(out: str | Path, kind: str | None = None) -> list[Path]:
    """Write the schemas into a folder, each file atomically, as packaged.

    Every file is self-contained (:func:`published_schemas`): alone, it validates its
    kind offline. The files a kind's ``$ref``s name are written beside it all the same.

    Args:
        out: The folder; created when missing.
        kind: A record kind or ``RecordBundle``; ``None`` for every schema.

    Returns:
        The paths written.

    Raises:
        OutputIsInputError: when a file to write is one of the packaged schema files
            (``out`` is the package's own schema folder, or links to its files).
        InputError: for an empty path, when the folder or a file cannot be written, or
            for an unknown kind.
        ArgumentError: when ``out`` is not a path or ``kind`` not a str or None.
    """
    out = _arguments.path(out, "out")
    if not str(out):
        # Path("") is the current folder: an empty option is a mistake, not a choice.
        raise InputError(source="''", reason="expected a folder path, got an empty path")
    folder = Path(out)
    names = schema_files_for(kind)
    # Into the packaged folder itself, bundle.json would replace the shipped one.
    refuse_overwriting_inputs([folder / name for name in names], [schema_dir()])
    ensure_folder(folder)
    published = published_schemas()
    written = []
    for name in names:
        write_text_atomic(folder / name, published[name])
        written.append(folder / name)
    return written
