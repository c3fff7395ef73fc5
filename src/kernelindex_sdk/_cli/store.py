"""``kernelindex ingest``, ``export`` and ``migrate``: records into a store and back out,
and a store brought to this version's layout."""

from __future__ import annotations

import argparse

from .._base.display import display_path, printable
from ..errors import ArgumentError
from ..exporters import FORMATS
from ..provenance import normalize_commit_time
from ..store import (
    DEFAULT_DB,
    ENV_VAR,
    LAYOUT_VERSION,
    IngestReport,
    migrate_store,
    open_store,
    parse_url,
)
from ._common import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    Streams,
    add_verify_digests,
    names,
    notice,
    stdout_fd,
)
from .exports import FORMAT_HELP, export_formatted

__all__ = ["add_db", "add_provenance", "register"]

_DB_HELP = (
    f"the store: a SQLite path or sqlite:///PATH, or postgresql://... (default: ${ENV_VAR},"
    f" else {DEFAULT_DB} in the current directory)"
)
_FILTERS = (
    ("--operation", "operation", "the workload's operation (jsd)"),
    ("--pass", "pass_", "the workload's pass (forward)"),
    ("--provider", "provider", "the implementation's provider (triton)"),
    ("--hardware", "hardware", "the GPU, hardware.product ('NVIDIA H200')"),
    ("--branch", "branch", "the kernelindex.dev/branch annotation"),
    ("--commit", "commit", "the kernelindex.dev/commit annotation"),
    ("--workload-digest", "workload_digest", "the run's workload digest"),
    ("--protocol-digest", "protocol_digest", "the run's protocol digest"),
    ("--status", "status", "the run's status (passed)"),
)


def add_db(parser: argparse.ArgumentParser) -> None:
    """``--db URL``, as every store command takes it."""
    parser.add_argument("--db", metavar="URL", default=None, help=_DB_HELP)


def commit_time(text: str) -> str:
    """An RFC 3339 timestamp with a zone, in the published UTC form."""
    try:
        return normalize_commit_time(text)
    except ArgumentError as err:
        raise argparse.ArgumentTypeError(err.reason) from None


def add_provenance(parser: argparse.ArgumentParser) -> None:
    """``--commit``, ``--branch``, ``--commit-time`` for records that lack them."""
    parser.add_argument(
        "--commit", help="kernelindex.dev/commit annotation for runs that have none"
    )
    parser.add_argument(
        "--branch", help="kernelindex.dev/branch annotation for runs that have none"
    )
    parser.add_argument(
        "--commit-time",
        metavar="RFC3339",
        type=commit_time,
        help="kernelindex.dev/commit-time annotation for runs that have none (stored in UTC)",
    )


def add_filters(parser: argparse.ArgumentParser) -> None:
    """The run filters of ``Store.rows``; all given must match."""
    for flag, dest, text in _FILTERS:
        parser.add_argument(flag, dest=dest, default=None, help=text)
    parser.add_argument("--names", type=names, default=None, help="only these run names")


