"""Health a kernel team acts on, and the pages around it, in headless Chromium.

The verdicts come from history (no step finder is given): replicates never make a step,
improvements are listed beside regressions, stale lines apart, and the filters, the log
scale, the legends, the empty store and the record page behave as docs/dashboard.md says.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser import Page, browser, file_url, need_browser
from _fake import FakeSource, synthetic, synthetic_commit

from kernelindex_sdk.site import write_site
from kernelindex_sdk.store import RunRow
from kernelindex_sdk.verdict import BASELINE_LABEL

Open = Callable[[str], Page]


class _Degraded(RunRow):
    """A RunRow with the store's ``degraded`` column (layout 4) until RunRow carries it."""


def degraded(r: RunRow, reason: str) -> RunRow:
    if "degraded" in RunRow._fields:
        return r._replace(degraded=reason)
    found = _Degraded(*r)
    found.degraded = reason  # type: ignore[attr-defined]
    return found


@pytest.fixture(scope="module")
def open_page() -> Iterator[Open]:
    need_browser()
    with browser() as opener:
        yield opener


def _settle(page: Page, selector: str) -> None:
    page.page.wait_for_selector(selector, timeout=15_000)


def _texts(page: Page, selector: str) -> list[str]:
    return list(page.page.eval_on_selector_all(selector, "n => n.map(x => x.textContent)"))


def _changed_source() -> FakeSource:
    """12 commits: triton on the H200 30% slower from commit 8 (new code), torch on the
    B200 30% faster from commit 8 (new code); triton's runs name torch their baseline;
    the bf16 cross_entropy lines stop being measured after commit 10 (stale)."""
    source = synthetic(step_at=8)
    rows = []
    for found in source.rows():
        c = int(found.name.rsplit("-", 1)[1])
        if found.operation == "cross_entropy" and "bf16" in found.name and c > 10:
            continue
        r = found
        if r.provider == "torch" and r.hardware == "NVIDIA B200" and c >= 8:
            r = r._replace(
                median_ns=int((r.median_ns or 0) * 0.7),
                p20_ns=int((r.p20_ns or 0) * 0.7),
                p80_ns=int((r.p80_ns or 0) * 0.7),
                implementation_digest="sha256:" + "9" * 64,
            )
        if r.provider == "triton":
            r = r._replace(labels={BASELINE_LABEL: "torch"})
        rows.append(r)
    return FakeSource(rows, source.workloads, source.texts)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("health") / "site"
    write_site(out, _changed_source())
    return out


def test_health_lists_improvements_beside_regressions_and_stale_lines_apart(
    site: Path, open_page: Open
) -> None:
    page = open_page(file_url(site / "index.html"))
    _settle(page, "#health tbody tr")
    kinds = page.page.eval_on_selector_all("#health tbody tr", "n => n.map(x => x.className)")
    # jsd (fp32, bf16) and cross_entropy fp32 measured now; cross_entropy bf16 is stale.
    assert kinds.count("regression") == 3
    assert kinds.count("improvement") == 3
    changes = _texts(page, "#health tbody td:nth-child(3)")
    assert all(c.startswith("+") for c in changes[:3])
    assert all(c.startswith("-") for c in changes[3:])
    stale = page.page.eval_on_selector_all("#health-stale tbody tr", "n => n.length")
    assert stale == 2
    assert page.errors == []


def test_health_filters_by_provider_gpu_and_operation_and_hides_baselines(
    site: Path, open_page: Open
) -> None:
    page = open_page(file_url(site / "index.html", "/health?provider=torch"))
    _settle(page, "#health tbody tr")
    assert set(_texts(page, "#health tbody tr td:nth-child(2) a")) == {
        t for t in _texts(page, "#health tbody tr td:nth-child(2) a") if "torch" in t
    }
    assert len(_texts(page, "#health tbody tr")) == 3
    page = open_page(file_url(site / "index.html", "/health?gpu=NVIDIA%20H200&operation=jsd"))
    _settle(page, "#health tbody tr")
    assert len(_texts(page, "#health tbody tr")) == 2
    # torch is the labelled baseline of triton: hidden, only triton's regressions remain.
    page = open_page(file_url(site / "index.html"))
    _settle(page, "#health tbody tr")
    page.page.check("#health-hide-baselines")
    # The page's CSP forbids eval: wait on the selector, not on a polled expression.
    page.page.wait_for_selector("#health tbody tr.improvement", state="detached", timeout=15_000)
    assert len(_texts(page, "#health tbody tr.regression")) == 3
    assert page.errors == []


