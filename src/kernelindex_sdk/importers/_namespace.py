"""Names an import may give, and the runs it need not write again.

One import writes into one namespace (the rules of ``kernelindex validate``): a run name
appears once, and a protocol or environment name always names the same spec. Records
already in the output file take their names first. A run whose spec equals that of a
run already in the file is not written again: re-importing a CSV adds only the rows the
file does not hold yet (a row repeated in the CSV counts as often as it appears).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from typing import Any

import attrs

from .._base import names as _names
from ..convert import dump
from ..digest import canonical_bytes

__all__ = ["Namespace", "fingerprint"]

_KEYS = ("run", "protocol", "environment")


def fingerprint(spec: Any) -> str:
    """SHA-256 of a spec's RFC 8785 form: equal for equal JSON values."""
    return hashlib.sha256(canonical_bytes(spec)).hexdigest()


@attrs.define
class Namespace:
    """Names taken (runs; shared kind -> name -> spec fingerprint) and runs already written."""

    _runs: set[str] = attrs.field(factory=set)
    _shared: dict[tuple[str, str], str] = attrs.field(factory=dict)
    _written: Counter[str] = attrs.field(factory=Counter)
    _next_suffix: dict[str, int] = attrs.field(factory=dict)

    @classmethod
    def of(cls, records: Iterable[Any]) -> Namespace:
        """The namespace of existing records: bundles or single documents, as JSON values or
        models; anything else is passed over, for it names nothing."""
        space = cls()
        for record in records:
            value = dump(record) if attrs.has(type(record)) else record
            if isinstance(value, dict):
                space._add(value)
        return space

    def _add(self, value: dict[str, Any]) -> None:
        docs = [value] if "kind" in value else [value.get(key) for key in _KEYS]
        for doc in docs:
            if not isinstance(doc, dict):
                continue
            kind, metadata = doc.get("kind"), doc.get("metadata")
            name = metadata.get("name") if isinstance(metadata, dict) else None
            if not isinstance(name, str) or not isinstance(kind, str):
                continue
            try:
                print_ = fingerprint(doc.get("spec"))
            except (ValueError, TypeError, RecursionError):
                print_ = ""  # a spec no digest can take still takes its name
            if kind == "BenchmarkRun":
                self._runs.add(name)
                self._written[print_] += 1
            else:
                self._shared.setdefault((kind, name), print_)

    def already_written(self, run_spec: Any) -> bool:
        """Whether an equal run is in the output already; each one excuses one new run."""
        if not self._written:
            return False
        key = fingerprint(run_spec)
        if self._written[key] > 0:
            self._written[key] -= 1
            return True
        return False

    def shared(self, kind: str, base: str, spec: Any) -> str:
        """The name of a shared document: ``base``, or with the spec's hash when taken."""
        print_ = fingerprint(spec)
        for candidate in (base, _names.name(base, suffix=print_[: _names.HASH_LENGTH])):
            if self._shared.setdefault((kind, candidate), print_) == print_:
                return candidate
        # Two specs whose hashes agree in 8 hex digits: use all 64.
        candidate = _names.name(base, suffix=print_)
        self._shared[(kind, candidate)] = print_
        return candidate

    def run(self, base: str) -> str:
        """A free run name: ``base``, else ``base-2``, ``base-3``... the first not taken."""
        candidate = base
        number = self._next_suffix.get(base, 1)
        while candidate in self._runs:
            number += 1
            candidate = _names.name(base, suffix=str(number))
        self._next_suffix[base] = number
        self._runs.add(candidate)
        return candidate
