"""Write the dashboard: the static page, the vendored chart library and the data files.

Layout of ``OUT/``::

    index.html               the page (Health, Trends, Compare, Runs, one record)
    assets/                  app.js, app.css, uPlot and its licence
    data/site.js             what the landing page (Health) needs, and nothing per run
    data/index.js            one entry per series (the Trends picker, Runs' facets)
    data/series/ID.js        one series: its runs, its line, its steps
    data/records/ID.js       the stored text of that series' records (deflated, base64)
    data/refs.js             the commits and branches Compare offers
    data/refs/KEY.js         one commit's or branch's latest run of each series

Every data file is a script registering its payload (see _payload), so the page works
from ``file://`` as from any static host.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

import attrs

from .._version import __version__
from ..errors import InputError
from ..store import RunRow, open_store
from ._bandwidth import peak_bandwidth
from ._model import Series, Step, StepFinder, group_series, history_steps, regressions
from ._payload import pack, write_script

__all__ = ["MARKER", "RecordSource", "SiteSummary", "build_site", "write_site"]

#: The file that marks a folder as one ``kernelindex site`` wrote (and may replace).
MARKER = ".kernelindex-site"

#: Health lists at most this many regressions (worst first); the rest are in Trends.
HEALTH_LIMIT = 200
#: Medians a Health sparkline shows (the line's last ones).
SPARK_POINTS = 40

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
        regressions: Lines Health lists as slower now.
        files: Files written.
        landing_bytes: Bytes the landing page loads (page, assets, data/site.js).
    """

    out: Path
    runs: int
    series: int
    regressions: int
    files: int
    landing_bytes: int


def _workload_facts(workload: Mapping[str, Any]) -> tuple[str | None, str, int | None]:
    """dtype, the parameters as ``k=v`` text, and bytesMoved of a workload spec."""
    params = workload.get("parameters")
    params = params if isinstance(params, Mapping) else {}
    dtype = params.get("dtype")
    text = " ".join(f"{k}={v}" for k, v in sorted(params.items()) if k != "dtype")
    moved = workload.get("bytesMoved")
    moved = moved if isinstance(moved, int) and not isinstance(moved, bool) else None
    return (dtype if isinstance(dtype, str) else None), text, moved


def _series_entry(s: Series, bandwidths: Mapping[str, float] | None) -> dict[str, Any]:
    first = s.runs[0]
    # The line's last timed run (a memory-only or failed run has no median).
    timed = [i for i in s.line if s.runs[i].median_ns is not None]
    last = s.runs[timed[-1] if timed else s.line[-1]]
    dtype, params, moved = _workload_facts(s.workload)
    return {
        "id": s.id,
        "workload": s.key.workload_digest,
        "operation": first.operation,
        "pass": first.pass_,
        "provider": first.provider,
        "entryPoint": first.entry_point,
        "gpu": first.hardware,
        "protocol": s.key.protocol_digest,
        "dtype": dtype,
        "params": params,
        "bytesMoved": moved,
        "peakBandwidth": peak_bandwidth(first.hardware, bandwidths),
        "runs": len(s.runs),
        "status": dict(Counter(run.status for run in s.runs)),
        "lastMedianNs": last.median_ns,
        "lastCommit": last.commit,
    }


def _run_cells(run: RunRow) -> list[Any]:
    return [
        run.name,
        run.status,
        run.commit,
        run.branch,
        run.observed_at,
        run.order_key,
        run.median_ns,
        run.p20_ns,
        run.p80_ns,
    ]


def _step_cells(step: Step) -> list[Any]:
    return [step.index, step.ratio, step.cause, step.detail]


def _ref_key(kind: str, name: str) -> str:
    return hashlib.sha256(f"{kind}\0{name}".encode()).hexdigest()[:16]


