"""Build the docs' example dashboard and its screenshots.

    PYTHONPATH=src python docs/examples/make_dashboard.py

The store is benchmarks/own_history.py's (this repository's H200 results at each commit
that changed them, and Liger-Kernel's kto_loss rows at four commits of its history) with
the rows of Liger's real history that issue 33's cases need (tests/fixtures/liger/real:
group_norm on a B200, layer_norm A100 to H100, the jsd shared shift, megatron
cross-entropy). The dashboard goes to docs/examples/dashboard/ (the docs site serves it),
the screenshots of each view to docs/images/dashboard-*.png, taken in headless Chromium
(Debian's ``chromium`` through playwright). One more Health screenshot comes from the
README's main job run twice on one commit on this project's busy CPU
(benchmarks/results/verdict_cpu_reruns, reruns 01 and 09: the second 5 times slower):
replicates of one point, nothing on Health.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "tests" / "site")]

from _browser import browser, file_url  # noqa: E402
from own_history import build  # noqa: E402

from kernelindex_sdk.importers import liger  # noqa: E402
from kernelindex_sdk.provenance import Provenance  # noqa: E402
from kernelindex_sdk.site import build_site  # noqa: E402
from kernelindex_sdk.store import open_store  # noqa: E402

OUT = ROOT / "docs" / "examples" / "dashboard"
IMAGES = ROOT / "docs" / "images"
TITLE = "kernelindex-sdk example: own H200 results and Liger-Kernel history"


def _payload(site: Path, key: str) -> Any:
    text = (site / "data" / f"{key}.js").read_text(encoding="utf-8")
    return json.loads(text[text.index(",") + 1 : -3])


REAL = ROOT / "tests" / "fixtures" / "liger" / "real"
RERUNS = ROOT / "benchmarks" / "results" / "verdict_cpu_reruns"


def _workload(site: Path, operation: str, **params: Any) -> str:
    """The digest of the first workload of ``operation`` whose parameters include ``params``."""
    for entry in _payload(site, "index")["series"]:
        if entry["operation"] != operation:
            continue
        text = entry["params"]
        if all(f"{k}={v}" in text.split() for k, v in params.items()):
            return str(entry["workload"])
    raise SystemExit(f"no {operation} workload with {params}")


def _shoot(site: Path, views: dict[str, str]) -> None:
    with browser(width=1280, height=1000) as open_page:
        for name, fragment in views.items():
            page = open_page(file_url(site / "index.html", fragment))
            page.page.wait_for_timeout(1500)
            if page.errors:
                raise SystemExit(f"{name}: {page.errors}")
            page.page.screenshot(path=str(IMAGES / f"dashboard-{name}.png"), full_page=False)
            print(f"wrote docs/images/dashboard-{name}.png")


def _ingest_real(db: str, work: Path) -> None:
    with open_store(db) as store:
        for csv in sorted(REAL.glob("*.csv")):
            day, commit = csv.stem[:10], csv.stem[11:]
            out = work / f"{csv.stem}.jsonl"
            given = Provenance(commit=commit, branch="main", commit_time=f"{day}T00:00:00Z")
            liger.import_files([csv], out, provenance=given)
            report = store.ingest([out])
            print(f"liger {commit}: {report.added} added, {report.identical} identical")


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "history.sqlite3")
        for line in build(db):
            print(line)
        _ingest_real(db, Path(tmp))
        if OUT.exists():
            shutil.rmtree(OUT)
        summary = build_site(OUT, db, title=TITLE)
        print(summary)
    kto = _workload(OUT, "kto_loss", B=8, mode="forward")
    commits = {c["name"][:12]: c["key"] for c in _payload(OUT, "refs")["commits"]}
    _shoot(
        OUT,
        {
            "health": "/health",
            "trends": f"/trends?workload={kto}",
            "compare": f"/compare?ref={commits['ee5aaf26b934']}",
            "runs": "/runs?provider=triton",
        },
    )
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "reruns.sqlite3")
        with open_store(db) as store:
            for name in ("rerun-01.jsonl", "rerun-09.jsonl"):
                store.ingest([RERUNS / name])
        demo = Path(tmp) / "demo"
        build_site(demo, db, title="the README's job run twice on one commit, busy CPU")
        _shoot(demo, {"health-synthetic": "/health"})


if __name__ == "__main__":
    main()
