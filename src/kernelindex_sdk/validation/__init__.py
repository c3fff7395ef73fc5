"""Validation of records: the schema registry, schema selection, and the checks beyond it.

jsonschema-rs, compiled from the schemas, decides whether a document is valid: it
follows ECMA-262 regular expressions as JSON Schema requires. python-jsonschema gives
the detail of each problem. When the two disagree the fast verdict stands and its own
errors are reported, so a document is never passed that jsonschema-rs refuses.
The reference validator is strict where the published form is: an integer field
refuses an integral float (``2.0``), which JSON Schema would otherwise accept.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import Any

import attrs
import jsonschema
import jsonschema_rs
import referencing
from referencing.jsonschema import DRAFT202012

from .._base.display import article, short_repr
from .._base.schemas import BASE_URI, BUNDLE, SCHEMA_FILES, SUPPORTED_API_VERSIONS, load_schemas
from .._json import text as _jsontext
from .._json.converter import as_json
from ..errors import Problem, SchemaValidationError
from . import _messages, _quick_checks, _semantic
from ._semantic import DigestComparison

__all__ = [
    "SUPPORTED_KINDS",
    "DigestComparison",
    "check",
    "compare_digests",
    "detect_kind",
    "iter_problems",
    "iter_value_problems",
    "registry",
    "validate",
]

#: Record kinds a document may declare, and the bundle.
SUPPORTED_KINDS = (*sorted(k for k in SCHEMA_FILES if k != BUNDLE), BUNDLE)
_BUNDLE_KEYS = frozenset({"run", "protocol", "environment"})
# Problem codes whose pointer names a key rather than a value.
_KEY_CODES = frozenset({"additionalProperties", "duplicate-key", "propertyNames"})


@functools.cache
def registry() -> referencing.Registry[Any]:
    """Return the ``referencing`` registry of the packaged schemas; it never fetches."""
    resources = [
        (BASE_URI + name, DRAFT202012.create_resource(schema))
        for name, schema in load_schemas().items()
    ]
    return referencing.Registry().with_resources(resources).crawl()


@functools.cache
def _strict_registry() -> referencing.Registry[Any]:
    # python-jsonschema picks the validator class of each resource it enters from the
    # resource's "$schema", which would swap the strict class for the stock one: these
    # copies leave "$schema" out, so the strict class is kept throughout.
    resources = [
        (
            BASE_URI + name,
            DRAFT202012.create_resource({k: v for k, v in schema.items() if k != "$schema"}),
        )
        for name, schema in load_schemas().items()
    ]
    return referencing.Registry().with_resources(resources).crawl()


@functools.cache
def _reference_validator(kind: str) -> jsonschema.protocols.Validator:
    schema = {"$ref": BASE_URI + SCHEMA_FILES[kind]}
    format_checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    validator: jsonschema.protocols.Validator = _StrictValidator(
        schema, registry=_strict_registry(), format_checker=format_checker
    )
    return validator


# The schemas end patterns with "$(?!\n)" for Python's re, whose "$" also matches before
# a final newline. jsonschema-rs's "$" matches at the end only (as ECMA-262's does), so
# there the lookahead never fails, but it sends every such pattern to the backtracking
# engine: a third of a run's validation time. The fast validators drop it.
_END_LOOKAHEAD = "$(?!\\n)"


def _end_only(pattern: str) -> str:
    """``pattern`` without a final ``(?!\\n)`` after an end anchor: the same language in
    jsonschema-rs (no inline flag can make its ``$`` match before a newline)."""
    if not pattern.endswith(_END_LOOKAHEAD) or "(?" in pattern[: -len(_END_LOOKAHEAD)].replace(
        "(?!", ""
    ).replace("(?:", ""):
        return pattern
    head = pattern[: -len(_END_LOOKAHEAD)]
    # An escaped "$" (an odd run of backslashes before it) is a character, not an anchor.
    if (len(head) - len(head.rstrip("\\"))) % 2:
        return pattern
    return head + "$"


def _fast_schema(node: Any) -> Any:
    """A copy of a schema with :func:`_end_only` applied to every pattern."""
    if isinstance(node, list):
        return [_fast_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    return {
        k: _end_only(v) if k == "pattern" and isinstance(v, str) else _fast_schema(v)
        for k, v in node.items()
    }


@functools.cache
def _fast_schemas() -> dict[str, Any]:
    return {name: _fast_schema(schema) for name, schema in load_schemas().items()}


@functools.cache
def _fast_validator(kind: str) -> Any:
    schemas = _fast_schemas()
    rs_registry = jsonschema_rs.Registry([(BASE_URI + name, s) for name, s in schemas.items()])
    return jsonschema_rs.validator_for(
        schemas[SCHEMA_FILES[kind]], registry=rs_registry, validate_formats=True
    )


# A keyword of our own beside every integer type of the strict copies of the schemas.
_STRICT_INTEGER = "x-kernelindex-strictInteger"


class _StrictInteger:
    """jsonschema-rs keyword: an integer is written without a fraction (``2``, not ``2.0``).

    jsonschema-rs, as JSON Schema allows, takes ``2.0`` for an integer; the published
    form does not. jsonschema-rs calls the keyword only where the schema says integer,
    at a fraction of a microsecond a call.
    """

    def __init__(self, parent_schema: Any, value: Any, schema_path: Any) -> None:
        del parent_schema, value, schema_path

    def validate(self, instance: Any) -> None:
        if type(instance) is float:
            raise ValueError(f"{instance!r} is not an integer; write it without a fraction")


def _strict_schema(node: Any) -> Any:
    """A copy of a schema in which every integer type also refuses floats."""
    if isinstance(node, list):
        return [_strict_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    copy = {k: _strict_schema(v) for k, v in node.items()}
    types = node.get("type")
    types = [types] if isinstance(types, str) else types
    if isinstance(types, list) and "integer" in types and "number" not in types:
        copy[_STRICT_INTEGER] = True
    return copy


@functools.cache
def _strict_fast_validator(kind: str) -> Any:
    schemas = {name: _strict_schema(schema) for name, schema in _fast_schemas().items()}
    rs_registry = jsonschema_rs.Registry([(BASE_URI + name, s) for name, s in schemas.items()])
    return jsonschema_rs.validator_for(
        schemas[SCHEMA_FILES[kind]],
        registry=rs_registry,
        validate_formats=True,
        keywords={_STRICT_INTEGER: _StrictInteger},
    )


def _fast_is_valid(kind: str, doc: Any, *, strict: bool = False) -> bool:
    """jsonschema-rs's verdict; ``strict`` also refuses integral floats in integer fields."""
    validator = _strict_fast_validator(kind) if strict else _fast_validator(kind)
    try:
        return bool(validator.is_valid(doc))
    except (ValueError, TypeError):
        # scan_value() has refused what jsonschema-rs cannot take; should anything
        # still slip through, it is not valid.
        return False


