"""Build the docs' example dashboard and its screenshots.

    PYTHONPATH=src python docs/examples/make_dashboard.py

The store is benchmarks/own_history.py's: this repository's H200 results at each commit
that changed them, and Liger-Kernel's kto_loss rows at four commits of its history. The
dashboard goes to docs/examples/dashboard/ (the docs site serves it), the screenshots of
each view to docs/images/dashboard-*.png, taken in headless Chromium (Debian's
``chromium`` through playwright). One more Health screenshot comes from synthetic runs
with a 30% step (tests/site/_fake.py), a clean case beside the real history's.
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
from _fake import synthetic  # noqa: E402
from own_history import build  # noqa: E402

from kernelindex_sdk.site import build_site, write_site  # noqa: E402

OUT = ROOT / "docs" / "examples" / "dashboard"
IMAGES = ROOT / "docs" / "images"
TITLE = "kernelindex-sdk example: own H200 results and Liger-Kernel history"


def _payload(site: Path, key: str) -> Any:
    text = (site / "data" / f"{key}.js").read_text(encoding="utf-8")
    return json.loads(text[text.index(",") + 1 : -3])


def _showcase(site: Path) -> str:
    """The workload whose lines have the most change points (then the most lines)."""
    index = _payload(site, "index")["series"]
    score: dict[str, list[int]] = {}
    for entry in index:
        steps = len(_payload(site, f"series/{entry['id']}")["steps"])
        s = score.setdefault(entry["workload"], [0, 0])
        s[0] += steps
        s[1] += 1
    return max(sorted(score), key=lambda w: tuple(score[w]))


def _shoot(site: Path, views: dict[str, str]) -> None:
    with browser(width=1280, height=900) as open_page:
        for name, fragment in views.items():
            page = open_page(file_url(site / "index.html", fragment))
            page.page.wait_for_timeout(1200)
            if page.errors:
                raise SystemExit(f"{name}: {page.errors}")
            page.page.screenshot(path=str(IMAGES / f"dashboard-{name}.png"))
            print(f"wrote docs/images/dashboard-{name}.png")


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "history.sqlite3")
        for line in build(db):
            print(line)
        if OUT.exists():
            shutil.rmtree(OUT)
        summary = build_site(OUT, db, title=TITLE)
        print(summary)
    workload = _showcase(OUT)
    # Compare: two of Liger's commits around its 0.5.4 release (the kto_loss step).
    commits = {c["name"][:12]: c["key"] for c in _payload(OUT, "refs")["commits"]}
    a, b = commits["636813534168"], commits["ee5aaf26b934"]
    _shoot(
        OUT,
        {
            "health": "/health",
            "trends": f"/trends?workload={workload}",
            "compare": f"/compare?a={a}&b={b}",
            "runs": "/runs?provider=triton",
        },
    )
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo"
        write_site(demo, synthetic(), title="synthetic runs: a 30% step")
        _shoot(demo, {"health-synthetic": "/health"})


if __name__ == "__main__":
    main()
