"""Write the dashboard: the static page, the vendored chart library and the data files.

Layout of ``OUT/``::

    index.html               the page (Health, Trends, Compare, Runs, one record)
    assets/                  app.js, app.css, uPlot and its licence
    data/site.js             what the landing page (Health) needs, and nothing per run
    data/index.js            one entry per series (the Trends picker, Runs' facets)
    data/series/ID.js        one series: its runs, its line, its steps
    data/records/ID.js       the stored text of that series' records (deflated, base64)
    data/relative/ID.js      one relative series: each commit's ratio, its change points
    data/refs.js             the commits and branches Compare offers
    data/refs/KEY.js         one commit or branch against the main branch's history: the
                             verdict of each series it measured

Every data file is a script registering its payload (see _payload), so the page works
from ``file://`` as from any static host.
"""

from __future__ import annotations

import errno
import importlib.resources
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

import attrs

from .._base.arguments import path, short_repr, text
from .._version import __version__
from ..errors import ArgumentError, InputError, OutputIsInputError, input_errors
from ..store import RunRow, open_store
from ..store.series import group_series, skip_notice, utc_instant
from ..verdict import DEFAULT_THRESHOLD
from ._model import StepFinder, build_lines, relative_id
from ._pages import (
    facets,
    health,
    latest_by_family,
    refs,
    relative_entry,
    relative_payload,
    run_cells,
    series_entry,
    step_cells,
)
from ._payload import pack, write_script

__all__ = ["MARKER", "RecordSource", "SiteSummary", "build_site", "write_site"]

#: The file that marks a folder as one ``kernelindex site`` wrote (and may replace).
MARKER = ".kernelindex-site"


_STATIC = ("index.html", "app.js", "app.css")
_VENDOR = ("uPlot.iife.min.js", "uPlot.min.css", "uPlot-LICENSE", "README")


class RecordSource(Protocol):
    """What the dashboard reads: :class:`kernelindex_sdk.store.Store` is one."""

    def rows(self) -> list[RunRow]:
        """Every stored run's columns."""
        ...

    def spec(self, kind: str, digest: str) -> Mapping[str, Any] | None:
        """The stored spec of a kind (``workload``, ``implementation``...) and digest."""
        ...

    def records(self, names: Iterable[str]) -> Iterable[tuple[str, str]]:
        """``(name, published text)`` of each named record."""
        ...


@attrs.frozen(kw_only=True)
class SiteSummary:
    """What :func:`write_site` wrote.

    Attributes:
        out: The folder.
        runs: Runs shown.
        series: Series (one data file each, and one of record texts).
        regressions: Lines and relative series Health lists as slower now.
        files: Files written.
        landing_bytes: Bytes the landing page loads (page, assets, data/site.js).
        left_out: One line per run shown but left out of its series' change-point test
            (no positive latency median), naming it and why; the page counts them.
    """

    out: Path
    runs: int
    series: int
    regressions: int
    files: int
    landing_bytes: int
    left_out: tuple[str, ...] = ()


def _copy_static(out: Path) -> None:
    static = importlib.resources.files(__package__).joinpath("static")
    assets = out / "assets"
    assets.mkdir(parents=True)
    for name in _STATIC:
        target = out / name if name == "index.html" else assets / name
        target.write_bytes(static.joinpath(name).read_bytes())
    for name in _VENDOR:
        (assets / name).write_bytes(static.joinpath("vendor").joinpath(name).read_bytes())


def _prepare(out: Path) -> Path:
    """A fresh folder beside ``out`` to build in; ``out`` must be new, empty or ours."""
    if out.exists():
        if not out.is_dir():
            raise InputError(source=str(out), reason="expected a folder, found a file")
        if any(out.iterdir()) and not (out / MARKER).is_file():
            raise InputError(
                source=str(out),
                reason=f"the folder is not empty and was not written by kernelindex site"
                f" (no {MARKER}); choose a new or empty folder",
            )
    real = Path(os.path.realpath(out))
    if real.is_symlink():
        # A symlink loop: realpath stops on a link (Path.resolve raises RuntimeError).
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(out))
    parent = real.parent
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=parent))