def _fast_problems(kind: str, doc: Any, *, strict: bool = False) -> list[Problem]:
    """Problems as jsonschema-rs reports them, for when python-jsonschema finds none."""
    validator = _strict_fast_validator(kind) if strict else _fast_validator(kind)
    try:
        problems = [
            p for e in validator.iter_errors(doc) for p in _messages.problems_from_fast_error(e)
        ]
    except (ValueError, TypeError) as err:
        problems = [
            Problem(
                pointer="",
                message=f"jsonschema-rs cannot read the document: {err}",
                code="json-value",
            )
        ]
    return problems or [
        Problem(
            pointer="",
            message="jsonschema-rs refuses the document but gives no detail",
            code="schema",
        )
    ]


def _is_strict_integer(_: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


_STRICT_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_strict_integer)
_StrictValidator = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator, type_checker=_STRICT_TYPES
)


def detect_kind(doc: Any) -> str | Problem:
    """Return the kind a document declares (``RecordBundle`` for a bundle), or why not."""
    if not isinstance(doc, dict):
        return Problem(
            pointer="",
            message=f"expected a JSON object, got {short_repr(doc)}",
            code="type",
        )
    if "kind" not in doc and "apiVersion" not in doc and not _BUNDLE_KEYS.isdisjoint(doc):
        # A bundle member without its run is still a bundle: the schema then says
        # that 'run' is required.
        return BUNDLE
    api_version = doc.get("apiVersion")
    if api_version not in SUPPORTED_API_VERSIONS:
        supported = ", ".join(map(repr, SUPPORTED_API_VERSIONS))
        return _unsupported(doc, "apiVersion", supported)
    kind = doc.get("kind")
    if not isinstance(kind, str) or kind not in SCHEMA_FILES or kind == BUNDLE:
        kinds = ", ".join(k for k in SUPPORTED_KINDS if k != BUNDLE)
        return _unsupported(doc, "kind", f"{kinds}, or a bundle {{run, ...}}")
    return str(kind)


