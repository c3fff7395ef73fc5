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

from .. import _names
from ..digest import canonical_bytes

__all__ = ["Namespace", "fingerprint"]

_KEYS = (
    ("run", "BenchmarkRun"),
    ("protocol", "BenchmarkProtocol"),
    ("environment", "ExecutionEnvironment"),
)


def fingerprint(spec: Any) -> str:
    """SHA-256 of a spec's RFC 8785 form: equal for equal JSON values."""
    return hashlib.sha256(canonical_bytes(spec)).hexdigest()


@attrs.define
class Namespace:
    """Taken names (kind -> name -> spec fingerprint) and the runs already written."""

    _taken: dict[tuple[str, str], str] = attrs.field(factory=dict)
    _written: Counter[str] = attrs.field(factory=Counter)
    _next_suffix: dict[str, int] = attrs.field(factory=dict)

    @classmethod
    def of(cls, records: Iterable[Any]) -> Namespace:
        """The namespace of existing bundles (JSON values); what is not a bundle is passed over."""
        space = cls()
        for record in records:
            if not isinstance(record, dict):
                continue
            for key, kind in _KEYS:
                doc = record.get(key)
                try:
                    name = doc["metadata"]["name"]  # type: ignore[index]
                    print_ = fingerprint(doc.get("spec"))  # type: ignore[union-attr]
                except (KeyError, TypeError, AttributeError, ValueError):
                    continue
                if not isinstance(name, str):
                    continue
                space._taken.setdefault((kind, name), print_)
                if kind == "BenchmarkRun":
                    space._written[print_] += 1
        return space

    def already_written(self, run_spec: Any) -> bool:
        """Whether an equal run is in the output already; each one excuses one new run."""
        key = fingerprint(run_spec)
        if self._written[key] > 0:
            self._written[key] -= 1
            return True
        return False

    def shared(self, kind: str, base: str, spec: Any) -> str:
        """The name of a shared document: ``base``, or with the spec's hash when taken."""
        print_ = fingerprint(spec)
        for candidate in (base, _names.name(base, suffix=print_[: _names.HASH_LENGTH])):
            if self._taken.setdefault((kind, candidate), print_) == print_:
                return candidate
        # Two specs whose hashes agree in 8 hex digits: use all 64.
        candidate = _names.name(base, suffix=print_)
        self._taken[(kind, candidate)] = print_
        return candidate

    def run(self, base: str, spec: Any) -> str:
        """A free run name: ``base``, else ``base-2``, ``base-3``... the first not taken."""
        print_ = fingerprint(spec)
        candidate = base
        number = self._next_suffix.get(base, 1)
        while ("BenchmarkRun", candidate) in self._taken:
            number += 1
            candidate = _names.name(base, suffix=str(number))
        self._next_suffix[base] = number
        self._taken[("BenchmarkRun", candidate)] = print_
        return candidate
