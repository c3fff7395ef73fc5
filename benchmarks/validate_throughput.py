"""Validation throughput on one core: ours beside python-jsonschema, naive and cached.

Per document kind (the published example, whose protocol and environment digests are
recomputable, and an imported Liger bundle, which carries all four digested objects):

- kernelindex validate(): schema (compiled fast path, python-jsonschema for detail) and
  the semantic checks; then with every digest verified;
- naive: jsonschema.validate(doc, schema) per document (checks the schema each call);
- cached: one Draft202012Validator with the registry, built once; then with the digests
  recomputed through rfc8785, the reference implementation.

And the cost of writing the published form, which validates first: kernelindex dumps() of
a model and of a JSON value, validated and not, beside the stdlib's json.dumps(indent=2)
(no validation, no key order, Python's number text), the floor any writer pays.

    python benchmarks/validate_throughput.py [--out benchmarks/results/validate_throughput.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import rfc8785
from _results import machine_facts, write_results

import kernelindex_sdk as ki
from kernelindex_sdk import digest, validation
from kernelindex_sdk._base.schemas import BASE_URI, SCHEMA_FILES, load_schemas
from kernelindex_sdk.importers import liger

ROOT = Path(__file__).resolve().parent.parent


def rate(fn: Callable[[], Any], seconds: float) -> float:
    """Calls per second of ``fn`` over about ``seconds`` (after one warm-up call)."""
    fn()
    calls, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(10):
            fn()
        calls += 10
    return calls / elapsed


def reference_digests(doc: dict[str, Any]) -> None:
    spec = doc["run"]["spec"]
    objects = {
        "protocolDigest": ("BenchmarkProtocol", doc.get("protocol", {}).get("spec")),
        "environmentDigest": ("ExecutionEnvironment", doc.get("environment", {}).get("spec")),
        "workloadDigest": ("Workload", spec.get("workload")),
        "implementationDigest": ("Implementation", spec.get("implementation")),
    }
    for field, (kind, content) in objects.items():
        if content is not None:
            data = rfc8785.dumps(digest.preimage(kind, content))
            if spec[field] != "sha256:" + hashlib.sha256(data).hexdigest():
                raise AssertionError(field)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--out")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    example = json.loads(
        (ROOT / "tests" / "fixtures" / "liger-jsd-forward-torch-b200.json").read_text()
    )
    csv = ROOT / "tests" / "fixtures" / "liger" / "all_benchmark_data.subset.csv"
    imported = next(
        ki.dump(b)
        for b in liger.read(csv)
        if b.run.spec.workload and b.run.spec.workload.operation == "jsd"
    )
    bundle_schema = load_schemas()[SCHEMA_FILES["RecordBundle"]]
    registry = validation.registry()
    cached = jsonschema.Draft202012Validator(
        {"$ref": BASE_URI + SCHEMA_FILES["RecordBundle"]},
        registry=registry,
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )

    def naive(doc: dict[str, Any]) -> None:
        jsonschema.validate(
            doc, bundle_schema, cls=jsonschema.Draft202012Validator, registry=registry
        )

    rows = []
    for label, doc in (("published example", example), ("imported Liger bundle", imported)):
        assert ki.validate(doc, verify_digests=True) == []
        candidates: dict[str, Callable[[], Any]] = {
            "kernelindex validate()": lambda d=doc: validation.validate(d),
            "kernelindex validate(verify_digests=True)": lambda d=doc: validation.validate(
                d, verify_digests=True
            ),
            "naive jsonschema.validate()": lambda d=doc: naive(d),
            "cached python-jsonschema validator": lambda d=doc: cached.validate(d),
            "cached python-jsonschema + rfc8785 digests": lambda d=doc: (
                cached.validate(d),
                reference_digests(d),
            ),
        }
        for name, fn in candidates.items():
            seconds = args.seconds / 4 if name.startswith("naive") else args.seconds
            per_second = rate(fn, seconds)
            rows.append(
                {"document": label, "validator": name, "documents_per_second": round(per_second)}
            )
            print(f"{label:24} {name:46} {per_second:10.0f} /s", flush=True)
    writers = []
    for label, doc in (("published example", example), ("imported Liger bundle", imported)):
        model = ki.load_record(doc)
        candidates = {
            "kernelindex dumps(model)": lambda m=model: ki.dumps(m),
            "kernelindex dumps(model, validate=False)": lambda m=model: ki.dumps(m, validate=False),
            "kernelindex dumps(json value)": lambda d=doc: ki.dumps(d),
            "kernelindex dumps(json value, validate=False)": lambda d=doc: ki.dumps(
                d, validate=False
            ),
            "kernelindex dumps(model, indent=None)": lambda m=model: ki.dumps(m, indent=None),
            "stdlib json.dumps(json value, indent=2)": lambda d=doc: json.dumps(
                d, indent=2, ensure_ascii=False
            ),
        }
        for name, fn in candidates.items():
            per_second = rate(fn, args.seconds)
            writers.append(
                {"document": label, "writer": name, "documents_per_second": round(per_second)}
            )
            print(f"{label:24} {name:46} {per_second:10.0f} /s", flush=True)
    ours = {(r["document"], r["validator"]): r["documents_per_second"] for r in rows}
    for label in ("published example", "imported Liger bundle"):
        ratio = (
            ours[(label, "kernelindex validate()")]
            / ours[(label, "cached python-jsonschema validator")]
        )
        print(f"{label}: ours / cached python-jsonschema = {ratio:.1f}x")
    result = {
        **machine_facts(),
        "cores_used": 1,
        "goals": {"schema_and_semantic_per_second": 20000, "with_digests_per_second": 10000},
        "rows": rows,
        "writers": writers,
    }
    if args.out:
        write_results(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
