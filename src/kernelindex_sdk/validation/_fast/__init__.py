"""The fast path of reading records: one wing, beside the plain path, with one meaning.

The plain path reads a record's text with ``_json.text.parse_document`` (Python's
``json`` with hooks that refuse duplicate keys, NaN, numbers out of range and over-long
integers, and note integral floats), validates the value with jsonschema-rs against the
packaged schemas (python-jsonschema says what is wrong), runs the semantic table
(``_semantic.CHECKS``), then the input's rules (``InputRules``). The fast path answers
only "valid, and this is the value": whatever it cannot prove goes down the plain path,
which names the problems. So each of its answers must be the plain path's. Why it is:

1. **Text** (:func:`.text.quick_value`). orjson accepts only RFC 8259 text in UTF-8: no
   byte order mark, NaN, Infinity, control character in a string, invalid UTF-8, lone
   surrogate escape, or number beyond a double; ``json`` accepts every such text and
   reads it to orjson's value (both read a number to the nearest double), except that
   orjson reads an integer outside [-2^63, 2^64) as a float. orjson writes every float
   of 1e16 or more (all integral) with ``e+`` and every other integral float ending in
   ``.0``: a writing with either is refused, so no integer became a float and ``json``
   notes no integral float. An integer orjson reads has at most 20 digits (none too
   long). Without ``\\u`` escapes a text holds no lone surrogate. A text with at most
   ``MAX_DEPTH`` brackets nests no deeper (where a schema must then pass the value, the
   schema's bound may stand for the count: see 4). Duplicate keys: without ``\\u``
   escapes each colon of the text is the one after a key or a colon of a string,
   written as itself, and so it is in orjson's writing of the value; a repeated key
   leaves the value a key short (and its first value's strings gone), so the writing
   has fewer colons. Equal counts (or equal texts) leave no room for one.
2. **Patterns** (:func:`.patterns.end_only`). jsonschema-rs's ``$`` matches only at the
   end of the string, so ``$(?!\\n)`` and ``$`` match the same strings there; the
   rewrite touches no pattern with another group construct or an escaped ``$``.
3. **Checks** (:func:`.checks.passes`). It is True only when, for the run and the
   protocol given, every function of the table yields nothing; its docstrings say
   which rule of which check each step is. It answers False for any table other than
   the one it was taught. True also means the store's rules
   (``_store_rules.STORE_CHECKS``) find nothing: it takes only latencies (in
   ``latencyNs`` or measured) that are integers of nanoseconds in [0, 2^52), which
   the store's 64-bit columns hold.
4. **Bundles** (:class:`.bundles.BundleReader`). A line ``L = {"run":`` X T was found
   valid by the plain path, with X one whole JSON value (orjson reads it) and T
   starting ``,"protocol":``. JSON's grammar reads one value after ``"run":``, so T is
   the rest of L's members and the closing brace, and L's value less ``run`` is T's
   members. A later line ``L' = {"run":`` X' T, with X' vouched for by ``quick_value``
   and valid against the run's schema:
   - parses strictly to ``{"run": X', **members(T)}`` with no problem: X' has none (1),
     and T none, for T had none in L (a duplicate key, a ``run`` key, a bad number or
     nesting too deep in T was L's problem too); integral floats in T did not make L
     invalid, so they make no member invalid (each is checked strictly in L); X' sits
     one level inside the bundle, and nests no deeper than ``MAX_DEPTH - 1``: the run's
     schema admits no deeper value (:func:`.nesting.nesting_bound`, read from the
     schema's own words), else its brackets are counted;
   - is schema-valid: the shipped bundle schema (its form checked by
     ``bundles._members_judged_alone``, else the reader is off) holds exactly when each
     member holds against its own schema and the keys and other members hold against
     the rest; L' has L's keys and members but the run, and X' holds against the
     run's schema;
   - passes the table: the table reads only the run and the protocol, and ``passes``
     said so for X' with T's protocol (3).
   Then the input's rules run on the value, as in the plain path; the store's rules
   hold (3).
5. **Admission** (:func:`.admission.known_bundle`). It answers True only where
   ``InputRules.admit`` would find no problem and remember nothing but the run's place
   (its docstring says why), and admit then remembers that place.

``KERNELINDEX_STRICT_READ=1`` (:func:`.switch.enabled`) turns all five off. CI runs the
readers' tests both ways (``.ci/run``), so the tests that pin the plain path's answers
hold the fast path to them too; tests/validation/test_fast_*.py hold each step to the
plain one on hostile and generated inputs.
"""

from __future__ import annotations

from .bundles import BundleReader
from .checks import passes
from .switch import STRICT_READ, enabled
from .text import UNPROVEN, parse, quick_value

__all__ = [
    "STRICT_READ",
    "UNPROVEN",
    "BundleReader",
    "enabled",
    "parse",
    "passes",
    "quick_value",
]