def filters_of(args: argparse.Namespace) -> dict[str, object]:
    """The filters given on the command line, for ``Store.rows`` and ``Store.export``."""
    chosen: dict[str, object] = {dest: getattr(args, dest) for _, dest, _ in _FILTERS}
    chosen["names"] = args.names
    return chosen


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ingest = sub.add_parser(
        "ingest",
        help="validate records and store them",
        description=(
            "Validate the records of FILES and folders as validate does and store them,"
            " each file in one transaction. A record the store holds already is skipped and"
            " counted (so is one that differs only in its provenance annotations: the first"
            " arrival keeps its own). A file with an invalid record, or a run whose name the"
            " store holds with other content, is refused whole: each problem names both"
            " places, and the exit status is 1 (2 when a path cannot be read)."
        ),
    )
    ingest.add_argument("paths", nargs="+", metavar="FILE|DIR")
    add_db(ingest)
    add_provenance(ingest)
    add_verify_digests(ingest)
    ingest.set_defaults(run=_cmd_ingest)

    export = sub.add_parser(
        "export",
        help="write stored records as JSON Lines",
        description=(
            "Write the stored records that match every filter as JSON Lines, in the order"
            " they arrived: a record that came as a JSON Lines line comes back as that line,"
            " byte for byte; one that came as a .json document as its compact published"
            " form. OUT is replaced atomically, and may not be the store's own file."
        ),
    )
    add_db(export)
    add_filters(export)
    export.add_argument(
        "-o", "--out", default="-", metavar="OUT.jsonl", help="file to write (default: stdout)"
    )
    export.add_argument("--format", choices=("jsonl", *FORMATS), default="jsonl", help=FORMAT_HELP)
    export.set_defaults(run=_cmd_export)

    migrate = sub.add_parser(
        "migrate",
        help="migrate a store to this version's layout",
        description=(
            "Migrate the store to this version's layout, in one transaction: it is left"
            " all of its old layout or all of the new. Commands that only read a store"
            " (history, site, export, compare --history) never change it, and refuse a"
            " store that needs migrating; ingest migrates it too."
        ),
    )
    add_db(migrate)
    migrate.set_defaults(run=_cmd_migrate)


def _summary(report: IngestReport) -> str:
    skipped = report.identical + report.provenance_only
    text = (
        f"ingested {report.files} file(s): {report.added} record(s) added,"
        f" {skipped} skipped ({report.identical} already stored,"
        f" {report.provenance_only} differing only in provenance)"
    )
    if report.refused:
        text += f"; {report.refused} refused"
        if report.clashes:
            text += f" ({report.clashes} clash(es) with the store)"
    return text


def _without_commit(report: IngestReport) -> str:
    """The line for runs stored without a commit: their order, and how to add one."""
    return (
        f"{report.without_commit} run(s) stored without a kernelindex.dev/commit annotation:"
        " their points are ordered by observation time only; add provenance with ingest"
        " --commit/--branch/--commit-time (kernelindex bench and import liger take the same)"
    )


def _cmd_ingest(args: argparse.Namespace, io: Streams) -> int:
    with open_store(args.db) as store:
        report = store.ingest(
            args.paths,
            commit=args.commit,
            branch=args.branch,
            commit_time=args.commit_time,
            verify_digests=args.verify_digests,
            stdin=io.stdin,
            on_notice=notice(io),
        )
    for problem in report.problems:
        print(str(problem), file=io.stderr)
    for error in report.input_errors:
        print(f"kernelindex: {error}", file=io.stderr)
    print(_summary(report), file=io.stderr)
    if report.without_commit:
        print(_without_commit(report), file=io.stderr)
    if report.input_errors:
        return EXIT_USAGE
    return EXIT_INVALID if report.problems else EXIT_OK


def _cmd_export(args: argparse.Namespace, io: Streams) -> int:
    chosen = filters_of(args)
    if args.format != "jsonl":
        return export_formatted(args, io, chosen)
    with open_store(args.db, create=False) as store:
        if args.out == "-":
            for fd in stdout_fd(io):
                store.refuse_output(fd)
            count = 0
            for count, line in enumerate(store.export_lines(**chosen), 1):  # noqa: B007
                io.stdout.write(line)
        else:
            count = store.export(args.out, **chosen)
    where = "standard output" if args.out == "-" else printable(display_path(args.out))
    print(f"exported {count} record(s) to {where}", file=io.stderr)
    return EXIT_OK


def _cmd_migrate(args: argparse.Namespace, io: Streams) -> int:
    found = migrate_store(args.db)
    # As messages show it: a password in a URL as ***.
    shown = printable(display_path(parse_url(args.db).shown))
    if found == LAYOUT_VERSION:
        print(f"{shown}: already layout version {LAYOUT_VERSION}", file=io.stderr)
    else:
        print(f"{shown}: migrated from layout version {found} to {LAYOUT_VERSION}", file=io.stderr)
    return EXIT_OK
