"""The rules one input keeps, checked in one place for validate, compare, report and merge.

One input (every path of one call, or the records of one list) is one namespace:

- a run name appears once;
- a protocol or environment name always names the same document (spec and metadata:
  merge could keep only one of two);
- a declared digest (protocol, environment, workload, implementation) always stands
  for the same object wherever the record carries it.

A digest standing for two objects means at least one declaration is wrong: compare
pairs runs by their digests, so such a record would pair with runs it never matched.
Specs are compared as JSON values (RFC 8785: ``1`` and ``1.0`` are one number, ``true``
and ``1`` are not).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import attrs

from . import digest as _digest
from .errors import KernelIndexError, Problem

__all__ = ["Admission", "InputRules"]

# Bundle members that carry a shared object, their kind, and the run's digest field.
_BUNDLE_OBJECTS: Final = (
    ("protocol", "BenchmarkProtocol", "protocolDigest"),
    ("environment", "ExecutionEnvironment", "environmentDigest"),
)
# Objects inside a run's spec that its digests stand for (no name of their own).
_RUN_OBJECTS: Final = (
    ("workload", "workload", "workloadDigest"),
    ("implementation", "implementation", "implementationDigest"),
)
_STANDALONE_DIGEST: Final = {
    "BenchmarkProtocol": _digest.protocol_digest,
    "ExecutionEnvironment": _digest.environment_digest,
}


def _canonical(value: Any) -> bytes | None:
    try:
        return _digest.canonical_bytes(value)
    except KernelIndexError:
        return None


def same_json(a: Any, b: Any) -> bool:
    """Whether two JSON values are one value: RFC 8785 forms equal.

    Python's ``==`` calls ``True`` equal to ``1``; ``repr`` tells them apart, so equal
    values that also print alike are the same, and anything else is decided by the
    canonical form (``1`` against ``1.0``, say).
    """
    if a is b:
        return True
    if a == b and repr(a) == repr(b):
        return True
    left, right = _canonical(a), _canonical(b)
    return left is not None and left == right


@attrs.frozen
class Admission:
    """What :meth:`InputRules.admit` found: the problems, or that the record repeats one."""

    problems: tuple[Problem, ...] = ()
    repeat: bool = False


@attrs.define
class _First:
    where: str
    value: Any


@attrs.define
class InputRules:
    """The names and digests seen in one input, and the problems of each new record.

    Args:
        repeats: Whether a run repeated with the same content is a repeat to drop
            (merge) rather than a second run of one name (validate, compare, report).
    """

    repeats: bool = False
    _runs: dict[str, _First] = attrs.field(factory=dict)
    _names: dict[tuple[str, str], _First] = attrs.field(factory=dict)
    _digests: dict[tuple[str, str], _First] = attrs.field(factory=dict)

    def admit(self, doc: dict[str, Any], where: str) -> Admission:
        """Check one schema-valid document; remember what it names when it has no problem.

        Args:
            doc: A bundle, run, protocol or environment as a JSON value.
            where: How problems name this document's place (``file``, ``file:line``).

        Returns:
            The problems (each with its JSON pointer), or a repeat in ``repeats`` mode.
        """
        named, shared = _members(doc)
        run = named.pop("BenchmarkRun", None)
        problems: list[Problem] = []
        if run is not None:
            name = run[1]["metadata"]["name"]
            first = self._runs.get(name)
            if first is not None:
                if self.repeats and same_json(first.value, doc):
                    return Admission(repeat=True)
                problems.append(
                    Problem(
                        pointer=f"{run[0]}/metadata/name",
                        message=f"name {name!r} already names a run at {first.where}",
                        code="duplicate-name",
                    )
                )
        problems += self._name_clashes(named)
        problems += self._digest_clashes(shared)
        if problems:
            return Admission(problems=tuple(problems))
        if run is not None:
            # Merge compares whole records; the others only need the place.
            first = _First(where, doc if self.repeats else None)
            self._runs[run[1]["metadata"]["name"]] = first
        for kind, (_, value) in named.items():
            key = (kind, value["metadata"]["name"])
            self._names.setdefault(key, _First(where, value))
        for kind, _, value, declared in shared:
            self._digests.setdefault((kind, declared), _First(where, value))
        return Admission()

    def _name_clashes(self, named: dict[str, tuple[str, dict[str, Any]]]) -> Iterator[Problem]:
        for kind, (pointer, value) in named.items():
            name = value["metadata"]["name"]
            first = self._names.get((kind, name))
            if first is not None and not same_json(first.value, value):
                yield Problem(
                    pointer=f"{pointer}/metadata/name",
                    message=f"name {name!r} already names a different {kind} at {first.where}",
                    code="duplicate-name",
                )

    def _digest_clashes(self, shared: list[tuple[str, str, Any, str]]) -> Iterator[Problem]:
        for kind, pointer, value, declared in shared:
            first = self._digests.get((kind, declared))
            if first is not None and not same_json(first.value, value):
                yield Problem(
                    pointer=pointer,
                    message=(
                        f"digest {declared!r} already stands for a different {kind}"
                        f" at {first.where}"
                    ),
                    code="digest-clash",
                )


def _members(
    doc: dict[str, Any],
) -> tuple[dict[str, tuple[str, dict[str, Any]]], list[tuple[str, str, Any, str]]]:
    """The named documents of ``doc`` (kind -> pointer, object) and the objects its
    digests stand for (kind, pointer, object, digest)."""
    kind = doc.get("kind")
    if kind is not None:
        if kind == "BenchmarkRun":
            return {kind: ("", doc)}, list(_run_objects(doc, ""))
        found = _STANDALONE_DIGEST[kind](doc["spec"])
        return {kind: ("", doc)}, [(kind, "/spec", doc["spec"], found)]
    named: dict[str, tuple[str, dict[str, Any]]] = {}
    shared: list[tuple[str, str, Any, str]] = []
    run = doc["run"]
    named["BenchmarkRun"] = ("/run", run)
    for key, member_kind, field in _BUNDLE_OBJECTS:
        member = doc.get(key)
        if member is not None:
            named[member_kind] = (f"/{key}", member)
            shared.append((member_kind, f"/{key}/spec", member["spec"], run["spec"][field]))
    shared.extend(_run_objects(run, "/run"))
    return named, shared


def _run_objects(run: dict[str, Any], at: str) -> Iterator[tuple[str, str, Any, str]]:
    spec = run["spec"]
    for key, kind, field in _RUN_OBJECTS:
        value = spec.get(key)
        if value is not None:
            yield kind, f"{at}/spec/{key}", value, spec[field]
