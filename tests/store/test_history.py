"""History: change points with their causes, in each output format."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from _history_rows import medians, row, series_rows

from kernelindex_sdk.errors import ArgumentError
from kernelindex_sdk.store.history import history, history_as_json, render_history

IMPL_A = "sha256:" + "1" * 64
IMPL_B = "sha256:" + "2" * 64
ENV_A = "sha256:" + "e" * 64
ENV_B = "sha256:" + "f" * 64
SPECS: dict[tuple[str, str], Mapping[str, Any]] = {
    ("implementation", IMPL_A): {"provider": "triton", "packages": {"triton": "3.5.0"}},
    ("implementation", IMPL_B): {"provider": "triton", "packages": {"triton": "3.6.0"}},
    ("environment", ENV_A): {"hardware": {"product": "NVIDIA H200"}, "driver": "570.1"},
    ("environment", ENV_B): {"hardware": {"product": "NVIDIA H200"}, "driver": "575.2"},
    ("workload", "sha256:" + "a" * 64): {
        "operation": "jsd",
        "pass": "forward",
        "parameters": {"tokens": 1024, "dtype": "bf16"},
    },
}


def spec(kind: str, digest: str) -> Mapping[str, Any] | None:
    return SPECS.get((kind, digest))


def one_change(rows: list[Any], **kwargs: Any) -> Any:
    [found] = history(rows, spec=spec, **kwargs)
    [change] = found.changes
    return change


def test_implementation_change_names_the_package() -> None:
    rows = series_rows(medians(40, [(20, 1.05)], seed=1), implementation_digest=(20, IMPL_B))
    change = one_change(rows)
    assert (change.index, change.cause, change.direction) == (20, "implementation", "slower")
    assert [str(d) for d in change.differences] == ["packages.triton '3.5.0' -> '3.6.0'"]
    assert change.ratio == pytest.approx(1.05, abs=0.01)
    assert change.run == rows[20].name
    assert change.commit == rows[20].commit


def test_environment_change_names_the_driver() -> None:
    rows = series_rows(medians(40, [(25, 0.95)], seed=2), environment_digest=(25, ENV_B))
    change = one_change(rows)
    assert (change.index, change.cause, change.direction) == (25, "environment", "faster")
    assert [(d.object, d.field, d.before, d.after) for d in change.differences] == [
        ("environment", "driver", "570.1", "575.2")
    ]


def test_labels_only() -> None:
    values = medians(40, [(20, 1.1)], seed=3)
    rows = series_rows(values, labels=(20, {"liger_version": "0.5.4"}))
    rows[:20] = [row(i, values[i], labels={"liger_version": "0.5.3"}) for i in range(20)]
    change = one_change(rows)
    assert change.cause == "labels"
    assert [str(d) for d in change.differences] == ["liger_version '0.5.3' -> '0.5.4'"]


def test_unexplained_when_nothing_recorded_changed() -> None:
    change = one_change(series_rows(medians(40, [(20, 1.08)], seed=4)))
    assert (change.cause, change.differences) == ("unexplained", ())
    assert change.tested
    assert change.p_value is not None
    assert change.p_value < 1e-6


def test_step_within_one_point_of_a_recorded_change_is_placed_there() -> None:
    """A step the test locates one point off moves to where the code changed."""
    for seed in range(30):
        rows = series_rows(
            medians(40, [(20, 1.06)], seed=100 + seed), implementation_digest=(20, IMPL_B)
        )
        [found] = history(rows, spec=spec)
        near = [c for c in found.changes if abs(c.index - 20) <= 1]
        for change in near:
            assert (change.index, change.cause) == (20, "implementation")


def test_without_specs_the_digests_are_named() -> None:
    rows = series_rows(medians(40, [(20, 1.05)], seed=5), implementation_digest=(20, IMPL_B))
    [found] = history(rows)
    [change] = found.changes
    assert [(d.field, d.before, d.after) for d in change.differences] == [
        ("implementationDigest", IMPL_A, IMPL_B)
    ]


def test_short_series_are_judged_by_compares_rule() -> None:
    rows = [row(0, 157e6), row(1, 157.2e6), row(2, 61e6, labels={"v": "2"})]
    [found] = history(rows, spec=spec)
    assert not found.tested
    [change] = found.changes
    assert (change.index, change.tested, change.p_value, change.cause) == (2, False, None, "labels")
    assert "too short to test" in render_history([found])


def test_json_form() -> None:
    values = medians(40, [(20, 1.05)], seed=6)
    rows = series_rows(values, implementation_digest=(20, IMPL_B))
    rows.append(row(99, None, status="failed"))
    doc = json.loads(render_history(history(rows, spec=spec), "json"))
    [series] = doc["series"]
    assert series["label"] == "jsd forward dtype=bf16 tokens=1024"
    assert series["parameters"] == {"tokens": 1024, "dtype": "bf16"}
    assert (series["hardware"], series["provider"], series["tested"]) == (
        "NVIDIA H200",
        "triton",
        True,
    )
    assert len(series["points"]) == 40
    assert series["points"][0] == {
        "commit": rows[0].commit,
        "branch": None,
        "commitTime": rows[0].commit_time,
        "observedAt": rows[0].observed_at,
        "run": rows[0].name,
        "median": rows[0].median_ns,
        "p20": rows[0].p20_ns,
        "p80": rows[0].p80_ns,
    }
    assert series["failed"] == [
        {
            "commit": rows[-1].commit,
            "observedAt": rows[-1].observed_at,
            "run": rows[-1].name,
            "status": "failed",
        }
    ]
    [change] = series["changes"]
    assert change["index"] == 20
    assert series["points"][change["index"]]["run"] == change["run"]
    assert change["cause"] == "implementation"
    assert change["direction"] == "slower"
    assert change["differences"] == [
        {
            "object": "implementation",
            "field": "packages.triton",
            "before": "3.5.0",
            "after": "3.6.0",
        }
    ]
    assert set(change) >= {"ratio", "before", "after", "pValue", "tested", "commit"}
    assert history_as_json([]) == {"series": []}


def test_text_and_markdown_show_changes_and_latest_points() -> None:
    rows = series_rows(medians(40, [(20, 1.05)], seed=7), implementation_digest=(20, IMPL_B))
    found = history(rows, spec=spec)
    text = render_history(found, "text", points=3)
    assert "implementation" in text
    assert "packages.triton '3.5.0' -> '3.6.0'" in text
    assert "(latest 3 of 40 points)" in text
    assert rows[-1].name in text
    assert rows[-4].name not in text
    md = render_history(found, "markdown", points=0)
    assert md.startswith("**1 series, 1 with change points**")
    assert "| at | commit |" in md
    assert f"`{rows[0].name}`" in md


@pytest.mark.parametrize(("fmt", "points"), [("yaml", 10), ("text", -1)])
def test_render_rejects_bad_arguments(fmt: str, points: int) -> None:
    with pytest.raises(ArgumentError):
        render_history([], fmt, points=points)


def test_a_protocol_change_starts_a_series_that_follows_the_old_one() -> None:
    """The method changed: two series, the second naming what differs, never a step."""
    old_protocol, new_protocol = "sha256:" + "b" * 64, "sha256:" + "c" * 64
    specs = {
        ("protocol", old_protocol): {"harness": {"version": "0.3.1"}},
        ("protocol", new_protocol): {"harness": {"version": "0.3.2"}},
    }
    values = medians(40, [(20, 1.5)], seed=8)
    rows = series_rows(values, protocol_digest=(20, new_protocol))
    found = history(rows[::-1], spec=lambda kind, digest: specs.get((kind, digest)))
    assert [h.key.protocol_digest for h in found] == [old_protocol, new_protocol]
    assert [len(h.series.points) for h in found] == [20, 20]
    assert all(h.changes == () for h in found)
    assert found[0].follows is None
    follows = found[1].follows
    assert follows is not None
    assert follows.protocol_digest == old_protocol
    assert [str(d) for d in follows.differences] == ["harness.version '0.3.1' -> '0.3.2'"]
    doc = history_as_json(found)
    assert doc["series"][1]["follows"] == {
        "protocolDigest": old_protocol,
        "differences": [{"field": "harness.version", "before": "0.3.1", "after": "0.3.2"}],
    }
    assert "follows a series under another protocol" in render_history(found)


def test_json_text_parses_to_the_value_form() -> None:
    """The fast writer and json.dumps agree, hostile strings and missing values included."""
    values = medians(12, [(6, 1.2)], seed=9)
    rows = series_rows(values)
    rows[0] = row(0, values[0], branch='we"ird\\ \u2028 br\u00e4nch </script>', commit=None)
    rows[1] = row(1, values[1], p20_ns=None, p80_ns=None, commit_time=None)
    rows[2] = row(2, 1234.5, p20_ns=1200.25, p80_ns=1300.0)
    rows.append(row(50, None, status="failed"))
    found = history(rows, spec=spec)
    text = render_history(found, "json")
    assert text.endswith("}\n")
    assert json.loads(text) == history_as_json(found)
    assert json.loads(render_history([], "json")) == {"series": []}
