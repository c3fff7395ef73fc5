"""The dashboard in a real browser (headless Chromium): loads, filters, draws, escapes."""

from __future__ import annotations

import functools
import http.server
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser import Page, browser, file_url, need_browser
from _fake import HOSTILE, FakeSource, level_steps, synthetic, synthetic_commit

from kernelindex_sdk.site import write_site

Open = Callable[[str], Page]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dashboard") / "site"
    write_site(out, synthetic(hostile=True), find_steps=level_steps)
    return out


@pytest.fixture(scope="module")
def open_page() -> Iterator[Open]:
    need_browser()
    with browser() as opener:
        yield opener


def _settle(page: Page, selector: str) -> None:
    page.page.wait_for_selector(selector, timeout=15_000)


def _count(page: Page, selector: str) -> int:
    return int(page.page.eval_on_selector_all(selector, "nodes => nodes.length"))


@pytest.mark.parametrize(
    ("view", "ready"),
    [
        ("/health", "#health tr.regression"),
        ("/trends", ".workloads li a"),
        ("/compare", "#compare tbody tr"),
        ("/runs", "#runs tbody tr"),
    ],
)
def test_each_view_loads_from_file_url_without_console_errors(
    site: Path, open_page: Open, view: str, ready: str
) -> None:
    page = open_page(file_url(site / "index.html", view))
    _settle(page, ready)
    page.page.wait_for_timeout(200)
    assert page.errors == []
    assert page.page.evaluate("window.PWNED") is None


def test_health_lists_the_regressed_lines_worst_first(site: Path, open_page: Open) -> None:
    page = open_page(file_url(site / "index.html"))
    _settle(page, "#health tr.regression")
    cells = page.page.eval_on_selector_all(
        "#health tr.regression td.slower", "n => n.map(x => x.textContent)"
    )
    assert len(cells) == 4
    values = [float(c.rstrip("%")) for c in cells]
    assert values == sorted(values, reverse=True)
    assert all(25 < v < 35 for v in values)
    # Each row has a drawn sparkline.
    assert _count(page, "#health canvas.spark") == 4


def test_a_filter_changes_what_the_runs_table_shows(site: Path, open_page: Open) -> None:
    page = open_page(file_url(site / "index.html", "/runs"))
    _settle(page, "#runs tbody tr")
    all_rows = _count(page, "#runs tbody tr")
    assert all_rows == 192
    page.page.select_option("#filter-gpu", "NVIDIA B200")
    page.page.wait_for_function("document.querySelectorAll('#runs tbody tr').length === 96")
    gpus = page.page.eval_on_selector_all(
        "#runs tbody tr td:nth-child(3)", "n => [...new Set(n.map(x => x.textContent))]"
    )
    assert gpus == ["NVIDIA B200"]
    expected = sum(
        r.status == "unverified" and r.hardware == "NVIDIA B200" for r in synthetic().rows()
    )
    assert 0 < expected < 96
    page.page.select_option("#filter-status", "unverified")
    page.page.wait_for_function(
        f"document.querySelector('#runs-count').textContent.startsWith('{expected} runs')"
    )
    assert _count(page, "#runs tbody tr") == expected
    statuses = page.page.eval_on_selector_all(
        "#runs tbody tr td:nth-child(6)", "n => [...new Set(n.map(x => x.textContent))]"
    )
    assert statuses == ["unverified"]
    assert page.errors == []


def _chart_pixels(page: Page, selector: str) -> int:
    """Pixels of the chart's canvas that are not background."""
    return int(
        page.page.evaluate(
            """sel => {
              const c = document.querySelector(sel + ' canvas');
              const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
              let n = 0;
              for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0) n++;
              return n;
            }""",
            selector,
        )
    )


def test_a_trends_chart_draws_lines_bands_and_change_points(site: Path, open_page: Open) -> None:
    page = open_page(file_url(site / "index.html"))
    _settle(page, "#health tr.regression")
    page.page.click("#health tr.regression a")
    _settle(page, "#trend-chart canvas")
    box = page.page.query_selector("#trend-chart")
    assert box is not None
    assert box.get_attribute("data-lines") == "4"
    assert box.get_attribute("data-points") == "12"
    assert _chart_pixels(page, "#trend-chart") > 5_000
    assert _chart_pixels(page, "#roofline-chart") > 1_000
    steps = page.page.eval_on_selector_all("#steps tbody tr", "n => n.map(x => x.textContent)")
    assert len(steps) == 1
    assert "implementation" in steps[0]
    assert page.errors == []


