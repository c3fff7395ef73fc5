"""The records of one input, read and checked text by text: the one reader of records.

Every command that reads records from files (validate, digest, compare, report, merge,
ingest, and through ingest the dashboard) reads them through
``documents.check_documents``, which hands each document's text to a
:class:`RecordReader`. For each text it gives the value, or the problems (each placed in
the text): strict JSON, the schema, the semantic checks, the digests when asked, the
store's rules when reading for the store, then the rules of the input
(:class:`~._input_rules.InputRules`).

It may take the fast path (``_fast``): a line that repeats the protocol and environment
of a line found valid has only its run read and checked. The choice is the reader's
alone; ``KERNELINDEX_STRICT_READ=1`` turns it off, and so does ``verify_digests`` (the
fast path recomputes no digest).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .._json import text as _jsontext
from ..errors import Problem
from . import _document, _fast
from ._input_rules import InputRules

__all__ = ["Reading", "RecordReader"]


class Reading(NamedTuple):
    """What :meth:`RecordReader.read` found of one text (a tuple: one is made a record).

    Attributes:
        value: The record's JSON value when it has no problem (else None). Records read
            by the fast path share their protocol and environment objects with other
            records of the input: the caller must not change them.
        problems: Its problems, each with its line and column in the text where known
            (at most ``MAX_PROBLEMS``, then one counting the rest).
        repeat: Reading with ``repeats``: the record repeats one read before, with the
            same content.
    """

    value: Any
    problems: tuple[Problem, ...] = ()
    repeat: bool = False


class RecordReader:
    """Reads and checks the records of one input (one namespace), one text at a time.

    Args:
        verify_digests: Also recompute every digest whose object a record carries.
        one_input: Apply the rules of one input across the records (a run name once; a
            name or a digest always for one object); False checks each on its own.
        repeats: A run repeated with the same content is a repeat (merge drops it), not
            a second run of one name.
        for_store: Also apply the store's rules (``_store_rules``: each latency the
            store keeps fits its 64-bit column).
    """

    def __init__(
        self,
        *,
        verify_digests: bool = False,
        one_input: bool = True,
        repeats: bool = False,
        for_store: bool = False,
    ) -> None:
        self._verify_digests = verify_digests
        self._for_store = for_store
        self._rules = InputRules(repeats=repeats) if one_input else None
        self._bundles = _fast.BundleReader() if _fast.enabled() and not verify_digests else None

    def read(self, text: str | bytes, where: str) -> Reading:
        """Read and check one document's text.

        Args:
            text: The document (bytes are UTF-8).
            where: How another record's problem names this one's place (``file``,
                ``file:line``), should it clash with it.
        """
        bundles = self._bundles
        if bundles is not None and isinstance(text, bytes):
            value = bundles.read(text)
            if value is not None:
                # Valid, and within the store's rules: its run passed _fast.passes.
                return self._admitted(value, where, text)
        parsed = _fast.parse(text)
        problems = tuple(
            _document.parsed_problems(
                parsed, verify_digests=self._verify_digests, for_store=self._for_store
            )
        )
        if problems:
            return Reading(None, problems)
        reading = self._admitted(parsed.value, where, parsed.text)
        if bundles is not None and isinstance(text, bytes) and not reading.problems:
            bundles.learn(text, parsed.value)
        return reading

    def _admitted(self, value: Any, where: str, text: str | bytes | None) -> Reading:
        """The reading of a valid value: the input's rules."""
        if self._rules is None:
            return Reading(value)
        admission = self._rules.admit(value, where)
        if admission.problems:
            return Reading(None, tuple(_jsontext.located(admission.problems, text)))
        return Reading(value, (), admission.repeat)