def _swap(tmp: Path, out: Path) -> None:
    """Put the finished build in place of ``out`` (a reader never sees half a site).

    A symlink (``out`` itself or a folder above it) is followed: the build replaces the
    folder it points to, which _prepare checked, and the link stays. Replacing the link
    instead would leave the old build where it points, and the link gone.
    """
    out = Path(os.path.realpath(out))
    (tmp / MARKER).write_text("written by kernelindex site; the next build replaces it\n")
    tmp.chmod(0o755)
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}-old-", dir=tmp.parent))
        os.replace(out, old / "site")
    os.replace(tmp, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_site(
    out: str | os.PathLike[str],
    source: RecordSource,
    *,
    find_steps: StepFinder | None = None,
    main_branch: str = "main",
    title: str = "kernelindex dashboard",
    bandwidths: Mapping[str, float] | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
) -> SiteSummary:
    """Write the static dashboard of ``source``'s records into the folder ``out``.

    Args:
        out: A new or empty folder, or one this function wrote before (it is replaced
            whole once the new build is complete).
        source: Where the runs come from (a :class:`~kernelindex_sdk.store.Store`).
        find_steps: The change points of a line (its runs in order); default
            :func:`kernelindex_sdk.store.history.history`'s, causes named from
            ``source.spec``, with its relative series. A finder's step without a verdict
            gets the one verdict on the runs either side of it.
        main_branch: The branch whose runs make each series' line and Health.
        title: The page title.
        bandwidths: Peak bandwidth in bytes/s by GPU product, over GPU_BANDWIDTH.
        now: The build time shown on the page.

    Returns:
        What was written.

    Raises:
        InputError: ``out`` is a file, or a folder with other content; or it cannot be
            written.
        ArgumentError: an argument of the wrong type, or a bandwidth that is not a
            finite number > 0.
    """
    target = Path(path(out, "out"))
    for method in ("rows", "spec", "records"):
        if not callable(getattr(source, method, None)):
            raise ArgumentError(
                argument="source",
                reason=f"expected a record source such as a Store, got {short_repr(source)}",
            )
    text(main_branch, "main_branch")
    text(title, "title")
    bandwidths = _bandwidth_table(bandwidths)
    rows = source.rows()
    grouped = group_series(rows)
    lines, relative = build_lines(
        grouped, main_branch=main_branch, spec=source.spec, find_steps=find_steps
    )
    left_out = _left_out(grouped)
    entries = [series_entry(s, bandwidths) for s in lines]
    families = latest_by_family(lines)
    relative_entries = [
        relative_entry(h, _stale(h.series.points[-1].run, families)) for h in relative
    ]
    menu, ref_files = refs(lines, main_branch)
    shown = health(lines, relative, bandwidths)
    slower = sum(1 for r in shown["now"] if r["verdict"] == "regression")
    with input_errors(target):
        tmp = _prepare(target)
    try:
        _copy_static(tmp)
        files = len(_STATIC) + len(_VENDOR)
        for s, entry in zip(lines, entries, strict=True):
            payload = dict(entry)
            payload.update(
                runs=[run_cells(run) for run in s.runs],
                line=list(s.line),
                steps=[step_cells(step) for step in s.steps],
            )
            write_script(tmp, f"series/{s.id}", payload)
            texts = dict(source.records([run.name for run in s.runs]))
            write_script(tmp, f"records/{s.id}", pack(texts))
            files += 2
        for h in relative:
            write_script(tmp, f"relative/{relative_id(h)}", relative_payload(h))
        files += len(relative)
        for key, payload in ref_files.items():
            write_script(tmp, f"refs/{key}", payload)
        files += len(ref_files)
        write_script(tmp, "refs", menu)
        write_script(tmp, "index", {"series": entries, "relative": relative_entries})
        site = {
            "title": title,
            "generatedAt": now().strftime("%Y-%m-%dT%H:%M:%SZ"),
            "sdkVersion": __version__,
            "mainBranch": main_branch,
            "threshold": DEFAULT_THRESHOLD,
            "counts": {
                "runs": len(rows),
                "series": len(lines),
                "relative": len(relative),
                "workloads": len({s.key.workload_digest for s in lines}),
                "regressions": slower,
                "improvements": sum(1 for r in shown["now"] if r["verdict"] == "improvement"),
                "stale": len(shown["stale"]),
                "commits": len(menu["commits"]),
                "branches": len(menu["branches"]),
                "leftOut": len(left_out),
            },
            "health": shown["now"],
            "stale": shown["stale"],
            "facets": facets(rows, entries),
        }
        landing = write_script(tmp, "site", site)
        files += 3
        landing += sum((tmp / "assets" / name).stat().st_size for name in _STATIC[1:])
        landing += sum(
            (tmp / "assets" / name).stat().st_size for name in _VENDOR if "uPlot." in name
        )
        landing += (tmp / "index.html").stat().st_size
        _swap(tmp, target)
    except OSError as err:
        shutil.rmtree(tmp, ignore_errors=True)
        raise InputError.from_os_error(target, err) from err
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return SiteSummary(
        out=target,
        runs=len(rows),
        series=len(lines),
        regressions=slower,
        files=files,
        landing_bytes=landing,
        left_out=left_out,
    )


def _stale(run: RunRow, families: Mapping[tuple[str, str], str]) -> bool:
    family = (run.operation or "", run.pass_ or "")
    return utc_instant(run.order_key) < families.get(family, "")


def _left_out(grouped: Sequence[Any]) -> tuple[str, ...]:
    """A line for each run that did not fail yet has no positive latency median: the
    store's series leave it out of the change-point test (its ratio to any other is
    undefined), so the build says so rather than drop it silently."""
    return tuple(
        skip_notice(row, f"{row.operation} {row.pass_} · {row.provider} · {row.hardware}")
        for series in grouped
        for row in series.skipped
    )


def _bandwidth_table(table: Any) -> Mapping[str, float] | None:
    """``table`` when it maps product names to finite positive bytes per second."""
    if table is None:
        return None
    if not isinstance(table, Mapping):
        raise ArgumentError(
            argument="bandwidths",
            reason=f"expected a mapping of product to bytes/s, got {short_repr(table)}",
        )
    for product, value in table.items():
        text(product, "bandwidths")
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value <= 0
        ):
            raise ArgumentError(
                argument=f"bandwidths[{product!r}]",
                reason=f"expected a finite number of bytes/s > 0, got {short_repr(value)}",
            )
    return table


