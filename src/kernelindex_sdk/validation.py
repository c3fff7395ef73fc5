"""Validation of records: the schema registry, schema selection, and the checks beyond it.

python-jsonschema is the reference validator and gives every problem's detail;
jsonschema-rs, compiled from the same schemas, answers first whether a document is
valid at all, so valid documents never pay for the reference's slower walk.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import attrs
import jsonschema
import jsonschema_rs
import referencing
from referencing.jsonschema import DRAFT202012

from . import _jsontext, _messages, _semantic
from ._schemas import BASE_URI, BUNDLE, SCHEMA_FILES, SUPPORTED_API_VERSIONS, load_schemas
from ._semantic import DigestComparison
from .errors import Problem, SchemaValidationError

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
def _reference_validator(kind: str) -> jsonschema.protocols.Validator:
    schema = {"$ref": BASE_URI + SCHEMA_FILES[kind]}
    cls = jsonschema.Draft202012Validator
    return cls(schema, registry=registry(), format_checker=cls.FORMAT_CHECKER)


@functools.cache
def _fast_validator(kind: str) -> Any:
    rs_registry = jsonschema_rs.Registry(
        [(BASE_URI + name, schema) for name, schema in load_schemas().items()]
    )
    return jsonschema_rs.validator_for(
        load_schemas()[SCHEMA_FILES[kind]], registry=rs_registry, validate_formats=True
    )


def _fast_is_valid(kind: str, doc: Any) -> bool:
    try:
        return bool(_fast_validator(kind).is_valid(doc))
    except (ValueError, TypeError):
        # Python values JSON has no form for (a tuple, a str subclass): let the reference
        # validator judge, and report, them.
        return False


def detect_kind(doc: Any) -> str | Problem:
    """Return the kind a document declares (``RecordBundle`` for a bundle), or why not."""
    if not isinstance(doc, dict):
        return Problem(
            pointer="",
            message=f"expected a JSON object, got {_messages.short_repr(doc)}",
            code="type",
        )
    if "kind" not in doc and "apiVersion" not in doc and "run" in doc:
        return BUNDLE
    api_version = doc.get("apiVersion")
    if api_version not in SUPPORTED_API_VERSIONS:
        supported = ", ".join(map(repr, SUPPORTED_API_VERSIONS))
        found = (
            "no apiVersion"
            if api_version is None
            else f"apiVersion {_messages.short_repr(api_version)}"
        )
        return Problem(
            pointer="/apiVersion" if "apiVersion" in doc else "",
            message=f"unsupported {found}; supported: {supported}",
            code="apiVersion",
        )
    kind = doc.get("kind")
    if not isinstance(kind, str) or kind not in SCHEMA_FILES or kind == BUNDLE:
        kinds = ", ".join(k for k in SUPPORTED_KINDS if k != BUNDLE)
        found = "no kind" if kind is None else f"kind {_messages.short_repr(kind)}"
        return Problem(
            pointer="/kind" if "kind" in doc else "",
            message=f"unsupported {found}; supported: {kinds}, or a bundle {{run, ...}}",
            code="kind",
        )
    return str(kind)


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


def _document_problems(doc: Any, kind: str | None, verify_digests: bool) -> Iterator[Problem]:
    detected = detect_kind(doc)
    if isinstance(detected, Problem):
        yield detected
        return
    if kind is not None and detected != kind:
        yield Problem(pointer="", message=f"expected a {kind}, got a {detected}", code="kind")
        return
    if not _fast_is_valid(detected, doc):
        errors = sorted(_reference_validator(detected).iter_errors(doc), key=lambda e: e.path)
        for error in errors:
            yield from _messages.problems_from_error(error)
        if errors:
            return
    view = _view(doc, detected)
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
        doc: A parsed JSON value, or JSON text (str or bytes), parsed strictly.
        kind: The kind the document must be (``BenchmarkRun``, ..., ``RecordBundle``);
            by default the one it declares.
        text: The text ``doc`` was parsed from, to give problems lines and columns.
        verify_digests: Recompute each digest whose content the document carries.
    """
    if isinstance(doc, (str, bytes)):
        doc, text, parse_problems = _jsontext.parse(doc)
        if parse_problems:
            yield from parse_problems
            return
    yield from iter_value_problems(doc, kind=kind, text=text, verify_digests=verify_digests)


def iter_value_problems(
    value: Any,
    *,
    kind: str | None = None,
    text: str | None = None,
    verify_digests: bool = False,
) -> Iterator[Problem]:
    """Like :func:`iter_problems` for an already parsed value, even a JSON string."""
    problems = _document_problems(value, kind, verify_digests)
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
    """Return the four digests a run (or bundle) declares beside those computed from its content.

    Args:
        doc: A parsed run or bundle, or its JSON text.

    Raises:
        SchemaValidationError: when the document is not a valid run or bundle.
    """
    if isinstance(doc, (str, bytes)):
        doc, _, problems = _jsontext.parse(doc)
        if problems:
            raise SchemaValidationError(problems=problems)
    kind = detect_kind(doc)
    if kind not in ("BenchmarkRun", BUNDLE):
        raise SchemaValidationError(
            problems=[
                kind
                if isinstance(kind, Problem)
                else Problem(
                    pointer="", message=f"expected a run or a bundle, got a {kind}", code="kind"
                )
            ]
        )
    check(doc)
    return list(_semantic.digest_comparisons(_view(doc, kind)))
