"""``kernelindex history`` and ``compare --history``: a store's series, change points, PR check."""

from __future__ import annotations

import argparse
from typing import Any

from .._base.files import refuse_overwriting_inputs
from .._base.numbers import MAX_TEXT, parse_integer
from ..errors import ArgumentError
from ..store import open_store
from ..store.branch_compare import compare_to_branch
from ..store.history import FORMATS, render_history, series_history, skipped_notices
from ..store.relative import relative_history, relative_json_text, relative_table
from ..store.series import group_series
from ._common import EXIT_OK, EXIT_USAGE, Streams, notice, stdout_fd
from ._verdict import load, problems, verdict, write
from .store import add_db, add_filters, filters_of

__all__ = ["compare_with_branch", "register"]


def _integer(text: str, minimum: int) -> int:
    # The one parser of numbers people type (str.isdigit() takes other scripts' digits).
    try:
        # Any count of ASCII digits parse_integer reads: a huge N means every point.
        return parse_integer(text, what="N", minimum=minimum, maximum=10**MAX_TEXT)
    except ArgumentError:
        raise argparse.ArgumentTypeError(
            f"expected an integer >= {minimum}, got {text!r}"
        ) from None


def _count(text: str) -> int:
    """``--points N``: an integer >= 0 in ASCII digits."""
    return _integer(text, 0)


def window(text: str) -> int:
    """``--window N``: a positive integer in ASCII digits."""
    return _integer(text, 1)


def _cmd_history(args: argparse.Namespace, io: Streams) -> int:
    filters: dict[str, Any] = filters_of(args)
    with open_store(args.db, create=False) as store:
        grouped = group_series(store.rows(**filters))
        found = series_history(grouped, spec=store.spec, include_degraded=args.include_degraded)
        provider = filters.pop("provider", None)
        # A relative series divides by its baseline's runs: those are read too.
        every = grouped if provider is None else group_series(store.rows(**filters))
        relative = [
            h
            for h in relative_history(
                every,
                spec=store.spec,
                baseline=args.baseline,
                include_degraded=args.include_degraded,
            )
            if provider is None or h.key.provider == provider
        ]
    say = notice(io)
    for line in skipped_notices(found):
        say(line)
    if args.changed:
        found = [h for h in found if h.changes]
        relative = [h for h in relative if h.changes]
    text = render_history(found, args.format, points=args.points)
    if args.format == "json":
        text = relative_json_text(text, relative)
    elif relative:
        text += "\n" + relative_table(
            relative, markdown=args.format == "markdown", points=args.points
        )
    write(text, io)
    return EXIT_OK


#: compare's options that choose the base's runs, which --history chooses itself.
_BASE_OPTIONS = (
    ("across_environments", "--across-environments"),
    ("across_protocols", "--across-protocols"),
    ("base_provider", "--base-provider"),
    ("new_provider", "--new-provider"),
)


def wants_branch(args: argparse.Namespace) -> bool:
    """Whether ``compare`` was called as the PR check (or with its options only)."""
    return args.history is not None or args.new is None or args.window != 1 or args.db is not None


def _usage(io: Streams, message: str) -> int:
    print(f"kernelindex compare: {message} (see 'kernelindex compare --help')", file=io.stderr)
    return EXIT_USAGE


def compare_with_branch(args: argparse.Namespace, io: Streams) -> int:
    """``compare --history BRANCH NEW``: NEW against BRANCH's series in the store."""
    if args.history is None:
        if args.new is None:
            return _usage(io, "expected BASE and NEW, or --history BRANCH and NEW")
        return _usage(io, "--window and --db need --history BRANCH")
    if args.new is not None:
        return _usage(io, f"--history takes one input, NEW; got {args.base!r} and {args.new!r}")
    for dest, flag in _BASE_OPTIONS:
        if getattr(args, dest):
            return _usage(io, f"{flag} cannot be used with --history (the series choose the base)")
    refuse_overwriting_inputs(stdout_fd(io), [args.base])
    new = load([args.base], io, args.verify_digests)
    invalid = problems(new, "NEW", io)
    with open_store(args.db, create=False) as store:
        result = compare_to_branch(
            store.rows(branch=args.history),
            new,
            window=args.window,
            spec=store.spec,
            branch=args.history,
            threshold=args.threshold / 100,
            include_degraded=args.include_degraded,
        )
    return verdict(args, io, result, invalid)


def add_compare_options(parser: argparse.ArgumentParser) -> None:
    """``compare``'s ``--history BRANCH``, ``--db`` and ``--window``."""
    parser.add_argument(
        "--history",
        metavar="BRANCH",
        help=(
            "compare NEW (the only input then) with the latest point of each of its series"
            " on BRANCH in the store"
        ),
    )
    parser.add_argument(
        "--window",
        type=window,
        default=1,
        metavar="N",
        help="with --history: the median of each series' last N points (default: 1)",
    )
    add_db(parser)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    hist = sub.add_parser(
        "history",
        help="each series' points and change points, with their causes",
        description=(
            "Group the store's runs into series (workload, provider and entry point,"
            " protocol, GPU), ordered by commit time, and find each one's change points:"
            " binary segmentation with a Student t test (p < 0.001, Bonferroni over the"
            " splits; a circular test finds a step there and back; outlying runs weigh"
            " less), each step with its cause (implementation, environment, labels or"
            " unexplained). Runs of one commit with the same digests are replicates, pooled"
            " into one point. Series shorter than 6 points are judged step by step with"
            " the one verdict. Failed runs are listed apart: they carry no timing; degraded"
            " points too, unless --include-degraded. Exits 0; 2 when the store cannot be"
            " opened, or on usage errors."
        ),
    )
    add_filters(hist)
    add_db(hist)
    hist.add_argument("--format", choices=FORMATS, default="text")
    hist.add_argument(
        "--points",
        type=_count,
        default=10,
        metavar="N",
        help="text and markdown: the latest N points of each series (0: all; default 10)",
    )
    hist.add_argument(
        "--changed", action="store_true", help="only the series that have change points"
    )
    hist.add_argument(
        "--baseline",
        metavar="PROVIDER",
        help=(
            "the baseline of runs without a kernelindex.dev/baseline label: each other"
            " implementation's relative series divides it by this provider's run of the"
            " same commit, machine and workload (default: labelled runs only)"
        ),
    )
    hist.add_argument(
        "--include-degraded",
        action="store_true",
        help="look for change points in degraded points too (default: listed, never judged)",
    )
    hist.set_defaults(run=_cmd_history)
