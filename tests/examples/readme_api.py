"""The README's API example: build a record from scratch, digest, write, read back.

tests/test_packaging.py runs it and type-checks it with mypy --strict; the README's
Python block is this file's code from the first import on.
"""

from datetime import datetime, timezone
from pathlib import Path

import kernelindex_sdk as ki
from kernelindex_sdk import digest
from kernelindex_sdk.models import (
    BenchmarkProtocol,
    BenchmarkRun,
    EnvironmentSpec,
    ExecutionEnvironment,
    Hardware,
    Harness,
    Implementation,
    LatencyNs,
    MeasurementMethod,
    ObjectMeta,
    ProtocolSpec,
    RecordBundle,
    RunSpec,
    Timing,
    Workload,
)

# apiVersion and kind default to their constants.
protocol = BenchmarkProtocol(
    metadata=ObjectMeta(name="my-harness-median"),
    spec=ProtocolSpec(
        harness=Harness(name="my-harness", version="1.0"),
        measurement=MeasurementMethod(timer="cuda_events", primary_statistic="median"),
    ),
)
environment = ExecutionEnvironment(
    metadata=ObjectMeta(name="nvidia-h200"),
    spec=EnvironmentSpec(
        hardware=Hardware(vendor="nvidia", product="NVIDIA H200", architecture="sm_90"),
        software={"torch": "2.11.0", "triton": "3.6.0"},
    ),
)
workload = Workload(operation="jsd", pass_="forward", parameters={"tokens": 8192, "vocab": 128256})
implementation = Implementation(provider="triton", packages={"kernelindex-sdk": ki.__version__})
run = BenchmarkRun(
    metadata=ObjectMeta(name="jsd-forward-triton-h200"),
    spec=RunSpec(
        status="unverified",
        # Held as UTC milliseconds, as the published form writes it.
        observed_at=datetime.now(timezone.utc),
        timing=Timing(latency_ns=LatencyNs(median=146_000), primary_statistic="median"),
        workload=workload,
        implementation=implementation,
        # The digest helpers take models and JSON values alike.
        protocol_digest=digest.protocol_digest(protocol.spec),
        environment_digest=digest.environment_digest(environment.spec),
        workload_digest=digest.workload_digest(workload),
        implementation_digest=digest.implementation_digest(implementation),
    ),
)
bundle = RecordBundle(run=run, protocol=protocol, environment=environment)

text = ki.dumps(bundle)  # validates first (SchemaValidationError), then the published form
Path("record.json").write_text(text, encoding="utf-8")

loaded = ki.load_record(Path("record.json").read_bytes(), verify_digests=True)
assert loaded == bundle  # the round trip is exact
timing = loaded.run.spec.timing  # Optional: a failed run has no timing
if timing is not None and timing.latency_ns.median is not None:
    print(f"median {timing.latency_ns.median} ns at {loaded.run.spec.observed_at:%H:%M:%S}")