def _unsupported(doc: dict[str, Any], key: str, supported: str) -> Problem:
    """A document's ``key`` is missing or holds a value this SDK does not support."""
    if key not in doc:
        return Problem(
            pointer="", message=f"{key!r} is a required property; supported: {supported}", code=key
        )
    found = short_repr(doc[key])
    return Problem(
        pointer=f"/{key}", message=f"unsupported {key} {found}; supported: {supported}", code=key
    )


def _view(doc: dict[str, Any], kind: str) -> _semantic.RecordView:
    if kind == BUNDLE:
        return _semantic.RecordView(
            run=doc.get("run"), protocol=doc.get("protocol"), environment=doc.get("environment")
        )
    if kind == "BenchmarkRun":
        return _semantic.RecordView(run=doc, run_at="")
    if kind == "BenchmarkProtocol":
        return _semantic.RecordView(protocol=doc, protocol_at="")
    return _semantic.RecordView(environment=doc, environment_at="")


def _document_problems(
    doc: Any, kind: str | None, verify_digests: bool, scan: _jsontext.ValueScan | None = None
) -> Iterator[Problem]:
    if scan is None:
        scan = _jsontext.scan_value(doc)
    if scan.problems:
        yield from scan.problems
        return
    detected = detect_kind(doc)
    if isinstance(detected, Problem):
        yield detected
        return
    if kind is not None and detected != kind:
        yield Problem(
            pointer="",
            message=f"expected {article(kind)}, got {article(detected)}",
            code="kind",
        )
        return
    fast_valid = _fast_is_valid(detected, doc)
    # A document holding an integral float must also pass the strict copy, which
    # refuses it in an integer field (jsonschema-rs alone accepts it there). Both
    # verdicts stand: the strict one differs in both directions (1e300 is a Scalar
    # only to it).
    strict_valid = not scan.integral_float or _fast_is_valid(detected, doc, strict=True)
    if not fast_valid or not strict_valid:
        errors = sorted(_reference_validator(detected).iter_errors(doc), key=lambda e: e.path)
        for error in errors:
            yield from _messages.problems_from_error(error)
        if errors:
            return
    if not fast_valid or not strict_valid:
        # The validators disagree (regular expression dialects, say): the fast verdict
        # stands, never a pass.
        yield from _fast_problems(detected, doc, strict=fast_valid)
        return
    view = _view(doc, detected)
    # The common record passes every check in one quick pass; the table says what is wrong.
    if view.run is None or not _quick_checks.passes(view.run, view.protocol):
        for check_fn in _semantic.CHECKS:
            yield from check_fn(view)
    if verify_digests:
        yield from _semantic.DIGEST_CHECK(view)


