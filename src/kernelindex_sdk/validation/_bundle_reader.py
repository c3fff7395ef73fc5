"""A quick pass for the common record of a file: a valid bundle whose protocol and
environment repeat, text for text, across its lines.

The pass only ever says "valid, and here is the value": any record it cannot prove
valid (bad JSON, a duplicate key, a schema or semantic problem, an unusual shape)
returns ``None``, and the caller checks it in full (``_jsontext.parse_document`` and
validation), which gives the problems their lines and columns. So a record passes
here only where the full check passes it too:

- the members of the top-level object are read one by one with the same strict
  hooks as ``_jsontext`` (duplicate keys, NaN and Infinity, numbers out of range,
  over-long integers), and the text gets ``_jsontext``'s checks for lone surrogates
  and depth;
- a bundle is schema-valid exactly when its shell (the bundle schema with each
  member's schema taken out) holds for its keys and each member is valid against
  the member's schema: :func:`_shell_schema` builds the shell and refuses (turning
  the pass off) any bundle schema where that does not follow from its form;
- a member holding an integral float is also checked against the strict copy;
- every semantic check runs on every record.

The text after the first member (protocol and environment, in the writers' order)
is the same on most lines of a file: it is read and validated once, and kept by its
exact text in a small table that is emptied when full. A later line that ends with a
kept tail has only its run read, by ``_json.quick_parse.quick_value`` (orjson, with a
proof that the strict hooks would have found nothing); what it cannot vouch for is
read member by member as above.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import sys
from typing import Any, Final

import jsonschema_rs

from .._base.schemas import BASE_URI, BUNDLE, SCHEMA_FILES, load_schemas
from .._json import text as _jsontext
from .._json.quick_parse import UNPROVEN, quick_value
from . import _quick_checks, _registry, _semantic
from ._kinds import detect_kind
from ._nesting import nesting_bound

__all__ = ["BundleReader"]

# The bundle's members whose values have a schema of their own, and its kind.
_MEMBER_KINDS: Final = {
    "run": "BenchmarkRun",
    "protocol": "BenchmarkProtocol",
    "environment": "ExecutionEnvironment",
}
# Keywords of the bundle schema under which the shell argument holds.
_SHELL_KEYWORDS: Final = frozenset(
    {"$schema", "$id", "title", "description", "type", "additionalProperties", "required"}
)
# JSON's whitespace, as json.loads skips it.
_WS: Final = re.compile(r"[ \t\n\r]*")
# The same characters, for one-character tests ("" is not among them: "" in "abc" holds).
_WS_CHARS: Final = frozenset(" \t\n\r")
_ESCAPED_SURROGATE: Final = _jsontext._ESCAPED_SURROGATE
MAX_DEPTH: Final = _jsontext.MAX_DEPTH
#: The most tails kept; past it the table starts again (a few kB each).
MAX_TAILS: Final = 64
# How the writers' bundles start: the run is the first member in published key order.
_RUN_HEAD: Final = b'{"run":'
_RUN_START: Final = len(_RUN_HEAD)


def _shell_schema() -> dict[str, Any] | None:
    """The bundle schema with each member's ``$ref`` replaced by ``true``; ``None`` when
    the schema has a form under which members are not checked by their ``$ref`` alone."""
    bundle = load_schemas()[SCHEMA_FILES[BUNDLE]]
    if not set(bundle) <= _SHELL_KEYWORDS | {"properties"}:
        return None
    if bundle.get("additionalProperties") is not False:
        return None
    properties = dict(bundle.get("properties", {}))
    for key, kind in _MEMBER_KINDS.items():
        member = properties.get(key)
        if member is None:
            continue
        if not set(member) <= {"$ref", "description"}:
            return None
        if member.get("$ref") != SCHEMA_FILES[kind]:
            return None
        properties[key] = True
    # Without its $id: the shell is no resource of the registry's, only resolves from it.
    return {k: v for k, v in bundle.items() if k != "$id"} | {"properties": properties}


def _shell_validator() -> Any:
    shell = _shell_schema()
    if shell is None:
        return None
    registry = jsonschema_rs.Registry(
        [(BASE_URI + name, schema) for name, schema in load_schemas().items()]
    )
    return jsonschema_rs.validator_for(
        shell, registry=registry, validate_formats=True, base_uri=BASE_URI + "bundle-shell.json"
    )


class _Flags:
    """What the hooks met while one member was read."""

    __slots__ = ("bad", "integral")

    def __init__(self) -> None:
        self.bad = False
        self.integral = False


class _Tail:
    """The members after the first, as read and checked once.

    ``after_run`` is what the quick path needs, made on its first use (``judged``):
    these members as a mapping and the protocol among them, when a run before them makes
    a valid bundle's shell (a verdict of the keys and of the values other than the run's
    alone); None when it does not.
    ``run_brackets`` is what :func:`quick_value` is given to bound a run's brackets
    before this tail, made with ``after_run`` (it depends on the tail alone).
    """

    __slots__ = ("after_run", "brackets", "judged", "members", "run_brackets", "surrogate")

    def __init__(self, members: list[tuple[str, Any]], surrogate: bool, brackets: int) -> None:
        self.members = members
        self.surrogate = surrogate
        self.brackets = brackets
        self.judged = False
        self.after_run: tuple[dict[str, Any], Any] | None = None
        self.run_brackets: int | None = None


class BundleReader:
    """Reads valid bundles quickly; see the module's docstring. One per input."""

    def __init__(self) -> None:
        self._shell = _shell_validator()
        self._tails: dict[str, _Tail] = {}
        self._last: tuple[str, _Tail] | None = None
        # The same tails by their UTF-8 bytes, for the quick path (see _quick_read).
        self._raw_tails: dict[bytes, _Tail] = {}
        self._raw_last: tuple[bytes, _Tail] | None = None
        # The shell's verdict by the bundle's keys, when all are members.
        self._shells: dict[tuple[str, ...], bool] = {}
        self._validators = {
            kind: (_registry.fast_validator(kind), _registry.strict_fast_validator(kind))
            for kind in _MEMBER_KINDS.values()
        }
        self._run_validator = self._validators["BenchmarkRun"][0]
        # The most containers a valid run nests: the quick path accepts a run only when
        # the schema passes it, so where this bound keeps the whole text within
        # MAX_DEPTH its brackets need no count.
        self._run_nesting = nesting_bound("BenchmarkRun")
        flags = self._flags = _Flags()

        def object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            obj = dict(pairs)
            if len(obj) != len(pairs):
                flags.bad = True
            return obj

        def constant(_: str) -> None:
            flags.bad = True

        def number(literal: str) -> float:
            value = float(literal)
            if not math.isfinite(value):
                flags.bad = True
            elif value.is_integer():
                flags.integral = True
            return value

        def integer(literal: str) -> int | None:
            if len(literal.lstrip("-")) > _jsontext.MAX_INT_DIGITS:
                flags.bad = True
                return None
            return int(literal)

        def scanner(parse_int: Any) -> Any:
            decoder = json.JSONDecoder(
                object_pairs_hook=object_pairs,
                parse_constant=constant,
                parse_float=number,
                parse_int=parse_int,
            )
            # The decoder's own scanner, as json.loads uses it.
            return decoder.scan_once  # type: ignore[attr-defined]

        # Where Python refuses integers of more than MAX_INT_DIGITS digits (its default
        # limit), int() in C refuses them as the hook would (ValueError: left to the
        # full check), three microseconds a record sooner.
        self._scan_int_limited = scanner(None)
        self._scan_int_hooked = scanner(integer)
        self._scan = self._scan_int_hooked
        self._scanstring = json.decoder.scanstring  # type: ignore[attr-defined]

    @property
    def enabled(self) -> bool:
        """Whether the quick pass runs (the bundle schema has the expected form)."""
        return self._shell is not None

    def read(self, data: str | bytes) -> dict[str, Any] | None:
        """The record as a JSON value when it is a valid bundle; ``None`` to check it in full."""
        if self._shell is None:
            return None
        try:
            quick = self._quick_read(data)
        except (ValueError, IndexError, KeyError, TypeError):
            quick = None
        if quick is not None:
            return quick
        text: str | None = None
        if isinstance(data, bytes):
            if not data.startswith(b"\xef\xbb\xbf"):
                with contextlib.suppress(UnicodeDecodeError):
                    text = data.decode("utf-8")
        elif not _jsontext.has_surrogate(data):
            # A str may hold a surrogate as a character (decoded bytes cannot), which the
            # checks of _members (for escapes) would not see: the full check names it.
            text = data
        if text is None:
            return None
        limited = sys.get_int_max_str_digits() == _jsontext.MAX_INT_DIGITS
        self._scan = self._scan_int_limited if limited else self._scan_int_hooked
        try:
            return self._read(text)
        except (ValueError, RecursionError, IndexError, KeyError, TypeError, StopIteration):
            # StopIteration: the scanner found no value where one must be.
            return None

    def _member(self, text: str, idx: int) -> tuple[str, Any, int] | None:
        """Read ``"key": value`` at ``idx``; return key, value and where it ends."""
        if text[idx] != '"':
            return None
        key, idx = self._scanstring(text, idx + 1, True)
        idx = _skip(text, idx)
        if text[idx] != ":":
            return None
        flags = self._flags
        flags.bad = flags.integral = False
        value, idx = self._scan(text, _skip(text, idx + 1))
        if flags.bad or not self._valid_member(key, value, flags.integral):
            return None
        return key, value, idx

    def _valid_member(self, key: str, value: Any, integral: bool) -> bool:
        kind = _MEMBER_KINDS.get(key)
        if kind is None:
            # Another key ("$schema"): the shell checks it, where no integer is expected.
            return not integral
        fast, strict = self._validators[kind]
        # As _registry.fast_is_valid: what jsonschema-rs cannot take is not valid.
        try:
            return bool(fast.is_valid(value)) and (not integral or bool(strict.is_valid(value)))
        except (ValueError, TypeError):
            return False

    def _next(self, text: str, idx: int) -> int | None:
        """Past the separator after a member: the next member's start, or -1 at the end."""
        idx = _skip(text, idx)
        if text[idx] == ",":
            return _skip(text, idx + 1)
        if text[idx] == "}" and _skip(text, idx + 1) == len(text):
            return -1
        return None

    def _tail(self, text: str, end: int) -> _Tail | None:
        """The members after the first (which ends at ``end``), kept by their text."""
        last = self._last
        # Most lines end as the line before did: compared in place, no copy to hash.
        if last is not None and len(text) - end == len(last[0]) and text.endswith(last[0]):
            return last[1]
        rest = text[end:]
        tail = self._tails.get(rest)
        if tail is not None:
            self._last = (rest, tail)
            return tail
        idx = self._next(text, end)
        members = []
        while idx is not None and idx != -1:
            member = self._member(text, idx)
            if member is None:
                return None
            key, value, idx = member
            members.append((key, value))
            idx = self._next(text, idx)
        if idx is None:
            return None
        tail = _Tail(
            members,
            _ESCAPED_SURROGATE.search(rest) is not None,
            rest.count("[") + rest.count("{"),
        )
        if len(self._tails) >= MAX_TAILS:
            self._tails.clear()
            self._raw_tails.clear()
        self._tails[rest] = tail
        self._last = (rest, tail)
        # A str may hold a lone surrogate, which has no UTF-8: no quick path for it.
        with contextlib.suppress(UnicodeEncodeError):
            self._raw_tails[rest.encode("utf-8")] = tail
        return tail

    def _kept_tail(self, raw: bytes) -> tuple[bytes, _Tail] | None:
        """A kept tail that ``raw`` ends with, found without reading the run."""
        last = self._raw_last
        if last is not None and raw.endswith(last[0]):
            return last
        # The tail of a writer's bundle starts at the comma before "protocol".
        at = raw.rfind(b'"protocol"')
        comma = raw.rfind(b",", 0, at) if at > 0 else -1
        if comma < 0 or not _jsontext.is_blank(raw[comma + 1 : at]):
            return None
        rest = raw[comma:]
        tail = self._raw_tails.get(rest)
        return None if tail is None else (rest, tail)

    # Once per record, its steps written out: each call costs as much as a check.
    def _quick_read(self, data: str | bytes) -> dict[str, Any] | None:  # noqa: PLR0911
        """:meth:`read` of a bundle that ends with a kept tail, its run read by
        ``quick_value``; ``None`` to read it member by member.

        Whatever the split point, the text is ``{"run":`` then one whole JSON value
        (``quick_value`` refuses anything else) then a tail that was read and checked
        as the members after a first one: so the text is that object, and no other.
        """
        if isinstance(data, str):
            try:
                data = data.encode("utf-8")
            except UnicodeEncodeError:
                return None
        # (A slice compared: bytes.startswith parses its arguments from a format string.)
        if data[:_RUN_START] != _RUN_HEAD:
            return None
        # _kept_tail's common answer first: the tail of the line before.
        kept = self._raw_last
        if kept is None or not data.endswith(kept[0]):
            kept = self._kept_tail(data)
            if kept is None:
                return None
        rest, tail = kept
        if not tail.judged:
            self._judge(tail)
        after = tail.after_run
        if after is None or tail.surrogate:
            return None
        run = quick_value(data[_RUN_START : len(data) - len(rest)], tail.run_brackets)
        # As _valid_member: what jsonschema-rs cannot take is not valid.
        try:
            valid = run is not UNPROVEN and self._run_validator.is_valid(run)
        except (ValueError, TypeError):
            valid = False
        if not valid:
            return None
        self._raw_last = kept
        members, protocol = after
        doc = {"run": run, **members}
        # _semantic_passes, its quick pass written out: once per record.
        if _quick_checks.passes(run, protocol):
            return doc
        return doc if self._semantic_passes(doc, run, protocol) else None

    def _judge(self, tail: _Tail) -> None:
        """Make what the quick path needs of ``tail`` (see :class:`_Tail`), once."""
        tail.after_run = self._after_run(tail)
        # As _members below, the brackets of the whole text bound its depth: the run's
        # may be as many as the tail and the opening brace leave. Or, where the schema
        # bounds a valid run's nesting so that the whole text (the bundle's brace, the
        # run beside the tail's members) stays within MAX_DEPTH, none are counted: a run
        # the schema refuses goes to the full check below.
        nesting = self._run_nesting
        tail.run_brackets = (
            None
            if nesting is not None and 1 + nesting + tail.brackets <= MAX_DEPTH
            else MAX_DEPTH - 1 - tail.brackets
        )
        tail.judged = True

    def _after_run(self, tail: _Tail) -> tuple[dict[str, Any], Any] | None:
        """``tail.after_run`` (see :class:`_Tail`): the bundle a run and these members make
        is judged by :meth:`_document` with any valid run, as its keys and the values
        other than the run's decide."""
        members = dict(tail.members)
        doc = {"run": {}, **members}
        if len(doc) != len(tail.members) + 1 or detect_kind(doc) != BUNDLE:
            return None
        return (members, members.get("protocol")) if self._shell_valid(doc) else None

    def _members(self, text: str) -> list[tuple[str, Any]] | None:
        """The top-level members, each read strictly and valid against its schema."""
        idx = _skip(text, 0)
        if text[idx] != "{":
            return None
        first = self._member(text, _skip(text, idx + 1))
        if first is None:
            return None
        key, value, end = first
        if key not in _MEMBER_KINDS and key != "$schema":
            return None  # a bare record (apiVersion first): not a bundle
        tail = self._tail(text, end)
        if tail is None:
            return None
        # As _jsontext.parse_document: only such text can hold a lone surrogate or
        # nest past MAX_DEPTH; leave it to the full walk.
        brackets = text.count("[", 0, end) + text.count("{", 0, end) + tail.brackets
        # The regular expression only where an escape could start one (rarely); a
        # backslash is found in C at memory speed, "\\u" several times slower.
        surrogate = tail.surrogate or (
            text.find("\\", 0, end) != -1 and _ESCAPED_SURROGATE.search(text, 0, end) is not None
        )
        return None if surrogate or brackets > MAX_DEPTH else [(key, value), *tail.members]

    def _shell_valid(self, doc: dict[str, Any]) -> bool:
        """Whether the bundle's shell (members out) is valid; kept by the keys when all
        are members, whose values the shell does not look at."""
        keys = tuple(doc)
        members_only = _MEMBER_KINDS.keys() >= doc.keys()
        known = self._shells.get(keys) if members_only else None
        if known is None:
            shell = {k: ({} if k in _MEMBER_KINDS else v) for k, v in doc.items()}
            known = bool(self._shell.is_valid(shell))
            if members_only:
                # At most one entry per ordering of the three members.
                self._shells[keys] = known
        return known

    def _read(self, text: str) -> dict[str, Any] | None:
        members = self._members(text)
        return None if members is None else self._document(members)

    def _document(self, members: list[tuple[str, Any]]) -> dict[str, Any] | None:
        """The bundle of these members (each valid) when it is valid."""
        doc = dict(members)
        if len(doc) != len(members) or detect_kind(doc) != BUNDLE:
            return None
        if not self._shell_valid(doc):
            return None
        return doc if self._semantic_passes(doc, doc["run"], doc.get("protocol")) else None

    def _semantic_passes(self, doc: dict[str, Any], run: Any, protocol: Any) -> bool:
        """Whether no semantic check reports a problem for the bundle ``doc``."""
        if _quick_checks.passes(run, protocol):
            return True
        view = _semantic.RecordView(run=run, protocol=protocol, environment=doc.get("environment"))
        return not any(True for check in _semantic.CHECKS for _ in check(view))


def _skip(text: str, idx: int) -> int:
    """Past JSON whitespace from ``idx``."""
    # The writers' forms first: no space, or one space before a non-space.
    if text[idx : idx + 1] not in _WS_CHARS:
        return idx
    if text[idx] == " " and text[idx + 1 : idx + 2] not in _WS_CHARS:
        return idx + 1
    found = _WS.match(text, idx)
    return idx if found is None else found.end()
