"""A record source without a store: synthetic runs, their workloads and texts.

The dashboard reads runs through RunRow, workloads through ``spec`` and record texts
through ``records``; this source answers all three from memory, so the page and
its browser tests do not depend on a database.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kernelindex_sdk.site import Step
from kernelindex_sdk.store._rows import RunRow

HOSTILE = '</script><script>window.PWNED=1</script><img src=x onerror="window.PWNED=2">\u2028'


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def synthetic_commit(c: int) -> str:
    """The fake commit sha of the ``c``-th commit of :func:`synthetic`."""
    return hashlib.sha1(f"commit{c}".encode()).hexdigest()  # noqa: S324 (a fake sha)


class FakeSource:
    """Runs held in memory: ``rows`` plus ``workloads`` by digest and ``texts`` by name."""

    def __init__(
        self,
        rows: Sequence[RunRow],
        workloads: Mapping[str, Mapping[str, Any]],
        texts: Mapping[str, str] | None = None,
    ) -> None:
        self._rows = list(rows)
        self.workloads = dict(workloads)
        self.texts = dict(texts or {})

    def rows(self) -> list[RunRow]:
        return list(self._rows)

    def spec(self, kind: str, digest: str) -> Mapping[str, Any] | None:
        if kind != "workload":
            return None
        return self.workloads.get(digest)

    def records(self, names: Iterable[str]) -> Iterable[tuple[str, str]]:
        for name in names:
            yield name, self.texts.get(name) or json.dumps({"metadata": {"name": name}})


def synthetic(
    *,
    commits: int = 12,
    operations: Sequence[str] = ("jsd", "cross_entropy"),
    gpus: Sequence[str] = ("NVIDIA H200", "NVIDIA B200"),
    providers: Sequence[str] = ("triton", "torch"),
    dtypes: Sequence[str] = ("fp32", "bf16"),
    step_at: int | None = 8,
    hostile: bool = False,
    seed: int = 0,
) -> FakeSource:
    """Runs of every operation x dtype x GPU x provider at each commit on main.

    The triton line on the first GPU gets 30% slower at commit ``step_at``; every other
    line stays level (within 1% noise). With ``hostile`` every name and label carries
    markup and line separators.
    """
    rng = random.Random(seed)  # noqa: S311 (test timings, not secrets)
    rows = []
    workloads: dict[str, dict[str, Any]] = {}
    texts = {}
    tag = HOSTILE if hostile else ""
    for c in range(commits):
        commit = synthetic_commit(c)
        when = f"2026-11-{1 + c // 24:02d}T{c % 24:02d}:00:00.000Z"
        for op in operations:
            for dtype in dtypes:
                workload = {
                    "operation": op,
                    "pass": "forward",
                    "parameters": {"dtype": dtype, "tokens": 1024, "vocab": 128256}
                    | ({"note": tag} if hostile else {}),
                    "bytesMoved": 1_050_673_152 // (2 if dtype == "bf16" else 1),
                }
                wd = _digest(json.dumps(workload, sort_keys=True))
                workloads[wd] = workload
                for g, gpu in enumerate(gpus):
                    for provider in providers:
                        base = 250_000 * (1 + g) * (2 if provider == "torch" else 1)
                        slow = (
                            step_at is not None and c >= step_at and provider == "triton" and g == 0
                        )
                        median = int(base * (1.3 if slow else 1.0) * (1 + rng.uniform(-0.01, 0.01)))
                        name = f"{op}-{dtype}-{provider}-{g}-{c}"
                        if hostile:
                            name = f"{name}{tag}"
                        rows.append(
                            RunRow(
                                name=name,
                                status="passed" if (c + g) % 7 else "unverified",
                                observed_at=when,
                                commit=commit,
                                branch="main",
                                commit_time=when,
                                median_ns=median,
                                p20_ns=int(median * 0.98),
                                p80_ns=int(median * 1.03),
                                workload_digest=wd,
                                implementation_digest=_digest(provider + ("2" if slow else "")),
                                protocol_digest=_digest("protocol"),
                                environment_digest=_digest(gpu),
                                operation=op,
                                pass_="forward",
                                provider=provider,
                                entry_point=f"{provider}:{op}{tag}",
                                hardware=gpu,
                                labels={"note": tag} if hostile else {},
                            )
                        )
                        texts[name] = json.dumps(
                            {"run": {"metadata": {"name": name, "labels": {"note": tag}}}},
                            ensure_ascii=False,
                            indent=2,
                        )
    return FakeSource(rows, workloads, texts)


def level_steps(line: Sequence[RunRow]) -> list[Step]:
    """Steps where the median moves by more than 10% from the previous run (tests only)."""
    steps = []
    for i in range(1, len(line)):
        before, after = line[i - 1].median_ns, line[i].median_ns
        if before and after and abs(after / before - 1) > 0.10:
            steps.append(Step(index=i, ratio=after / before, cause="implementation", detail="x"))
    return steps