def iter_problems(
    doc: Any,
    *,
    kind: str | None = None,
    text: str | None = None,
    verify_digests: bool = False,
) -> Iterator[Problem]:
    """Yield every problem of one document.

    Args:
        doc: A parsed JSON value, a model instance, or JSON text (str or bytes),
            parsed strictly. A value must be made of JSON's types exactly (see
            ``_jsontext.scan_value``): anything else is a ``json-value`` problem.
        kind: The kind the document must be (``BenchmarkRun``, ..., ``RecordBundle``);
            by default the one it declares.
        text: The text ``doc`` was parsed from, to give problems lines and columns.
        verify_digests: Recompute each digest whose content the document carries.
    """
    if isinstance(doc, (str, bytes)):
        parsed = _jsontext.parse_document(doc)
        yield from _parsed_problems(parsed, kind=kind, verify_digests=verify_digests)
        return
    yield from iter_value_problems(doc, kind=kind, text=text, verify_digests=verify_digests)


def _parsed_problems(
    parsed: _jsontext.Parsed, *, kind: str | None = None, verify_digests: bool = False
) -> Iterator[Problem]:
    """Problems of a document parsed by ``_jsontext.parse_document`` (walked once only)."""
    if parsed.problems:
        yield from parsed.problems
        return
    problems = _document_problems(parsed.value, kind, verify_digests, parsed.scan)
    yield from _locate(problems, parsed.text)


def iter_value_problems(
    value: Any,
    *,
    kind: str | None = None,
    text: str | None = None,
    verify_digests: bool = False,
) -> Iterator[Problem]:
    """Like :func:`iter_problems` for an already parsed value (or model), even a JSON string."""
    yield from _locate(_document_problems(as_json(value), kind, verify_digests), text)


def _locate(problems: Iterable[Problem], text: str | None) -> Iterator[Problem]:
    if text is None:
        yield from problems
        return
    source_map = _jsontext.SourceMap(text)
    for problem in problems:
        where = None
        if problem.line is None:
            where = source_map.locate(problem.pointer, key=problem.code in _KEY_CODES)
        yield problem if where is None else attrs.evolve(problem, line=where[0], column=where[1])


def validate(
    doc: Any,
    *,
    kind: str | None = None,
    text: str | None = None,
    verify_digests: bool = False,
) -> list[Problem]:
    """Return every problem of one document; an empty list means it is valid.

    See :func:`iter_problems` for the arguments.
    """
    return list(iter_problems(doc, kind=kind, text=text, verify_digests=verify_digests))


def check(
    doc: Any,
    *,
    kind: str | None = None,
    text: str | None = None,
    verify_digests: bool = False,
) -> None:
    """Raise :class:`SchemaValidationError` listing every problem, if the document has any."""
    problems = validate(doc, kind=kind, text=text, verify_digests=verify_digests)
    if problems:
        raise SchemaValidationError(problems=problems)


def compare_digests(doc: Any) -> list[DigestComparison]:
    """Return the digests a document declares beside those computed from its content.

    A run or a bundle gives its four digests, each declared beside the one computed from
    the object the input carries (``computed`` is ``None`` where it lacks it). A
    standalone protocol or environment gives its own digest, which nothing declares
    (``declared`` is ``None``).

    Args:
        doc: A parsed record of any kind :func:`validate` accepts, or its JSON text;
            problems found in a text carry their line and column.

    Raises:
        SchemaValidationError: when the document is not valid.
    """
    if isinstance(doc, (str, bytes)):
        parsed = _jsontext.parse_document(doc)
        problems = list(_parsed_problems(parsed))
        if problems:
            raise SchemaValidationError(problems=problems)
        doc = parsed.value
    else:
        doc = as_json(doc)
        check(doc)
    kind = detect_kind(doc)
    # A valid document has a kind; detect_kind returns a Problem only for invalid ones.
    if isinstance(kind, Problem):
        raise SchemaValidationError(problems=[kind])
    view = _view(doc, kind)
    if kind in ("BenchmarkRun", BUNDLE):
        return list(_semantic.digest_comparisons(view))
    return list(_semantic.own_digests(view))