def _refuse_store_inside(out: Path, store_file: str) -> None:
    """Refuse an ``out`` folder that holds the store: replacing it whole would delete it.

    The folder is compared by device and inode with every folder above the store's
    file (symlinks resolved), so a symlink to ``out``, ``.`` or ``..`` is caught too.
    """
    try:
        out_info = os.stat(out)
        above = Path(store_file).resolve().parents
        held = any(os.path.samestat(out_info, os.stat(folder)) for folder in above)
    except (OSError, ValueError):
        return  # no such folder (or no such store file): nothing of the store to delete
    if held:
        raise OutputIsInputError(
            source=str(out),
            input=store_file,
            reason=(
                f"holds the store {store_file!r}; expected a folder outside it (the"
                " dashboard's folder is replaced whole)"
            ),
        )


def build_site(
    out: str | os.PathLike[str],
    db: str | None = None,
    *,
    main_branch: str = "main",
    title: str = "kernelindex dashboard",
    bandwidths: Mapping[str, float] | None = None,
) -> SiteSummary:
    """Write the dashboard of the store at ``db`` into ``out`` (see :func:`write_site`).

    Args:
        out: A new or empty folder, or one an earlier build wrote.
        db: The store's URL; None means ``$KERNELINDEX_DB``, else ``kernelindex.sqlite3``
            in the current directory. The store must exist.
        main_branch: The branch whose runs make each series' line and Health.
        title: The page title.
        bandwidths: Peak bandwidth in bytes/s by GPU product, over GPU_BANDWIDTH.

    Returns:
        What was written.

    Raises:
        StoreError: when the store cannot be opened or read.
        StoreLayoutError: when there is no store at ``db``.
        InputError: when ``out`` cannot be written (see :func:`write_site`).
        OutputIsInputError: when ``out`` holds the store's file (an InputError).
    """
    path(out, "out")  # before the store is opened
    with open_store(db, create=False) as store:
        if store.url.dialect == "sqlite":
            _refuse_store_inside(Path(out), store.url.target)
        return write_site(out, store, main_branch=main_branch, title=title, bandwidths=bandwidths)
