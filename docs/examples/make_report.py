"""Render the example report of our H200 JSD forward results (docs/examples/jsd-h200-report.*).

    python docs/examples/make_report.py

Reads benchmarks/results/jsd_forward_h200.jsonl and writes, beside this script,
jsd-h200-report.md (the ``kernelindex report --format markdown`` tables, with the
commands that made them) and jsd-h200-report.png (``--plot``). Needs the [plot] extra.
"""

from __future__ import annotations

from pathlib import Path

from kernelindex_sdk import report
from kernelindex_sdk.compare import load_runs

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SOURCE = Path("benchmarks/results/jsd_forward_h200.jsonl")
MARKDOWN, PNG = HERE / "jsd-h200-report.md", HERE / "jsd-h200-report.png"


def main() -> None:
    runs = load_runs([ROOT / SOURCE])
    if runs.problems:
        raise SystemExit("\n".join(map(str, runs.problems)))
    found = report.families(runs)
    report.plot(found, PNG)
    text = f"""# Example report: JSD forward on one NVIDIA H200

Made by `python docs/examples/make_report.py` from `{SOURCE.as_posix()}`
({len(runs.runs)} runs); the same as

```
kernelindex report {SOURCE.as_posix()} --format markdown --plot {PNG.name}
```

Each table is one workload family: the swept parameter (`tokens`, the one with the most
values) down the rows, one column per implementation (median, p20-p80), and each
implementation's speedup against the first one ({found[0].implementations[0]}).

![latency and achieved bandwidth against tokens]({PNG.name})

{report.render(found, "markdown")}"""
    MARKDOWN.write_text(text, encoding="utf-8")
    print(f"wrote {MARKDOWN.relative_to(ROOT)} and {PNG.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
