"""Render schemas/ as reference pages: every kind, field, type, constraint and default.

The pages are built from the schema files at each `mkdocs build`, never copied by hand, so
a schema change shows up on the site without anyone editing a page. Keywords this module
has no words for are printed as JSON rather than dropped: nothing in a schema goes unseen.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["page_path", "render_page"]

# Keywords that describe structure; every other keyword on a node is a constraint.
_STRUCTURE = frozenset(
    {
        "$schema", "$id", "$ref", "$defs", "title", "description", "type", "properties",
        "required", "items", "additionalProperties", "anyOf", "oneOf", "default",
        "if", "then", "else",
    }
)  # fmt: skip
_WORDS = {
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "minimum": "≥ {}",
    "maximum": "≤ {}",
    "exclusiveMinimum": "> {}",
    "exclusiveMaximum": "< {}",
    "multipleOf": "a multiple of {}",
    "minItems": "at least {} items",
    "maxItems": "at most {} items",
    "minProperties": "at least {} keys",
    "maxProperties": "at most {} keys",
    "format": "format `{}`",
}


def page_path(schema_file: str) -> str:
    """Return the site path of the page for ``schema_file`` (``bundle.json``)."""
    return f"reference/schemas/{schema_file.removesuffix('.json')}.md"


def _anchor(name: str) -> str:
    return name.lower()


def _code(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    # A table cell ends at an unescaped pipe, even inside a code span.
    return "`" + text.replace("|", "\\|") + "`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _link(ref: str, schemas: dict[str, dict[str, Any]]) -> str:
    """Return a Markdown link for a ``$ref`` between or within the schema files."""
    target, _, pointer = ref.partition("#")
    page = f"{target.removesuffix('.json')}.md" if target else ""
    if pointer.startswith("/$defs/"):
        name = pointer.removeprefix("/$defs/")
        return f"[{name}]({page}#{_anchor(name)})"
    if not pointer and target in schemas:
        return f"[{schemas[target].get('title', target)}]({page})"
    raise ValueError(f"cannot link $ref {ref!r}: expected 'file.json' or '[file.json]#/$defs/Name'")


def _type(node: dict[str, Any], schemas: dict[str, dict[str, Any]]) -> str:
    if "$ref" in node:
        return _link(node["$ref"], schemas)
    if node.get("not") == {}:
        return "forbidden"
    options = node.get("anyOf") or node.get("oneOf")
    if options:
        joined = " or ".join(_type(option, schemas) for option in options)
        return joined if "anyOf" in node else f"exactly one of {joined}"
    if "const" in node:
        return f"constant {_code(node['const'])}"
    return _declared_type(node, schemas)


def _declared_type(node: dict[str, Any], schemas: dict[str, dict[str, Any]]) -> str:
    kind = node.get("type")
    if kind == "array" and isinstance(node.get("items"), dict):
        return f"array of {_type(node['items'], schemas)}"
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"map of string to {_type(node['additionalProperties'], schemas)}"
    if isinstance(kind, list):
        return " or ".join(f"`{k}`" for k in kind)
    return f"`{kind}`" if kind else "any"


def _constraints(node: dict[str, Any]) -> list[str]:
    found: list[str] = []
    if "enum" in node:
        found.append("one of " + ", ".join(_code(v) for v in node["enum"]))
    if node.get("additionalProperties") is False:
        found.append("no other keys")
    if isinstance(node.get("not"), dict) and node["not"]:
        found.append(f"not {_code(node['not'])}")
    for key, value in node.items():
        if key in _STRUCTURE or key in {"enum", "const", "not"}:
            continue
        if key in _WORDS:
            found.append(_WORDS[key].format(value))
        elif key == "pattern":
            found.append("matches `" + str(value).replace("|", "\\|") + "`")
        elif key == "propertyNames":
            found.append("keys: " + "; ".join(_constraints(value)))
        else:
            found.append(f"`{key}`: {_code(value)}")
    for key, word in (("additionalProperties", "values"), ("items", "items")):
        inner = node.get(key)
        if isinstance(inner, dict) and "$ref" not in inner and (rules := _constraints(inner)):
            found.append(f"{word}: " + "; ".join(rules))
    found.extend(
        f"if {_type(option, schemas={})}: " + "; ".join(inner)
        for option in node.get("anyOf", []) + node.get("oneOf", [])
        if "$ref" not in option and (inner := _constraints(option))
    )
    return found


def _rows(
    node: dict[str, Any], schemas: dict[str, dict[str, Any]], current: str, prefix: str = ""
) -> list[str]:
    """Return one table row per property, descending into objects defined in place."""
    rows = []
    required = set(node.get("required", []))
    for name, prop in node.get("properties", {}).items():
        field = f"{prefix}{name}"
        description = prop.get("description") or _described(prop, schemas, current)
        rules = [f"**Default:** {_code(prop['default'])}"] if "default" in prop else []
        if constraints := _constraints(prop):
            rules.append("**Constraints:** " + "; ".join(constraints))
        cells = [
            f"`{field}`",
            _type(prop, schemas),
            "yes" if name in required else "",
            "<br>".join([_cell(description), *rules]).removeprefix("<br>"),
        ]
        rows.append("| " + " | ".join(cells) + " |")
        if "properties" in prop:
            rows.extend(_rows(prop, schemas, current, prefix=f"{field}."))
    return rows


def _described(node: dict[str, Any], schemas: dict[str, dict[str, Any]], current: str) -> str:
    """Return the description a ``$ref`` points at, for a property that has none."""
    ref = node.get("$ref")
    if not ref:
        return ""
    target, _, pointer = ref.partition("#")
    document = schemas[target or current]
    if pointer.startswith("/$defs/"):
        return str(document["$defs"][pointer.removeprefix("/$defs/")].get("description", ""))
    return str(document.get("description", ""))


def _section(
    heading: str, node: dict[str, Any], schemas: dict[str, dict[str, Any]], current: str
) -> list[str]:
    lines = [heading, ""]
    if "description" in node:
        lines += [node["description"], ""]
    summary = [f"**Type:** {_type(node, schemas)}"]
    if constraints := _constraints(node):
        summary.append("**Constraints:** " + "; ".join(constraints))
    if "default" in node:
        summary.append(f"**Default:** {_code(node['default'])}")
    lines += ["  \n".join(summary), ""]
    if "properties" in node:
        lines += [
            "| Field | Type | Required | Description |",
            "| --- | --- | --- | --- |",
            *_rows(node, schemas, current),
            "",
        ]
    if "if" in node:
        conditional = {key: node[key] for key in ("if", "then", "else") if key in node}
        lines += [
            "**Conditional** (`if` / `then` / `else`, as in the schema):",
            "",
            "```json",
            json.dumps(conditional, indent=2, ensure_ascii=False),
            "```",
            "",
        ]
    return lines


def render_page(schema_file: str, schemas: dict[str, dict[str, Any]]) -> str:
    """Return the Markdown reference page of one schema file.

    Args:
        schema_file: The file name under ``schemas/v1alpha1/`` (``benchmark-run.json``).
        schemas: Every schema document, keyed by file name, to resolve ``$ref`` links.

    Returns:
        The page: the document's own fields, then one section per ``$defs`` entry with
        an anchor of its name in lowercase, so ``$ref`` links land on it.
    """
    schema = schemas[schema_file]
    title = schema.get("title", schema_file)
    lines = [
        f"# {title}",
        "",
        f"`$id`: `{schema['$id']}`. Download: "
        f"[{schema_file}](../../schemas/v1alpha1/{schema_file}) (self-contained: it "
        "embeds a copy of every file it refers to, so it validates offline alone; "
        "this page shows the file's own part).",
        "",
        "<!-- generated from schemas/v1alpha1/ by docs/hooks/schema_reference.py -->",
        "",
    ]
    if "properties" in schema or "type" in schema:
        lines += _section("## The document", schema, schemas, schema_file)
    for name, definition in schema.get("$defs", {}).items():
        lines += _section(f"## {name} {{ #{_anchor(name)} }}", definition, schemas, schema_file)
    return "\n".join(lines)
