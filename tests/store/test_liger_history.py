"""A real history: four versions of Liger-Kernel's CSV imported and ingested oldest first.

Each version is imported with its commit (from the file name) and ingested. Liger's CSV
keeps one row per key, so a later version repeats every row nobody re-measured: here the
other kernels' rows (the subset fixture) ride along unchanged in every version, as they
do upstream. Those are the same measurements seen again, skipped as differing only in
provenance, and keep their first commit; export gives back exactly what went in.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from kernelindex_sdk._cli import main
from kernelindex_sdk.store import Store

LIGER = Path(__file__).parent.parent / "fixtures" / "liger"
# Oldest first; the file names give the commit date, and of the two on 2025-02-28
# d63b888d68ff's rows were measured first (2025-02-28 22:xx against 2025-03-01 01:xx).
VERSIONS = (
    "2025-01-22-022a7947bf6b",
    "2025-02-28-d63b888d68ff",
    "2025-02-28-636813534168",
    "2025-03-03-ee5aaf26b934",
)


OTHERS = len((LIGER / "all_benchmark_data.subset.csv").read_text(encoding="utf-8").splitlines()) - 1


def _cli(*argv: str) -> str:
    err = io.StringIO()
    status = main(list(argv), stdout=io.StringIO(), stderr=err)
    assert status == 0, err.getvalue()
    return err.getvalue()


def _version_csv(tmp_path: Path, version: str) -> Path:
    """The version's kto_loss rows with the other kernels' rows, unchanged, after them."""
    kto = (LIGER / "history" / f"{version}.csv").read_text(encoding="utf-8")
    others = (LIGER / "all_benchmark_data.subset.csv").read_text(encoding="utf-8")
    path = tmp_path / f"{version}.csv"
    path.write_text(kto + others.split("\n", 1)[1], encoding="utf-8")
    return path


def test_history_versions_ingest_oldest_first_and_export_byte_for_byte(
    store: Store, store_url: str, tmp_path: Path
) -> None:
    went_in: list[str] = []
    first_commit: dict[str, str] = {}
    for number, version in enumerate(VERSIONS):
        commit = version.rsplit("-", 1)[1]
        records = tmp_path / f"{version}.jsonl"
        _cli(
            "import", "liger", str(_version_csv(tmp_path, version)), "-o", str(records),
            "--commit", commit, "--branch", "main",
        )  # fmt: skip
        lines = records.read_text(encoding="utf-8").splitlines(keepends=True)
        assert len(lines) == 30 + OTHERS
        report = store.ingest([records])
        assert report.ok, report.problems
        # Every version re-measured its 30 kto_loss rows; the others reappear unchanged.
        expected_skips = 0 if number == 0 else OTHERS
        assert (report.added, report.provenance_only) == (
            len(lines) - expected_skips,
            expected_skips,
        )
        for line in lines:
            name = json.loads(line)["run"]["metadata"]["name"]
            if name not in first_commit:
                first_commit[name] = commit
                went_in.append(line)
    assert "".join(store.export_lines()) == "".join(went_in)
    rows = store.rows()
    assert len(rows) == len(went_in) == 4 * 30 + OTHERS
    assert {row.name: row.commit for row in rows} == first_commit
    # The step at liger 0.5.4: the liger kto_loss forward at B=16 about 2.5x faster.
    kto = {
        row.labels["liger_version"]: row.median_ns
        for row in store.rows(operation="kto_loss", provider="liger", pass_="forward")
        if "batch16-" in row.name and row.hardware == "NVIDIA H100 80GB HBM3"
    }
    assert set(kto) == {"0.5.3", "0.5.4"}
    assert 2.0 < kto["0.5.3"] / kto["0.5.4"] < 3.0  # type: ignore[operator]


def test_history_ingested_again_adds_nothing(store_url: str, tmp_path: Path) -> None:
    paths = []
    for version in VERSIONS:
        records = tmp_path / f"{version}.jsonl"
        _cli("import", "liger", str(LIGER / "history" / f"{version}.csv"), "-o", str(records),
             "--commit", version.rsplit("-", 1)[1])  # fmt: skip
        paths.append(str(records))
    assert "120 record(s) added" in _cli("ingest", *paths, "--db", store_url)
    assert "0 record(s) added, 120 skipped (120 already stored" in _cli(
        "ingest", *paths, "--db", store_url
    )