def test_rerunning_the_readme_job_on_a_busy_machine_puts_nothing_on_health(
    tmp_path: Path, open_page: Open
) -> None:
    """Every line's last commit run again, 268 times slower with a huge spread: replicates
    of one point, never a step."""
    source = synthetic(commits=4, step_at=None, operations=("jsd",), dtypes=("fp32",))
    rows = source.rows()
    last = rows[-1].commit
    again = [
        r._replace(
            name=r.name + "-again",
            observed_at=r.observed_at[:-5] + "9.000Z",
            median_ns=(r.median_ns or 0) * 268,
            p20_ns=(r.median_ns or 0) * 16,
            p80_ns=(r.median_ns or 0) * 4240,
        )
        for r in rows
        if r.commit == last
    ]
    out = tmp_path / "site"
    summary = write_site(out, FakeSource([*rows, *again], source.workloads))
    assert summary.regressions == 0
    page = open_page(file_url(out / "index.html"))
    _settle(page, "#health-empty")
    assert page.errors == []


def test_the_trends_picker_marks_workloads_with_changes(site: Path, open_page: Open) -> None:
    page = open_page(file_url(site / "index.html", "/trends"))
    _settle(page, ".workloads li")
    marked = page.page.eval_on_selector_all(".workloads li.changed", "n => n.length")
    every = page.page.eval_on_selector_all(".workloads li", "n => n.length")
    assert (marked, every) == (4, 4)
    assert page.errors == []


def test_lines_ten_times_apart_get_a_log_scale_and_legends_only_lines_with_data(
    tmp_path: Path, open_page: Open
) -> None:
    source = synthetic(commits=3, step_at=None, operations=("jsd",), dtypes=("fp32",))
    rows = [
        r._replace(median_ns=(r.median_ns or 0) * 40, p20_ns=None, p80_ns=None)
        if r.provider == "torch"
        else r
        for r in source.rows()
    ]
    # A memory-only line (no latency median) of the same workload: no legend entry.
    memory = [
        r._replace(name=r.name + "-memory", provider="liger", median_ns=None, p20_ns=None,
                   p80_ns=None, protocol_digest="sha256:" + "4" * 64)
        for r in rows if r.provider == "torch"
    ]  # fmt: skip
    out = tmp_path / "site"
    write_site(out, FakeSource([*rows, *memory], source.workloads))
    page = open_page(file_url(out / "index.html", f"/trends?workload={rows[0].workload_digest}"))
    _settle(page, "#trend-chart canvas")
    assert page.page.get_attribute("#trend-chart", "data-scale") == "log"
    legend = _texts(page, "#trend-legend > span")
    assert len(legend) == 4
    assert not [t for t in legend if "liger" in t or "protocol" in t]
    assert page.errors == []


def test_an_empty_store_says_no_runs_yet(tmp_path: Path, open_page: Open) -> None:
    out = tmp_path / "site"
    write_site(out, FakeSource([], {}))
    for view in ("/health", "/trends", "/compare", "/runs"):
        page = open_page(file_url(out / "index.html", view))
        _settle(page, "#empty-store")
        assert page.page.text_content("h2") == "No runs yet"
        assert page.errors == []


def test_the_record_page_shows_indented_json_and_downloads_the_stored_text(
    tmp_path: Path, open_page: Open
) -> None:
    source = synthetic(commits=1, operations=("jsd",), dtypes=("fp32",), gpus=("NVIDIA H200",))
    texts = {r.name: json.dumps({"run": {"metadata": {"name": r.name}}}) for r in source.rows()}
    out = tmp_path / "site"
    write_site(out, FakeSource(source.rows(), source.workloads, texts))
    name = source.rows()[0].name
    page = open_page(file_url(out / "index.html", "/runs"))
    _settle(page, "#runs tbody tr a")
    page.page.click(f"text={name}")
    _settle(page, "#record-text")
    shown = page.page.text_content("#record-text")
    assert shown == json.dumps(json.loads(texts[name]), indent=2)
    stored: Any = page.page.evaluate(
        "async () => await (await fetch(document.querySelector('#record-download').href)).text()"
    )
    assert stored == texts[name]
    assert page.errors == []


def test_a_degraded_run_is_marked_with_its_reason(tmp_path: Path, open_page: Open) -> None:
    source = synthetic(commits=3, operations=("jsd",), dtypes=("fp32",), gpus=("NVIDIA H200",))
    rows = source.rows()
    rows[-1] = degraded(rows[-1], "throttled (HwSlowdown)")
    out = tmp_path / "site"
    write_site(out, FakeSource(rows, source.workloads, source.texts))
    page = open_page(file_url(out / "index.html", "/runs"))
    _settle(page, "#runs tbody tr")
    marks = page.page.eval_on_selector_all(
        "#runs tbody td[title]", "n => n.map(x => x.getAttribute('title'))"
    )
    assert marks == ["throttled (HwSlowdown)"]
    assert synthetic_commit(2) in {r.commit for r in rows}
    assert page.errors == []