def test_hostile_record_text_is_shown_as_text(site: Path, open_page: Open) -> None:
    page = open_page(file_url(site / "index.html", "/runs"))
    _settle(page, "#runs tbody tr")
    first = page.page.query_selector("#runs tbody tr a")
    assert first is not None
    assert HOSTILE.replace("\u2028", "") in first.text_content().replace("\u2028", "")
    assert _count(page, "#runs img, #runs script") == 0
    name = first.text_content()
    first.click()
    _settle(page, "#record-text")
    text = page.page.text_content("#record-text")
    assert text is not None
    assert text == synthetic(hostile=True).texts[name]
    assert "<script>window.PWNED=1</script>" in text
    assert page.page.evaluate("window.PWNED") is None
    assert page.errors == []


def test_landing_page_loads_under_a_megabyte_and_no_series_file(
    site: Path, open_page: Open
) -> None:
    page = open_page(file_url(site / "index.html"))
    _settle(page, "#health tr.regression")
    page.page.wait_for_timeout(200)
    files = [Path(urllib.parse.unquote(urllib.parse.urlparse(u).path)) for u in page.requests]
    assert all(site in f.parents for f in files), files
    assert sum(f.stat().st_size for f in files) < 1_000_000
    assert not [f for f in files if f.parent.name in ("series", "records", "refs")]


def test_compare_shows_each_commits_verdicts_from_the_data(site: Path, open_page: Open) -> None:
    """Each commit against main's history before it: at the commit of the step the four
    triton H200 lines are +30% (regressions), the rest ~; the commit before has none."""
    page = open_page(file_url(site / "index.html", "/compare"))
    _settle(page, "#compare tbody tr")
    options = page.page.eval_on_selector_all("#ref option", "n => n.map(x => x.value)")
    texts = page.page.eval_on_selector_all("#ref option", "n => n.map(x => x.textContent)")
    stepped = synthetic_commit(8)[:10]
    at = next(i for i, t in enumerate(texts) if stepped in t)
    page.page.select_option("#ref", options[at])
    _settle(page, "#compare tbody tr.regression")
    changes = page.page.eval_on_selector_all(
        "#compare tbody td:nth-child(5)", "n => n.map(x => x.textContent)"
    )
    assert sum(c.startswith("+") and float(c.rstrip("%")) > 25 for c in changes) == 4
    assert set(changes) - {c for c in changes if c.startswith("+")} == {"~"}
    before = next(i for i, t in enumerate(texts) if synthetic_commit(7)[:10] in t)
    page.page.select_option("#ref", options[before])
    # The page's CSP forbids eval: wait on the selector, not on a polled expression.
    page.page.wait_for_selector("#compare tbody tr.regression", state="detached", timeout=15_000)
    assert page.errors == []


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def test_served_over_http_it_loads_without_errors(site: Path, open_page: Open) -> None:
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        for view in ("/health", "/runs"):
            page = open_page(f"http://127.0.0.1:{port}/index.html#{view}")
            _settle(page, "#health tr.regression, #runs tbody tr")
            assert page.errors == []
    finally:
        server.shutdown()
        server.server_close()


def test_a_commit_measured_twice_is_one_point(tmp_path: Path, open_page: Open) -> None:
    """Runs of one commit in a line (the quick start run twice) are replicates: one x
    position per commit, their medians' median drawn there."""
    source = synthetic(commits=3, operations=("jsd",), dtypes=("fp32",), step_at=None)
    rows = source.rows()
    again = [r._replace(name=r.name + "-again", observed_at=r.observed_at[:-5] + "9.000Z")
             for r in rows if r.commit == rows[-1].commit]  # fmt: skip
    out = tmp_path / "site"
    write_site(out, FakeSource([*rows, *again], source.workloads), find_steps=level_steps)
    workload = rows[0].workload_digest
    page = open_page(file_url(out / "index.html", f"/trends?workload={workload}"))
    _settle(page, "#trend-chart canvas")
    box = page.page.query_selector("#trend-chart")
    assert box is not None
    assert box.get_attribute("data-points") == "3"
    assert box.get_attribute("data-lines") == "4"
    assert page.errors == []
