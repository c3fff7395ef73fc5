"""``kernelindex compare`` and ``report``: records read back as tables, gates and plots."""

from __future__ import annotations

import argparse

from .. import compare, documents, report
from .._analysis import plot as _plot
from .._base.files import check_output_file, refuse_overwriting_inputs
from ..errors import MissingDependencyError
from . import history
from ._common import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    Streams,
    add_verify_digests,
    percent,
    stdout_fd,
)
from ._verdict import load as _load
from ._verdict import problems as _problems
from ._verdict import verdict as _verdict
from ._verdict import write as _write

_LEFT_OUT = " (as validate does); a record whose declared digest differs is invalid, left out"

__all__ = ["register"]


def _cmd_compare(args: argparse.Namespace, io: Streams) -> int:
    if history.wants_branch(args):
        # compare --history BRANCH NEW: the base comes from the store (_cli/history.py).
        return history.compare_with_branch(args, io)
    if args.base == documents.STDIN and args.new == documents.STDIN:
        # Standard input reads once: NEW would be an empty document, not a second input.
        print(
            "kernelindex: compare: BASE and NEW cannot both be '-' (stdin is read once)",
            file=io.stderr,
        )
        return EXIT_USAGE
    refuse_overwriting_inputs(stdout_fd(io), [args.base, args.new])
    base = _load([args.base], io, args.verify_digests)
    new = _load([args.new], io, args.verify_digests)
    invalid = _problems(base, "BASE", io) + _problems(new, "NEW", io)
    result = compare.compare(
        base,
        new,
        threshold=args.threshold / 100,
        across_environments=args.across_environments,
        across_protocols=args.across_protocols,
        base_provider=args.base_provider,
        new_provider=args.new_provider,
        include_degraded=args.include_degraded,
    )
    return _verdict(args, io, result, invalid)


def _cmd_report(args: argparse.Namespace, io: Streams) -> int:
    plot = [args.plot] if args.plot is not None else []
    refuse_overwriting_inputs([*plot, *stdout_fd(io)], args.paths)
    if args.plot is not None:
        # A picture that cannot be written fails now, before the tables are printed.
        check_output_file(args.plot, suffixes=_plot.SUFFIXES)
    runs = _load(args.paths, io, args.verify_digests)
    invalid = _problems(runs, "input", io)
    found = report.families(runs, x=args.x)
    _write(report.render(found, args.format), io)
    if args.plot is not None:
        try:
            report.plot(found, args.plot)
        except MissingDependencyError as err:
            # The tables are out; only the picture is missing.
            print(f"kernelindex: {err}", file=io.stderr)
            return EXIT_USAGE
        print(f"wrote {args.plot}", file=io.stderr)
    if invalid:
        print(f"kernelindex: {invalid} invalid record(s) left out", file=io.stderr)
        return EXIT_INVALID
    return EXIT_OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmp = sub.add_parser(
        "compare",
        help="pair the runs of two inputs by digest: ratios, significance, a regression gate",
        description=(
            "Pair runs of BASE and NEW that share workload, protocol and environment digests"
            " (by implementation where a side has several; replicates pooled) and show"
            " NEW/BASE per pair. A change counts when it passes 3.29 times the noise (the"
            " runs' p20-p80, their replicates) and may reach --threshold; otherwise '~'; a"
            " degraded run says 'degraded'. Exits 0; 1 when an input record is invalid (it is"
            " reported and left out) or --fail-on-regression trips; 2 on usage or I/O errors."
        ),
    )
    cmp.add_argument("base", metavar="BASE", help="file or folder of records ('-': stdin)")
    cmp.add_argument("new", metavar="NEW", nargs="?", help="file or folder of records ('-': stdin)")
    cmp.add_argument("--format", choices=compare.FORMATS, default="text")
    cmp.add_argument(
        "--threshold",
        type=percent,
        default=compare.DEFAULT_THRESHOLD * 100,
        metavar="PCT",
        help="smallest change that counts, in percent (default: 5)",
    )
    cmp.add_argument(
        "--fail-on-regression",
        type=percent,
        metavar="PCT",
        help="exit 1 when the verdict calls a pair slower, by more than PCT percent",
    )
    cmp.add_argument(
        "--include-degraded",
        action="store_true",
        help="judge runs whose GPU was throttled or whose clocks fell (default: 'degraded')",
    )
    cmp.add_argument(
        "--across-environments",
        action="store_true",
        help="pair on workload and protocol only (one GPU against another)",
    )
    cmp.add_argument(
        "--across-protocols",
        action="store_true",
        help="pair on workload only; rows whose protocols differ say so",
    )
    cmp.add_argument("--base-provider", metavar="NAME", help="keep only BASE runs of this provider")
    cmp.add_argument("--new-provider", metavar="NAME", help="keep only NEW runs of this provider")
    add_verify_digests(cmp, _LEFT_OUT)
    history.add_compare_options(cmp)
    cmp.set_defaults(run=_cmd_compare)

    rep = sub.add_parser(
        "report",
        help="tables (and a plot) of runs by workload family against the swept parameter",
        description=(
            "Group runs by operation, pass, environment, protocol and every parameter but the"
            " swept one (the one that varies most, or --x); one table per family with each"
            " implementation's median and its speedup against the first. Exits 0; 1 when an"
            " input record is invalid (reported and left out); 2 on usage or I/O errors, or"
            " when --plot needs matplotlib (the tables are printed first)."
        ),
    )
    rep.add_argument("paths", nargs="+", metavar="RUNS", help="files or folders of records")
    rep.add_argument("--format", choices=report.FORMATS, default="text")
    rep.add_argument(
        "--x", metavar="NAME", help="the swept parameter (default: the one that varies)"
    )
    rep.add_argument(
        "--plot",
        metavar="OUT.png|OUT.svg",
        help="also draw latency, bandwidth and memory against x (needs the [plot] extra)",
    )
    add_verify_digests(rep, _LEFT_OUT)
    rep.set_defaults(run=_cmd_report)
