"""One document's problems: strict JSON, the schema, the semantic checks, digests, and the
store's rules; at most ``MAX_PROBLEMS`` of them, the first ones, and a count of the rest.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

from .._base.display import article
from .._base.schemas import BUNDLE
from .._json import text as _jsontext
from ..errors import Problem
from . import _fast, _messages, _registry, _semantic, _store_rules
from ._kinds import detect_kind

__all__ = ["document_problems", "parsed_problems", "view"]

MAX_PROBLEMS = _jsontext.MAX_PROBLEMS


def view(doc: dict[str, Any], kind: str) -> _semantic.RecordView:
    """The documents of a valid document of ``kind``, and where each sits."""
    if kind == BUNDLE:
        return _semantic.RecordView(
            run=doc.get("run"), protocol=doc.get("protocol"), environment=doc.get("environment")
        )
    if kind == "BenchmarkRun":
        return _semantic.RecordView(run=doc, run_at="")
    if kind == "BenchmarkProtocol":
        return _semantic.RecordView(protocol=doc, protocol_at="")
    return _semantic.RecordView(environment=doc, environment_at="")


def document_problems(
    doc: Any,
    kind: str | None,
    verify_digests: bool,
    scan: _jsontext.ValueScan | None = None,
    *,
    for_store: bool = False,
) -> Iterator[Problem]:
    """Every problem of one JSON value (at most MAX_PROBLEMS and a count of the rest)."""
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
    fast_valid = _registry.fast_is_valid(detected, doc)
    # A document holding an integral float must also pass the strict copy, which
    # refuses it in an integer field (jsonschema-rs alone accepts it there). Both
    # verdicts stand: the strict one differs in both directions (1e300 is a Scalar
    # only to it).
    strict_valid = not scan.integral_float or _registry.fast_is_valid(detected, doc, strict=True)
    if not fast_valid or not strict_valid:
        found = _schema_problems(detected, doc)
        if not found:
            # The validators disagree (regular expression dialects, say): the fast
            # verdict stands, never a pass.
            found = list(
                _jsontext.capped(_registry.fast_problems(detected, doc, strict=fast_valid))
            )
        yield from found
        return
    found_view = view(doc, detected)
    run, protocol = found_view.run, found_view.protocol
    # The common run passes every check, and the store's rules, in one walk (_fast.passes);
    # the tables say what is wrong.
    passed = run is not None and _fast.enabled() and _fast.passes(run, protocol)
    checks = () if passed else _semantic.CHECKS
    if verify_digests:
        checks = (*checks, _semantic.DIGEST_CHECK)
    found = list(_run_checks(checks, found_view))
    if not found and for_store and not passed:
        found = list(_run_checks(_store_rules.STORE_CHECKS, found_view))
    yield from found


def _run_checks(checks: tuple[_semantic.Check, ...], at: _semantic.RecordView) -> Iterator[Problem]:
    """What the checks find, at most MAX_PROBLEMS and a count of the rest."""
    return _jsontext.capped(p for check in checks for p in check(at))


def _schema_problems(kind: str, doc: Any) -> list[Problem]:
    """python-jsonschema's problems of ``doc``, ordered by where they are: the first
    MAX_PROBLEMS, then one counting the rest. Only as many of its errors are held at a
    time (each holds what it found, several kB)."""
    total = 0

    def counted(errors: Iterator[Any]) -> Iterator[Any]:
        nonlocal total
        for error in errors:
            total += sum(1 for _ in _messages.problems_from_error(error))
            yield error

    errors = _registry.reference_validator(kind).iter_errors(doc)
    first = heapq.nsmallest(MAX_PROBLEMS, counted(errors), key=lambda e: e.path)
    found = [p for error in first for p in _messages.problems_from_error(error)]
    kept = found[:MAX_PROBLEMS]
    if total > len(kept):
        kept.append(_jsontext.more_problems(total - len(kept)))
    return kept


def parsed_problems(
    parsed: _jsontext.Parsed,
    *,
    kind: str | None = None,
    verify_digests: bool = False,
    for_store: bool = False,
) -> Iterator[Problem]:
    """The problems of a parsed text (its own, else its value's), placed in the text."""
    if parsed.problems:
        yield from parsed.problems
        return
    problems = document_problems(
        parsed.value, kind, verify_digests, parsed.scan, for_store=for_store
    )
    yield from _jsontext.located(problems, parsed.text)