def _refs(series: Sequence[Series]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The Compare menu, and each commit's and branch's latest run of each series."""
    latest: dict[tuple[str, str], dict[str, RunRow]] = {}
    when: dict[tuple[str, str], str] = {}
    branch_of: dict[str, str | None] = {}
    for s in series:
        # Runs are in order, so the last one seen for a ref is its latest.
        for run in s.runs:
            refs = []
            if run.commit:
                refs.append(("commit", run.commit))
                branch_of.setdefault(run.commit, run.branch)
            if run.branch:
                refs.append(("branch", run.branch))
            for ref in refs:
                latest.setdefault(ref, {})[s.id] = run
                when[ref] = max(when.get(ref, ""), run.order_key)
    menu: dict[str, list[dict[str, Any]]] = {"branches": [], "commits": []}
    files = {}
    for (kind, name), runs in latest.items():
        key = _ref_key(kind, name)
        entry = {"name": name, "key": key, "time": when[(kind, name)], "series": len(runs)}
        if kind == "commit":
            entry["branch"] = branch_of.get(name)
        menu["branches" if kind == "branch" else "commits"].append(entry)
        files[key] = {
            "kind": kind,
            "name": name,
            "runs": {
                sid: [run.median_ns, run.p20_ns, run.p80_ns, run.name, run.status]
                for sid, run in runs.items()
            },
        }
    for entries in menu.values():
        entries.sort(key=lambda e: (e["time"], e["name"]), reverse=True)
    return dict(menu), files


def _health(
    series: Sequence[Series], steps: Mapping[str, Sequence[Step]], bandwidths: Any
) -> list[dict[str, Any]]:
    out = []
    for found in regressions(series, steps)[:HEALTH_LIMIT]:
        s, step = found.series, found.step
        line = s.line_runs
        entry = _series_entry(s, bandwidths)
        entry.update(
            ratio=step.ratio,
            cause=step.cause,
            detail=step.detail,
            commit=line[step.index].commit if step.index < len(line) else None,
            spark=[run.median_ns for run in line[-SPARK_POINTS:]],
            stepAt=max(0, step.index - max(0, len(line) - SPARK_POINTS)),
        )
        out.append(entry)
    return out


def _facets(rows: Sequence[RunRow], entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    dtype_of = {e["workload"]: e["dtype"] for e in entries}
    return {
        "operation": dict(Counter(r.operation or "" for r in rows)),
        "gpu": dict(Counter(r.hardware or "" for r in rows)),
        "provider": dict(Counter(r.provider or "" for r in rows)),
        "dtype": dict(Counter(dtype_of.get(r.workload_digest) or "" for r in rows)),
        "status": dict(Counter(r.status for r in rows)),
    }


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
    parent = out.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=parent))


def _swap(tmp: Path, out: Path) -> None:
    """Put the finished build in place of ``out`` (a reader never sees half a site)."""
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
            ``source.spec``.
        main_branch: The branch whose runs make each series' line and Health.
        title: The page title.
        bandwidths: Peak bandwidth in bytes/s by GPU product, over GPU_BANDWIDTH.
        now: The build time shown on the page.

    Returns:
        What was written.

    Raises:
        InputError: ``out`` is a file, or a folder with other content; or it cannot be
            written.
    """
    target = Path(out)
    rows = source.rows()
    series = group_series(
        rows, main_branch=main_branch, workload=lambda d: source.spec("workload", d)
    )
    finder = find_steps if find_steps is not None else history_steps(source.spec)
    steps = {s.id: list(finder(s.line_runs)) for s in series}
    entries = [_series_entry(s, bandwidths) for s in series]
    menu, ref_files = _refs(series)
    health = _health(series, steps, bandwidths)
    tmp = _prepare(target)
    try:
        _copy_static(tmp)
        files = len(_STATIC) + len(_VENDOR)
        for s, entry in zip(series, entries, strict=True):
            payload = dict(entry)
            payload.update(
                runs=[_run_cells(run) for run in s.runs],
                line=list(s.line),
                steps=[_step_cells(step) for step in steps[s.id]],
            )
            write_script(tmp, f"series/{s.id}", payload)
            texts = dict(source.records([run.name for run in s.runs]))
            write_script(tmp, f"records/{s.id}", pack(texts))
            files += 2
        for key, payload in ref_files.items():
            write_script(tmp, f"refs/{key}", payload)
        files += len(ref_files)
        write_script(tmp, "refs", menu)
        write_script(tmp, "index", {"series": entries})
        site = {
            "title": title,
            "generatedAt": now().strftime("%Y-%m-%dT%H:%M:%SZ"),
            "sdkVersion": __version__,
            "mainBranch": main_branch,
            "counts": {
                "runs": len(rows),
                "series": len(series),
                "workloads": len({s.key.workload_digest for s in series}),
                "regressions": len(regressions(series, steps)),
                "commits": len(menu["commits"]),
                "branches": len(menu["branches"]),
            },
            "health": health,
            "facets": _facets(rows, entries),
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
        series=len(series),
        regressions=len(regressions(series, steps)),
        files=files,
        landing_bytes=landing,
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
    """
    with open_store(db, create=False) as store:
        return write_site(out, store, main_branch=main_branch, title=title, bandwidths=bandwidths)
