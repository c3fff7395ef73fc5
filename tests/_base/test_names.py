"""The naming module: every name it builds is a schema Name, and different texts stay apart."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernelindex_sdk._base import names as _names

COMMON = Path(__file__).resolve().parents[2] / "schemas" / "v1alpha1" / "common.json"


def schema_name() -> dict[str, object]:
    return json.loads(COMMON.read_text(encoding="utf-8"))["$defs"]["Name"]  # type: ignore[no-any-return]


def test_constants_are_the_schemas_name() -> None:
    name = schema_name()
    assert name["maxLength"] == _names.NAME_MAX_LENGTH
    # The schema anchors with $(?!\n), which means end of input in ECMA-262 and Python alike.
    assert name["pattern"] == "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$(?!\\n)"
    for text in ("a", "a-b", "0", "a1-b2-c3"):
        assert _names.is_name(text)
    for text in ("", "-a", "a-", "A", "a_b", "a\n", "é", "a" * 254):
        assert not _names.is_name(text)


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        (("liger-bench", "NVIDIA B200"), "liger-bench-nvidia-b200"),
        (("NVIDIA A100-SXM4-80GB",), "nvidia-a100-sxm4-80gb"),
        (("a_b", "c.d", "e/f", "g:h"), "a-b-c-d-e-f-g-h"),
        (("  spaced   out  ",), "spaced-out"),
    ],
)
def test_case_and_separators_fold_without_a_hash(parts: tuple[str, ...], expected: str) -> None:
    assert _names.name(*parts) == expected


def test_case_only_spellings_share_a_name() -> None:
    """Callers that need them apart (two specs) add a suffix: see the importer's namespace."""
    assert _names.name("NVIDIA B200") == _names.name("nvidia b200")


@pytest.mark.parametrize("text", ["@@@", "+", "   ", "", "\u2603", "\ud800"])
def test_text_with_nothing_left_still_gets_a_name(text: str) -> None:
    got = _names.name(text)
    assert _names.is_name(got)
    assert len(got) == _names.HASH_LENGTH


def test_symbols_and_non_ascii_letters_get_a_hash_that_keeps_texts_apart() -> None:
    plain, plus = _names.name("c"), _names.name("c++")
    assert plus.startswith("c-")
    assert plus != plain
    assert _names.name("Über GPU") != _names.name("uber gpu")
    assert _names.name("Über GPU").startswith("uber-gpu-")
    assert _names.name("@@@") != _names.name("###")


def test_hash_is_stable() -> None:
    """The same parts give the same name in every process (sha256, not hash())."""
    assert _names.name("@@@") == hashlib.sha256(b"@@@").hexdigest()[:8]
    joined = hashlib.sha256(b"liger-bench\0@@@").hexdigest()[:8]
    assert _names.name("liger-bench", "@@@") == f"liger-bench-{joined}"


def test_part_boundaries_count() -> None:
    assert _names.name("a+", "b") != _names.name("a", "+b")


def test_long_names_are_cut_with_a_hash_and_stay_distinct() -> None:
    first = _names.name("x" * 300)
    second = _names.name("x" * 301)
    assert len(first) == len(second) == _names.NAME_MAX_LENGTH
    assert first != second
    assert _names.is_name(first)


def test_suffix_is_kept_whole_and_last() -> None:
    got = _names.name("x" * 300, suffix="2")
    assert got.endswith("-2")
    assert len(got) == _names.NAME_MAX_LENGTH
    assert _names.name("run", suffix="2") == "run-2"


@pytest.mark.parametrize("suffix", ["-2", "A", "a b", "x\n"])
def test_a_suffix_that_is_no_name_is_refused(suffix: str) -> None:
    with pytest.raises(ValueError, match="suffix"):
        _names.name("run", suffix=suffix)


def test_a_max_length_too_small_for_the_suffix_is_refused() -> None:
    with pytest.raises(ValueError, match="no room"):
        _names.name("run", suffix="abcdef", max_length=4)


def test_slug_drops_accents_and_keeps_ascii() -> None:
    assert _names.slug("Café Ünïcode") == "cafe-unicode"
    assert _names.slug("ǅ") == "dz"
    assert _names.slug("١٠٢٤") == ""


@given(st.lists(st.text(), min_size=1, max_size=4), st.integers(min_value=20, max_value=253))
def test_every_name_matches_the_schema_pattern(parts: list[str], max_length: int) -> None:
    got = _names.name(*parts, max_length=max_length)
    assert re.fullmatch(schema_name()["pattern"], got)  # type: ignore[arg-type]
    assert 1 <= len(got) <= max_length


@given(st.text(), st.text())
def test_texts_that_differ_beyond_case_and_separators_get_different_names(a: str, b: str) -> None:
    def folded(text: str) -> str:
        return _names.slug(text) if re.fullmatch(r"[A-Za-z0-9 \t\-_./:]*", text) else text

    if folded(a) != folded(b):
        assert _names.name(a) != _names.name(b)


def test_unique_suffixes_are_valid_name_parts_and_differ() -> None:
    suffixes = {_names.unique_suffix() for _ in range(1000)}
    assert len(suffixes) == 1000
    for suffix in suffixes:
        assert re.fullmatch(r"[0-9a-f]{8}", suffix)
        assert _names.is_name(_names.name("run", suffix=suffix))


def test_unique_suffixes_differ_across_processes() -> None:
    """Two processes started alike (no shared seed) draw different suffixes."""
    import subprocess
    import sys

    code = "from kernelindex_sdk._base import names; print(names.unique_suffix())"
    drawn = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()
        for _ in range(3)
    }
    assert len(drawn) == 3
