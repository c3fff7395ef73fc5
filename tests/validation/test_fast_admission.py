"""A bundle of objects all admitted before is admitted in a few lookups, as in full."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk.validation import InputRules, _fast

SWEEP = Path(__file__).parent.parent / "fixtures" / "h200-jsd-sweep.jsonl"


def _sweep_lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SWEEP.read_text(encoding="utf-8").splitlines()]


def _rules(shortcut: bool, monkeypatch: pytest.MonkeyPatch) -> InputRules:
    """Input rules with the shortcut on, or off as the switch turns it off."""
    with monkeypatch.context() as patch:
        if shortcut:
            patch.delenv(_fast.STRICT_READ, raising=False)
        else:
            patch.setenv(_fast.STRICT_READ, "1")
        return InputRules()


def _sharing(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies holding one protocol and one environment object, as the bundle reader
    hands them out: only then is the shortcut tried."""
    found = [json.loads(json.dumps(doc)) for doc in docs]
    for doc in found[1:]:
        doc["protocol"], doc["environment"] = found[0]["protocol"], found[0]["environment"]
    return found


@pytest.mark.parametrize(("flag", "expected"), [(0, 1), (False, 0), (0.0, 1), (None, 1)])
def test_a_workload_clash_is_found_with_the_shortcut_as_without(
    monkeypatch: pytest.MonkeyPatch, flag: Any, expected: int
) -> None:
    """``0`` is no ``false``: the same workload digest for another value is a clash."""
    first, same, other = _sharing([_sweep_lines()[0]] * 3)
    same["run"]["metadata"]["name"] += "-same"
    other["run"]["metadata"]["name"] += "-other"
    other["run"]["spec"]["workload"]["parameters"]["inputGrad"] = flag
    for shortcut in (True, False):
        rules = _rules(shortcut, monkeypatch)
        assert rules.admit(first, "a").problems == ()
        assert rules.admit(same, "b").problems == ()
        problems = rules.admit(other, "c").problems
        assert len(problems) == expected, (flag, shortcut, problems)
        assert all(p.code == "digest-clash" for p in problems)


def test_a_workload_orjson_cannot_write_is_compared_by_its_canonical_form(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, big = _sharing([_sweep_lines()[0]] * 2)
    big["run"]["metadata"]["name"] += "-big"
    big["run"]["spec"]["workload"]["parameters"]["tokens"] = 2**70
    for shortcut in (True, False):
        rules = _rules(shortcut, monkeypatch)
        assert rules.admit(first, "a").problems == ()
        assert rules.admit(big, "b").problems != ()


def test_a_sweep_is_admitted_alike_with_and_without_the_shortcut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its lines, then the same lines again (every name repeated), then another protocol
    under the first one's name and digest: the same problems, in the same places."""
    docs = _sharing(_sweep_lines())
    swapped = json.loads(json.dumps(docs[3]))
    swapped["run"]["metadata"]["name"] += "-swapped"
    swapped["protocol"]["spec"]["measurement"]["warmupMs"] += 1
    answers = []
    for shortcut in (True, False):
        rules = _rules(shortcut, monkeypatch)
        answers.append(
            [rules.admit(doc, f"f:{i}") for i, doc in enumerate([*docs, *docs, swapped])]
        )
    assert answers[0] == answers[1]
    assert sum(bool(a.problems) for a in answers[0]) == len(docs) + 1
