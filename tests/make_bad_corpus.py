"""Regenerates tests/bad/ from the example: `python tests/make_bad_corpus.py`.

Each case is a file under tests/bad/ and, in tests/bad_expected.json, the message
fragment `kernelindex validate` must print for it.
The corpus is committed; this script documents how each file was made.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _paths import parent_of, set_at

HERE = Path(__file__).parent
EXAMPLE = json.loads((HERE / "fixtures" / "liger-jsd-forward-torch-b200.json").read_text("utf-8"))
TEXT = (HERE / "fixtures" / "liger-jsd-forward-torch-b200.json").read_text("utf-8")


def edit(change: Callable[[dict[str, Any]], None]) -> bytes:
    doc = copy.deepcopy(EXAMPLE)
    change(doc)
    return json.dumps(doc, indent=2, ensure_ascii=False).encode()


def setter(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda doc: set_at(doc, path, value)


def deleter(path: str) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        node, key = parent_of(doc, path)
        del node[key]

    return change


RUN = EXAMPLE["run"]
CASES: dict[str, tuple[bytes, str]] = {
    "empty.json": (b"", "empty document"),
    "whitespace.json": (b"  \n\t\n", "empty document"),
    "truncated.json": (TEXT[: len(TEXT) // 2].encode(), "[json]"),
    "malformed-comma.json": (b'{"run": {},}', "[json]"),
    "single-quotes.json": (b"{'run': 1}", "[json]"),
    "bom.json": (b"\xef\xbb\xbf" + TEXT.encode(), "byte order mark"),
    "invalid-utf8.json": (TEXT.encode().replace(b"Jensen", b"J\xffnsen"), "invalid UTF-8"),
    "top-level-array.json": (b"[1, 2, 3]", "expected a JSON object"),
    "top-level-string.json": (b'"run"', "expected a JSON object"),
    "top-level-number.json": (b"42", "expected a JSON object"),
    "top-level-null.json": (b"null", "expected a JSON object"),
    "unknown-api-version.json": (
        edit(lambda d: None) and json.dumps({**RUN, "apiVersion": "kernelindex.dev/v2"}).encode(),
        "unsupported apiVersion 'kernelindex.dev/v2'",
    ),
    "missing-api-version.json": (
        json.dumps({k: v for k, v in RUN.items() if k != "apiVersion"}).encode(),
        "'apiVersion' is a required property; supported: 'kernelindex.dev/v1alpha1'",
    ),
    "unknown-kind.json": (
        json.dumps({**RUN, "kind": "BenchmarkRecord"}).encode(),
        "unsupported kind 'BenchmarkRecord'",
    ),
    "no-kind-no-run.json": (
        json.dumps({"apiVersion": "kernelindex.dev/v1alpha1"}).encode(),
        "'kind' is a required property; supported: BenchmarkProtocol",
    ),
    "missing-run.json": (
        json.dumps({"protocol": EXAMPLE["protocol"], "run2": 1}).encode(),
        "(document): 'run' is a required property",
    ),
    "missing-spec.json": (edit(deleter("/run/spec")), "'spec' is a required property"),
    "missing-observed-at.json": (
        edit(deleter("/run/spec/observedAt")),
        "'observedAt' is a required property",
    ),
    "missing-protocol-digest.json": (
        edit(deleter("/run/spec/protocolDigest")),
        "'protocolDigest' is a required property",
    ),
    "missing-metadata-name.json": (
        edit(deleter("/run/metadata/name")),
        "'name' is a required property",
    ),
    "unknown-key.json": (
        edit(setter("/run/spec/timing/latencyNs/medain", 5)),
        "unknown key 'medain'; did you mean 'median'?",
    ),
    "unknown-top-key.json": (edit(setter("/runs", {})), "unknown key 'runs'"),
    "latency-as-string.json": (
        edit(setter("/run/spec/timing/latencyNs/median", "2290080")),
        "expected an integer, got '2290080'",
    ),
    "latency-as-float.json": (
        edit(setter("/run/spec/timing/latencyNs/median", 2290080.5)),
        "expected an integer, got 2290080.5",
    ),
    "latency-as-bool.json": (edit(setter("/run/spec/timing/latencyNs/median", True)), "got true"),
    "negative-latency.json": (
        edit(setter("/run/spec/timing/latencyNs/median", -5)),
        "expected an integer >= 0, got -5 [minimum]",
    ),
    "latency-past-2-53.json": (
        edit(setter("/run/spec/timing/latencyNs/median", 2**53)),
        "expected an integer <= 9007199254740991",
    ),
    "parameter-past-2-53.json": (
        edit(setter("/run/spec/sourceNative/metrics/ms_50", 2**60)),
        "/run/spec/sourceNative/metrics/ms_50",
    ),
    "status-unknown.json": (
        edit(setter("/run/spec/status", "ok")),
        "expected one of 'passed', 'unverified', 'failed', got 'ok'",
    ),
    "status-null.json": (edit(setter("/run/spec/status", None)), "got null"),
    "title-null.json": (edit(setter("/run/metadata/title", None)), "expected a string, got null"),
    "labels-not-strings.json": (
        edit(setter("/run/metadata/labels/liger_version", 8)),
        "expected a string, got 8",
    ),
    "bad-label-key.json": (edit(setter("/run/metadata/labels/bad key!", "x")), "bad key"),
    "bad-digest-uppercase.json": (
        edit(setter("/run/spec/protocolDigest", "sha256:" + "A" * 64)),
        "expected a string matching",
    ),
    "bad-digest-short.json": (
        edit(setter("/run/spec/workloadDigest", "sha256:abc")),
        "/run/spec/workloadDigest",
    ),
    "bad-digest-algorithm.json": (
        edit(setter("/run/spec/environmentDigest", "md5:" + "a" * 32)),
        "/run/spec/environmentDigest",
    ),
    "bad-name-uppercase.json": (
        edit(setter("/run/metadata/name", "Liger-JSD")),
        "/run/metadata/name",
    ),
    "bad-name-underscore.json": (
        edit(setter("/protocol/metadata/name", "liger_bench")),
        "/protocol/metadata/name",
    ),
    "bad-name-too-long.json": (
        edit(setter("/environment/metadata/name", "a" * 254)),
        "expected at most 253 characters",
    ),
    "bad-timestamp-no-millis.json": (
        edit(setter("/run/spec/observedAt", "2026-05-27T17:14:29Z")),
        "/run/spec/observedAt",
    ),
    "bad-timestamp-offset.json": (
        edit(setter("/run/spec/observedAt", "2026-05-27T17:14:29.000+02:00")),
        "/run/spec/observedAt",
    ),
    "bad-timestamp-day.json": (
        edit(setter("/run/spec/observedAt", "2026-02-30T17:14:29.000Z")),
        "expected a valid date-time",
    ),
    "bad-unit.json": (edit(setter("/run/spec/measurements/0/unit", "MB")), "expected one of 'ns'"),
    "bad-statistic.json": (
        edit(setter("/run/spec/measurements/1/statistic", "p81")),
        "/run/spec/measurements/1/statistic",
    ),
    "bad-timer.json": (
        edit(setter("/protocol/spec/measurement/timer", "stopwatch")),
        "/protocol/spec/measurement/timer",
    ),
    "misordered-quantiles.json": (
        edit(setter("/run/spec/measurements/0/value", 2300000)),
        "quantiles must be ordered [quantile-order]",
    ),
    "median-mismatch.json": (
        edit(
            lambda d: d["run"]["spec"]["measurements"].append(
                {"unit": "ms", "value": 2.5, "metric": "latency", "statistic": "median"}
            )
        ),
        "[median-mismatch]",
    ),
    "primary-statistic-missing.json": (
        edit(setter("/run/spec/timing/primaryStatistic", "mean")),
        "[primary-statistic]",
    ),
    "duplicate-measurement.json": (
        edit(
            lambda d: d["run"]["spec"]["measurements"].append(
                dict(d["run"]["spec"]["measurements"][0])
            )
        ),
        "[duplicate-measurement]",
    ),
    "failed-without-failure.json": (
        edit(setter("/run/spec/status", "failed")),
        "'failure' is a required property",
    ),
    "nan-literal.json": (
        TEXT.replace("2.2883904933929444", "NaN").encode(),
        "NaN is not valid JSON",
    ),
    "infinity-literal.json": (
        TEXT.replace("2.2906303882598875", "Infinity").encode(),
        "Infinity is not valid JSON",
    ),
    "negative-infinity-literal.json": (
        TEXT.replace("2.2906303882598875", "-Infinity").encode(),
        "-Infinity is not valid JSON",
    ),
    "duplicate-key.json": (
        TEXT.replace(
            '"status": "passed",', '"status": "passed",\n      "status": "failed",'
        ).encode(),
        "duplicate key 'status'",
    ),
    "duplicate-names.jsonl": (
        (json.dumps(EXAMPLE) + "\n" + json.dumps(EXAMPLE) + "\n").encode(),
        "already names a run",
    ),
    "deeply-nested.json": (b'{"run": ' + b"[" * 100000 + b"]" * 100000 + b"}", "nesting too deep"),
    "deeply-nested-valid-depth.json": (
        json.dumps({**RUN, "spec": {"status": [[[[[[[[[[1]]]]]]]]]]}}).encode(),
        "/spec/status",
    ),
    "jsonl-bad-second-line.jsonl": (
        (json.dumps(EXAMPLE) + "\n" + '{"run": {"kind": "BenchmarkRun"}}' + "\n").encode(),
        ":2:",
    ),
}


def failed(extra: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        spec = doc["run"]["spec"]
        spec.update(status="failed", failure={"reason": "error", "message": "CUDA error"})
        del spec["timing"]
        extra(doc)

    return change


MEDIAN = '"median": 2290080'
BW = {"unit": "GB/s", "value": 258.872, "metric": "bandwidth", "statistic": "median"}
# Issue 10: false passes, contradictions and crashes, each class with several cases.
CASES.update(
    {
        # Patterns: jsonschema-rs (ECMA-262) refuses a final newline; its verdict stands.
        "newline-run-name.json": (
            edit(setter("/run/metadata/name", RUN["metadata"]["name"] + "\n")),
            "(ends with a newline) [pattern]",
        ),
        "newline-digest.json": (
            edit(setter("/run/spec/protocolDigest", RUN["spec"]["protocolDigest"] + "\n")),
            "/run/spec/protocolDigest: expected a string matching /^sha256:[0-9a-f]{64}",
        ),
        "newline-label-key.json": (
            edit(setter("/run/metadata/labels/liger\n", "x")),
            "bad key: expected a string matching",
        ),
        "newline-observed-at.json": (
            edit(setter("/run/spec/observedAt", RUN["spec"]["observedAt"] + "\n")),
            "/run/spec/observedAt",
        ),
        "newline-family.json": (
            edit(setter("/protocol/spec/comparability/family", "liger_kernel_bench\n")),
            "/protocol/spec/comparability/family",
        ),
        "feff-in-repository.json": (
            edit(
                setter(
                    "/protocol/spec/harness/repository",
                    "https://github.com/linkedin/\ufeffLiger-Kernel",
                )
            ),
            "/protocol/spec/harness/repository",
        ),
        # Integral floats in integer fields: the published form writes 2290080.
        "integral-float-median.json": (
            TEXT.replace(MEDIAN, MEDIAN + ".0").encode(),
            "expected an integer, got 2290080.0; write an integer without a fractional part",
        ),
        "integral-float-exponent.json": (
            TEXT.replace(MEDIAN, '"median": 2.29008e6').encode(),
            "/run/spec/timing/latencyNs/median: expected an integer, got 2290080.0",
        ),
        "observed-at-year-0000.json": (
            edit(setter("/run/spec/observedAt", "0000-05-27T17:14:29.000Z")),
            "/run/spec/observedAt",
        ),
        # Contradictions.
        "failed-with-latency.json": (
            edit(failed(lambda d: None)),
            "a failed run has no valid measurement, but carries latency p20",
        ),
        "failed-with-ms-measurement.json": (
            edit(
                failed(
                    lambda d: d["run"]["spec"]["measurements"].__setitem__(
                        slice(None),
                        [{"unit": "ms", "value": 2.2, "metric": "step", "statistic": "mean"}],
                    )
                )
            ),
            "[failed-with-measurement]",
        ),
        "latency-in-bytes.json": (
            edit(setter("/run/spec/measurements/0/unit", "B")),
            "latency p20 is in 'B', a unit of bytes; expected a time unit",
        ),
        "latency-in-gbps.json": (
            edit(setter("/run/spec/measurements/1/unit", "GB/s")),
            "is in 'GB/s', a unit of bytes/s; expected a time unit",
        ),
        "latency-quantile-in-gib.json": (
            edit(setter("/run/spec/measurements/1/unit", "GiB")),
            "/run/spec/measurements/1/unit: latency p80 is in 'GiB'",
        ),
        # Red team: contradictions between statistics, units and the protocol.
        "failed-with-bandwidth.json": (
            edit(failed(lambda d: d["run"]["spec"]["measurements"].__setitem__(slice(None), [BW]))),
            "a failed run has no valid measurement, but carries bandwidth median",
        ),
        "failed-with-memory.json": (
            edit(
                failed(
                    lambda d: d["run"]["spec"]["measurements"].__setitem__(
                        slice(None),
                        [{"unit": "MiB", "value": 12.5, "metric": "memory", "statistic": "max"}],
                    )
                )
            ),
            "[failed-with-measurement]",
        ),
        "mean-below-min.json": (
            edit(lambda d: d["run"]["spec"]["timing"]["latencyNs"].update(mean=1, min=2288000)),
            "/run/spec/timing/latencyNs/mean: latency mean 1 ns is below its min 2288000 ns",
        ),
        "mean-above-max-measurement.json": (
            edit(
                lambda d: d["run"]["spec"]["measurements"].extend(
                    [
                        {"unit": "ms", "value": 2.3, "metric": "latency", "statistic": "max"},
                        {"unit": "ms", "value": 2.31, "metric": "latency", "statistic": "mean"},
                    ]
                )
            ),
            "latency mean 2.31 ms is above its max 2.3 ms; a mean lies between min and max",
        ),
        "bandwidth-mean-below-min.json": (
            edit(
                lambda d: d["run"]["spec"]["measurements"].extend(
                    [
                        {**BW, "statistic": "min", "value": 2.0},
                        {**BW, "statistic": "mean", "value": 1.5},
                    ]
                )
            ),
            "bandwidth mean 1.5 GB/s is below its min 2.0 GB/s",
        ),
        "timer-not-applicable-with-timing.json": (
            edit(setter("/protocol/spec/measurement/timer", "not_applicable")),
            "/run/spec/timing: the run has timing, but its protocol's timer is 'not_applicable'",
        ),
        "timer-not-applicable-with-duration.json": (
            edit(
                lambda d: (
                    set_at(d, "/protocol/spec/measurement/timer", "not_applicable"),
                    d["run"]["spec"].pop("timing"),
                    d["run"]["spec"]["measurements"].__setitem__(
                        slice(1, None),
                        [{"unit": "MiB", "value": 12.5, "metric": "memory", "statistic": "max"}],
                    ),
                )
            ),
            "/run/spec/measurements/0: latency p20 is a duration (2288390 ns), but its protocol's",
        ),
        "samples-below-min-samples.json": (
            edit(
                lambda d: (
                    set_at(d, "/protocol/spec/measurement/minSamples", 100),
                    set_at(d, "/run/spec/timing/samples", 5),
                )
            ),
            "/run/spec/timing/samples: 5 timed samples, below its protocol's minSamples 100",
        ),
        "bandwidth-in-ms.json": (
            edit(lambda d: d["run"]["spec"]["measurements"].append({**BW, "unit": "ms"})),
            "bandwidth median is in 'ms', a unit of time; expected a bytes/s unit",
        ),
        "memory-in-ns.json": (
            edit(
                lambda d: d["run"]["spec"]["measurements"].append(
                    {"unit": "ns", "value": 12, "metric": "memory", "statistic": "max"}
                )
            ),
            "memory max is in 'ns', a unit of time; expected a bytes unit",
        ),
        "throughput-in-bytes.json": (
            edit(
                lambda d: d["run"]["spec"]["measurements"].append(
                    {"unit": "B", "value": 12, "metric": "throughput", "statistic": "median"}
                )
            ),
            "throughput median is in 'B', a unit of bytes; expected a flop/s unit",
        ),
        # One metric in two dimensions: a unit problem, not an ordering one.
        "bandwidth-p80-in-gib.json": (
            edit(
                lambda d: d["run"]["spec"]["measurements"].extend(
                    [BW, {**BW, "statistic": "p80", "unit": "GiB", "value": 0.5}]
                )
            ),
            "bandwidth p80 is in 'GiB', a unit of bytes; expected a bytes/s unit",
        ),
        "custom-metric-in-two-dimensions.json": (
            edit(
                lambda d: d["run"]["spec"]["measurements"].extend(
                    [
                        {"unit": "ms", "value": 3.0, "metric": "step", "statistic": "median"},
                        {"unit": "B", "value": 1.0, "metric": "step", "statistic": "p20"},
                    ]
                )
            ),
            "step p20 is in 'B', a unit of bytes; expected a time unit as its median in 'ms' is",
        ),
        # The fast validator's anyOf message, reworded: a large integral float parameter.
        "parameter-integral-float-beyond-2p53.json": (
            TEXT.replace('"ms_20": 2.2883904933929444', '"ms_20": 1e16').encode(),
            "/run/spec/sourceNative/metrics/ms_20: expected a JSON scalar that can enter a digest",
        ),
        # Crashes before: numbers Python cannot read or convert.
        "integer-too-long.json": (
            TEXT.replace(MEDIAN, '"median": ' + "9" * 5000).encode(),
            "has 5000 digits; at most 4300 can be read [integer-too-long]",
        ),
        "negative-integer-too-long.json": (
            TEXT.replace("2288390", "-" + "1" * 4301).encode(),
            "[integer-too-long]",
        ),
        "number-1e400.json": (
            TEXT.replace(MEDIAN, '"median": 1e400').encode(),
            "number 1e400 is out of range",
        ),
        "metric-minus-1e400.json": (
            TEXT.replace("2.2883904933929444", "-1e400").encode(),
            "/run/spec/sourceNative/metrics/ms_20: number -1e400 is out of range",
        ),
        "measurement-1e308-seconds.json": (
            edit(lambda d: d["run"]["spec"]["measurements"][1].update(unit="s", value=1e308)),
            "overflows a double when converted to ns [out-of-range]",
        ),
        "lone-surrogate-key.json": (
            TEXT.replace('"liger_version"', '"\\ud800"').encode(),
            "key holds a lone surrogate U+D800",
        ),
        "lone-surrogate-value.json": (
            TEXT.replace('"0.8.0"', '"0.8.0\\udfff"').encode(),
            "string holds a lone surrogate U+DFFF",
        ),
        "control-characters-in-key.json": (
            edit(setter("/run/metadata/labels/a\nb.json:1:1: forged\x1b[31m", "x")),
            "/run/metadata/labels/a\\nb.json:1:1: forged\\x1b[31m: bad key",
        ),
        "jsonl-form-feed-line.jsonl": (
            (json.dumps(EXAMPLE) + "\n\f\n").encode(),
            ":2:1: (document): expecting value [json]",
        ),
        "jsonl-vertical-tab-line.jsonl": (b"\v\n", ":1:1: (document): expecting value"),
        "form-feed-only.json": (b"\f", "expecting value [json]"),
        "bundle-without-run.json": (
            json.dumps(
                {"protocol": EXAMPLE["protocol"], "environment": EXAMPLE["environment"]}
            ).encode(),
            "(document): 'run' is a required property [required]",
        ),
        "invalid-utf8-column-in-characters.json": (
            '{"a": "ééé'.encode() + b"\xff" + b'"}',
            "1:11: (document): invalid UTF-8",
        ),
    }
)


def main() -> None:
    out = HERE / "bad"
    out.mkdir(exist_ok=True)
    expected = {}
    for name, (data, fragment) in sorted(CASES.items()):
        (out / name).write_bytes(data)
        expected[name] = fragment
    manifest = HERE / "bad_expected.json"
    manifest.write_text(json.dumps(expected, indent=2, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    main()
