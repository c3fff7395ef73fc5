"""Validation of records: the schema registry, schema selection, and the checks beyond it.

jsonschema-rs, compiled from the schemas, decides whether a document is valid: it
follows ECMA-262 regular expressions as JSON Schema requires. python-jsonschema gives
the detail of each problem. When the two disagree the fast verdict stands and its own
errors are reported, so a document is never passed that jsonschema-rs refuses.
The reference validator is strict where the published form is: an integer field
refuses an integral float (``2.0``), which JSON Schema would otherwise accept.

At most :data:`MAX_PROBLEMS` problems are kept for one document, the first ones (by
place, for the schema's); one more problem (code ``more-problems``) counts the rest.

:class:`RecordReader` reads the records of one input, text by text, for every reader of
files (``documents.check_documents``). The fast path it may take lives in ``_fast``,
with the proof that its answers are the plain path's; ``KERNELINDEX_STRICT_READ=1``
turns it off.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._base import arguments as _arguments
from .._base.schemas import BUNDLE
from .._json import text as _jsontext
from .._json.converter import as_json
from ..errors import Problem, SchemaValidationError
from . import _document, _fast, _semantic
from ._input_rules import Admission, InputRules
from ._kinds import SUPPORTED_KINDS, detect_kind
from ._reader import Reading, RecordReader
from ._registry import registry
from ._semantic import DigestComparison

__all__ = [
    "MAX_PROBLEMS",
    "STRICT_READ",
    "SUPPORTED_KINDS",
    "Admission",
    "DigestComparison",
    "InputRules",
    "Reading",
    "RecordReader",
    "check",
    "compare_digests",
    "detect_kind",
    "iter_parsed_problems",
    "iter_problems",
    "iter_value_problems",
    "registry",
    "validate",
]

#: The most problems kept for one document; one more problem counts the rest.
MAX_PROBLEMS = _jsontext.MAX_PROBLEMS
#: The environment variable that, set to ``1``, turns every fast path of reading off.
STRICT_READ = _fast.STRICT_READ


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
        parsed = _fast.parse(doc)
        yield from iter_parsed_problems(parsed, kind=kind, verify_digests=verify_digests)
        return
    yield from iter_value_problems(doc, kind=kind, text=text, verify_digests=verify_digests)


def iter_parsed_problems(
    parsed: _jsontext.Parsed, *, kind: str | None = None, verify_digests: bool = False
) -> Iterator[Problem]:
    """Yield every problem of a document whose text is already parsed.

    The entry for readers that parse a text themselves, to keep its value (documents,
    compare's runs): the parse's own scan of the value is reused, so the value is
    walked once, and problems carry their lines and columns in the text.

    Args:
        parsed: What ``kernelindex_sdk._json.text.parse_document`` returned for the text
            (or the same answer, found faster).
        kind: The kind the document must be; by default the one it declares.
        verify_digests: Recompute each digest whose content the document carries.

    Raises:
        ArgumentError: when ``parsed`` is not what ``parse_document`` returns.
    """
    _arguments.instance(parsed, _jsontext.Parsed, "parsed")
    yield from _document.parsed_problems(parsed, kind=kind, verify_digests=verify_digests)


def iter_value_problems(
    value: Any,
    *,
    kind: str | None = None,
    text: str | None = None,
    verify_digests: bool = False,
) -> Iterator[Problem]:
    """Like :func:`iter_problems` for an already parsed value (or model), even a JSON string."""
    yield from _jsontext.located(
        _document.document_problems(as_json(value), kind, verify_digests), text
    )


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
        parsed = _fast.parse(doc)
        problems = list(iter_parsed_problems(parsed))
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
    view = _document.view(doc, kind)
    if kind in ("BenchmarkRun", BUNDLE):
        return list(_semantic.digest_comparisons(view))
    return list(_semantic.own_digests(view))
