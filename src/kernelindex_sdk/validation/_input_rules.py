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
import orjson

from .. import digest as _digest
from ..errors import KernelIndexError, Problem
from ._fast import admission as _fast_admission
from ._fast import switch as _fast_switch

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
_POINTERS: Final = {key: f"/{key}" for key, _, _ in _BUNDLE_OBJECTS}
_SPEC_POINTERS: Final = {key: f"/{key}/spec" for key, _, _ in _BUNDLE_OBJECTS}
# The most objects kept by id; past it the table starts again.
_MAX_ADMITTED: Final = 256
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

    Python's ``==`` calls ``True`` equal to ``1``; orjson writes each value with its
    JSON type (``true``, ``1``, ``1.0``), in C, so values ``==`` to each other whose
    sorted orjson texts are equal are the same, and anything else is decided by the
    canonical form (``1`` against ``1.0``, or an integer orjson cannot write).
    """
    return a is b or _First("", a).same(b)


@attrs.frozen
class Admission:
    """What :meth:`InputRules.admit` found: the problems, or that the record repeats one."""

    problems: tuple[Problem, ...] = ()
    repeat: bool = False


_ADMITTED: Final = Admission()


@attrs.define
class _First:
    """Where a name or digest was first seen, and what it stood for there."""

    where: str
    value: Any
    # The value's sorted orjson text, made on the first comparison (most values are
    # compared many times); b"" when orjson cannot write it.
    _form: bytes | None = None
    # Its orjson text as it is ordered, likewise.
    _text: bytes | None = None

    def same(self, other: Any) -> bool:
        """Whether ``other`` is the same JSON value as :attr:`value` (see :func:`same_json`)."""
        value = self.value
        if value is other:
            return True
        # The common repeat, written by the same tool in the same order: orjson writes
        # each value with its JSON type (true, 1, 1.0 apart), so equal texts are one
        # JSON value; but it writes NaN and the infinities as null, so a text with a
        # null proves nothing.
        if self._text is None:
            text = _text(value)
            self._text = b"" if b"null" in text else memoryview(text).tobytes()
        if self._text and self._text == _text(other):
            return True
        if value == other:
            if self._form is None:
                self._form = _kept_text(value)
            if self._form and self._form == _sorted_text(other):
                return True
        left, right = _canonical(value), _canonical(other)
        return left is not None and left == right


def _text(value: Any) -> bytes:
    """orjson's text of ``value``; b"" where it has none."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return b""


