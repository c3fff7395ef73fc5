"""What an ingest did: the counts and every problem."""

from __future__ import annotations

import attrs

from ..errors import FileProblem, InputError, StoreClashError

__all__ = ["IngestReport"]


@attrs.frozen(kw_only=True)
class IngestReport:
    """What an ingest did.

    Attributes:
        files: Files read (each one transaction).
        added: Records stored (runs, and protocol or environment documents).
        identical: Records skipped because the store holds the same record.
        provenance_only: Records skipped because the store holds the same record but
            for its provenance annotations (the first arrival's are kept).
        refused: Records not stored because their file was refused.
        clashes: Runs refused because the store holds their name with other content.
        without_commit: Runs added that carry no ``kernelindex.dev/commit`` annotation:
            a history orders their points by when they were observed only.
        problems: Every problem, each with its file and line: invalid records and clashes.
        input_errors: Paths that could not be read.
    """

    files: int = 0
    added: int = 0
    identical: int = 0
    provenance_only: int = 0
    refused: int = 0
    clashes: int = 0
    without_commit: int = 0
    problems: tuple[FileProblem, ...] = ()
    input_errors: tuple[InputError, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether every record was stored or skipped, and every path read."""
        return not self.problems and not self.input_errors

    def check(self) -> None:
        """Raise unless every path was read and every record stored or skipped.

        Raises:
            InputError: the first path that could not be read.
            StoreClashError: listing every invalid or clashing record.
        """
        if self.input_errors:
            raise self.input_errors[0]
        if self.problems:
            raise StoreClashError(problems=self.problems)

    def __add__(self, other: IngestReport) -> IngestReport:
        return IngestReport(
            files=self.files + other.files,
            added=self.added + other.added,
            identical=self.identical + other.identical,
            provenance_only=self.provenance_only + other.provenance_only,
            refused=self.refused + other.refused,
            clashes=self.clashes + other.clashes,
            without_commit=self.without_commit + other.without_commit,
            problems=self.problems + other.problems,
            input_errors=self.input_errors + other.input_errors,
        )
