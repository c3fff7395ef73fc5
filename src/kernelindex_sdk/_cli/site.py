"""``kernelindex site``: the static dashboard of a store."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from .._base.display import display_path, printable
from .._base.numbers import parse_decimal
from ..errors import ArgumentError
from ..site import build_site
from ._common import EXIT_OK, Streams, notice
from .store import add_db

__all__ = ["register"]


def _bandwidth(text: str) -> tuple[str, float]:
    """``PRODUCT=TB/s`` (``"NVIDIA H200=4.8"``) as (product, bytes per second)."""
    product, sep, value = text.rpartition("=")
    try:
        # The one parser of numbers people type: float() takes 1_0, other scripts'
        # digits and whitespace.
        tbps = parse_decimal(value, what="TB/s", minimum=0)
    except ArgumentError:
        tbps = 0.0
    # A finite TB/s can still overflow once made bytes/s (1e300 TB/s): refused here,
    # as a usage error, rather than by the library as an invalid table.
    if not sep or not product.strip() or not tbps > 0 or not math.isfinite(tbps * 1e12):
        raise argparse.ArgumentTypeError(
            f"expected PRODUCT=TB/s such as 'NVIDIA H200=4.8' (a finite number > 0), got {text!r}"
        )
    return product.strip(), tbps * 1e12


def _cmd_site(args: argparse.Namespace, io: Streams) -> int:
    summary = build_site(
        args.out,
        args.db,
        main_branch=args.main_branch,
        title=args.title,
        bandwidths=dict(args.bandwidth or ()),
    )
    say = notice(io)
    for line in summary.left_out:
        say(line)
    page = Path(summary.out) / "index.html"
    print(
        f"kernelindex: wrote the dashboard of {summary.runs} runs in {summary.series} series"
        f" ({summary.regressions} slower on {args.main_branch} now) to"
        f" {printable(display_path(str(summary.out)))}/",
        file=io.stderr,
    )
    # The one line on standard output: where to open it.
    print(f"open {page.resolve().as_uri()}", file=io.stdout)
    return EXIT_OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "site",
        help="write the static dashboard of a store (Health, Trends, Compare, Runs)",
        description=(
            "Write the store's runs as a static dashboard into OUT: Health (what is slower"
            " on the main branch now, worst first), Trends (each series over commits with"
            " its p20-p80 band, change points and their causes, % of the roofline), Compare"
            " (two commits or branches) and Runs (a filterable table linking each record)."
            " The pages open from file:// or any static host, with no network. OUT must be"
            " new, empty, or a folder this command wrote (it is replaced whole); a symlink"
            " is followed (the folder it points to is written, the link stays). Nothing"
            " else is deleted, the store never. Prints the page's file:// URL. Exits 0; 2"
            " when the store or OUT cannot be used, or on usage errors."
        ),
    )
    parser.add_argument("out", metavar="OUT", help="folder to write the dashboard into")
    add_db(parser)
    parser.add_argument(
        "--main-branch",
        default="main",
        metavar="BRANCH",
        help="the branch Health and the trend lines follow (default: main)",
    )
    parser.add_argument("--title", default="kernelindex dashboard", help="the page title")
    parser.add_argument(
        "--bandwidth",
        type=_bandwidth,
        action="append",
        metavar="PRODUCT=TB/s",
        help=(
            "peak memory bandwidth of a GPU for the roofline, over the built-in table"
            " (kernelindex_sdk.site.GPU_BANDWIDTH); repeatable"
        ),
    )
    parser.set_defaults(run=_cmd_site)