def _sorted_text(value: Any) -> bytes:
    """orjson's text of ``value`` with sorted keys; b"" where it has none (an integer
    beyond 64 bits, say)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return b""


def _kept_text(value: Any) -> bytes:
    """:func:`_sorted_text` to keep, in bytes of its own length: orjson's keep the buffer
    they were written in (about 4 KiB each for a workload's text, by tracemalloc)."""
    return memoryview(_sorted_text(value)).tobytes()


@attrs.define
class InputRules:
    """The names and digests seen in one input, and the problems of each new record.

    Args:
        repeats: Whether a run repeated with the same content is a repeat to drop
            (merge) rather than a second run of one name (validate, compare, report).
    """

    repeats: bool = False
    _runs: dict[str, _First] = attrs.field(factory=dict)
    _run_places: dict[str, str] = attrs.field(factory=dict)
    _names: dict[tuple[str, str], _First] = attrs.field(factory=dict)
    _digests: dict[tuple[str, str], _First] = attrs.field(factory=dict)
    # Protocol and environment objects already admitted, by id (the object is held, so
    # its id stays its own), with the digest their run declared: the quick reader hands
    # out one object for every line that repeats it, and it needs no second look.
    _admitted: dict[int, tuple[Any, str]] = attrs.field(factory=dict)
    # Whether a bundle of objects all admitted before is admitted in a few lookups
    # (_fast.admission; not for merge, which compares whole runs; off with the switch).
    _shortcut: bool = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._shortcut = not self.repeats and _fast_switch.enabled()

    def admit(self, doc: dict[str, Any], where: str) -> Admission:
        """Check one schema-valid document; remember what it names when it has no problem.

        Args:
            doc: A bundle, run, protocol or environment as a JSON value.
            where: How problems name this document's place (``file``, ``file:line``).

        Returns:
            The problems (each with its JSON pointer), or a repeat in ``repeats`` mode.
        """
        if self._known_bundle(doc, where):
            return _ADMITTED
        named, shared = self._members(doc)
        run = named.pop("BenchmarkRun", None)
        problems: list[Problem] = []
        if run is not None:
            name = run[1]["metadata"]["name"]
            first = self._runs.get(name)
            if first is not None:
                if self.repeats and first.same(doc):
                    return Admission(repeat=True)
                problems.append(
                    Problem(
                        pointer=f"{run[0]}/metadata/name",
                        message=f"name {name!r} already names a run at {first.where}",
                        code="duplicate-name",
                    )
                )
            elif name in self._run_places:
                problems.append(
                    Problem(
                        pointer=f"{run[0]}/metadata/name",
                        message=f"name {name!r} already names a run at {self._run_places[name]}",
                        code="duplicate-name",
                    )
                )
        if named:
            problems += self._name_clashes(named)
        digests = self._digests
        for kind, pointer, value, declared in shared:
            seen = digests.get((kind, declared))
            if seen is not None and not seen.same(value):
                problems.append(
                    Problem(
                        pointer=pointer,
                        message=(
                            f"digest {declared!r} already stands for a different {kind}"
                            f" at {seen.where}"
                        ),
                        code="digest-clash",
                    )
                )
        if problems:
            return Admission(problems=tuple(problems))
        if run is not None:
            # Merge compares whole records; the others only need the place.
            if self.repeats:
                self._runs[run[1]["metadata"]["name"]] = _First(where, doc)
            else:
                self._run_places[run[1]["metadata"]["name"]] = where
        self._remember(doc, where, named, shared)
        return _ADMITTED

    def _known_bundle(self, doc: dict[str, Any], where: str) -> bool:
        """Admit a bundle of objects all admitted before (_fast.admission), if it is one."""
        known = (
            self._shortcut
            and "kind" not in doc
            and _fast_admission.known_bundle(doc, self._run_places, self._admitted, self._digests)
        )
        if known:
            self._run_places[doc["run"]["metadata"]["name"]] = where
        return known

    def _remember(
        self,
        doc: dict[str, Any],
        where: str,
        named: dict[str, tuple[str, dict[str, Any]]],
        shared: list[tuple[str, str, Any, str]],
    ) -> None:
        """Take the names and digests of an admitted document (the first keeps its place)."""
        for kind, (_, value) in named.items():
            key = (kind, value["metadata"]["name"])
            if key not in self._names:
                self._names[key] = _First(where, value)
        digests = self._digests
        for kind, _, value, declared in shared:
            if (kind, declared) not in digests:
                digests[kind, declared] = _First(where, value)
        if "kind" not in doc:
            if len(self._admitted) >= _MAX_ADMITTED:
                self._admitted.clear()
            for member_key, _, field in _BUNDLE_OBJECTS:
                member = doc.get(member_key)
                if member is not None:
                    self._admitted[id(member)] = (member, doc["run"]["spec"][field])

    def _members(
        self, doc: dict[str, Any]
    ) -> tuple[dict[str, tuple[str, dict[str, Any]]], list[tuple[str, str, Any, str]]]:
        """The named documents of ``doc`` (kind -> pointer, object) and the objects its
        digests stand for (kind, pointer, object, digest), less the protocol and
        environment objects admitted before under the same digest."""
        kind = doc.get("kind")
        if kind is not None:
            if kind == "BenchmarkRun":
                return {kind: ("", doc)}, list(_run_objects(doc, ""))
            found = _STANDALONE_DIGEST[kind](doc["spec"])
            return {kind: ("", doc)}, [(kind, "/spec", doc["spec"], found)]
        run = doc["run"]
        spec = run["spec"]
        named: dict[str, tuple[str, dict[str, Any]]] = {"BenchmarkRun": ("/run", run)}
        shared: list[tuple[str, str, Any, str]] = []
        admitted = self._admitted
        for key, member_kind, field in _BUNDLE_OBJECTS:
            member = doc.get(key)
            if member is None:
                continue
            declared = spec[field]
            seen = admitted.get(id(member))
            if seen is not None and seen[1] == declared:
                continue
            named[member_kind] = (_POINTERS[key], member)
            shared.append((member_kind, _SPEC_POINTERS[key], member["spec"], declared))
        shared.extend(_run_objects(run, "/run"))
        return named, shared

    def _name_clashes(self, named: dict[str, tuple[str, dict[str, Any]]]) -> Iterator[Problem]:
        for kind, (pointer, value) in named.items():
            name = value["metadata"]["name"]
            first = self._names.get((kind, name))
            if first is not None and not first.same(value):
                yield Problem(
                    pointer=f"{pointer}/metadata/name",
                    message=f"name {name!r} already names a different {kind} at {first.where}",
                    code="duplicate-name",
                )


def _run_objects(run: dict[str, Any], at: str) -> Iterator[tuple[str, str, Any, str]]:
    spec = run["spec"]
    for key, kind, field in _RUN_OBJECTS:
        value = spec.get(key)
        if value is not None:
            yield kind, f"{at}/spec/{key}", value, spec[field]
