"""kernelindex_sdk.declared_digests and `kernelindex digest`: every kind, placed problems."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from kernelindex_sdk import digest
from kernelindex_sdk._cli import _parser, main
from kernelindex_sdk.declared_digests import digest_documents

EXAMPLE = Path(__file__).parent / "fixtures" / "liger-jsd-forward-torch-b200.json"
DOC = json.loads(EXAMPLE.read_text("utf-8"))
PROTOCOL_DIGEST = digest.protocol_digest(DOC["protocol"]["spec"])
ENVIRONMENT_DIGEST = digest.environment_digest(DOC["environment"]["spec"])


def run(*argv: str, stdin: bytes = b"") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=io.BytesIO(stdin))
    return status, out.getvalue(), err.getvalue()


def _write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value, indent=2) + "\n", "utf-8")
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """One file of each kind validate accepts, and an invalid run."""
    broken = json.loads(json.dumps(DOC))
    broken["run"]["spec"]["timing"]["latencyNs"]["median"] = -5
    return {
        "bundle": EXAMPLE,
        "run": _write(tmp_path / "run.json", DOC["run"]),
        "protocol": _write(tmp_path / "protocol.json", DOC["protocol"]),
        "environment": _write(tmp_path / "environment.json", DOC["environment"]),
        "broken": _write(tmp_path / "broken.json", broken),
    }


def test_standalone_protocol_and_environment_give_their_own_digest(
    files: dict[str, Path],
) -> None:
    """The digest a run declares for them is the one computed from the document alone."""
    [protocol, environment] = digest_documents([files["protocol"], files["environment"]])
    [p] = protocol.comparisons
    [e] = environment.comparisons
    assert (p.field, p.declared, p.computed, p.matches) == (
        "protocolDigest",
        None,
        PROTOCOL_DIGEST,
        None,
    )
    assert (e.field, e.declared, e.computed) == ("environmentDigest", None, ENVIRONMENT_DIGEST)
    assert p.computed == DOC["run"]["spec"]["protocolDigest"]
    assert protocol.ok
    assert environment.ok


def test_every_kind_validate_accepts_is_taken_by_the_cli(files: dict[str, Path]) -> None:
    paths = [str(files[k]) for k in ("bundle", "run", "protocol", "environment")]
    for path in paths:
        assert run("validate", "-q", path) == (0, "", ""), path
    status, out, err = run("digest", *paths)
    assert (status, err) == (0, "")
    shown = [line for line in out.splitlines() if not line.startswith(" ")]
    assert shown == paths
    assert f"computed  {PROTOCOL_DIGEST}  its own digest" in out
    assert f"computed  {ENVIRONMENT_DIGEST}  its own digest" in out
    # The bundle's two carried digests match; the run alone carries neither object.
    assert out.count("  ok") == 2


def test_an_invalid_record_is_placed_as_validate_places_it(files: dict[str, Path]) -> None:
    _, shown_by_validate, _ = run("validate", str(files["broken"]))
    status, out, err = run("digest", str(files["broken"]), str(files["protocol"]))
    assert status == 1
    assert err == shown_by_validate
    assert err.startswith(f"{files['broken']}:8:21: /run/spec/timing/latencyNs/median: ")
    # The valid file after it is still shown.
    assert out.startswith(f"{files['protocol']}\n")


def test_json_form_lists_problems_with_lines(files: dict[str, Path]) -> None:
    status, out, _ = run("digest", "--format", "json", str(files["broken"]), str(files["run"]))
    assert status == 1
    broken, run_entry = json.loads(out)
    [problem] = broken["problems"]
    assert (problem["line"], problem["column"], problem["code"]) == (8, 21, "minimum")
    assert [d["field"] for d in run_entry["digests"]] == [
        "protocolDigest",
        "environmentDigest",
        "workloadDigest",
        "implementationDigest",
    ]


def test_a_missing_path_is_a_usage_error_and_the_others_are_shown(
    files: dict[str, Path], tmp_path: Path
) -> None:
    status, out, err = run("digest", str(tmp_path / "missing.json"), str(files["protocol"]))
    assert status == 2
    assert "missing.json" in err
    assert out.startswith(f"{files['protocol']}\n")


def test_folders_and_standard_input_are_read_as_validate_reads_them(
    files: dict[str, Path], tmp_path: Path
) -> None:
    status, out, _ = run("digest", str(tmp_path), "-", stdin=files["protocol"].read_bytes())
    assert status == 1  # broken.json is in the folder
    labels = [line for line in out.splitlines() if not line.startswith(" ")]
    assert sorted(labels[:-1]) == sorted(str(files[k]) for k in ("run", "protocol", "environment"))
    assert labels[-1] == "<stdin>"


def test_a_mismatch_in_a_bundle_is_not_ok(tmp_path: Path) -> None:
    changed = json.loads(json.dumps(DOC))
    changed["protocol"]["spec"]["measurement"]["timer"] = "cuda_graph"
    [result] = digest_documents([_write(tmp_path / "changed.json", changed)])
    assert not result.ok
    assert [c.matches for c in result.comparisons][:2] == [False, True]


def test_digest_has_a_description() -> None:
    parser = _parser()
    [sub] = [a for a in parser._actions if hasattr(a, "choices") and a.choices]
    description = sub.choices["digest"].description
    assert description
    assert "protocol" in description
    assert "line:col" in description
