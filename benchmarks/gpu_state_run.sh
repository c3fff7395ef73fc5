#!/usr/bin/env bash
# The GPU's state on a lent GPU machine (H100 or H200), with clocks as the machine has them:
# nothing here sets, locks or resets a clock or a limit; it only reads NVML and times.
# Stages, each one command:
#   probe     what NVML says about every GPU (benchmarks/gpu_state_probe.py): clocks and
#             their defaults, power limits, the reasons supported, the driver's text
#   overhead  benchmarks/gpu_state_overhead.py: the JSD points timed with sampling on and
#             off, alternating, in one process (OVERHEAD_ARGS; about 2 minutes)
#   sweep     REPLICATES (3) JSD sweeps with sampling on, each a fresh process, records in
#             $OUT/gpu_state_jsd_$TAG_<n>.jsonl (SWEEP_ARGS; COMMIT, BRANCH name the code)
#   report    benchmarks/gpu_state_report.py over those sweeps
#   tests     the GPU tests of the conditions and the harness, and the docs' GPU examples
# Needs: torch, Triton and pytest (preinstalled); $WHL holding the runtime wheels the machine
# lacks (as for jsd_h200_run.sh: tqdm, the docs test's), and nvidia-ml-py's
# (pip download --only-binary=:all: --no-deps 'nvidia-ml-py>=12.535,<14' -d $WHL), which
# then comes before any pynvml the machine has.
# Outputs go to $OUT, tagged with TAG (default: h100 or h200 from the GPU's name).
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: gpu_state_run.sh probe|overhead|sweep|report|tests ..." >&2; exit 2; }
WHL=${WHL:-../.whl}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
if ls "$WHL"/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site "$WHL"/*.whl || exit 1
fi
export PYTHONPATH="$PWD/src:$PWD/benchmarks:/tmp/site"
export PYTHONUNBUFFERED=1
# No console script without an install: the sweeps and the docs examples call `kernelindex`.
mkdir -p /tmp/bin
printf '#!/bin/sh\nexec python3 -m kernelindex_sdk "$@"\n' >/tmp/bin/kernelindex
chmod +x /tmp/bin/kernelindex
export PATH="/tmp/bin:$PATH"
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case $name in
*H200*) default_tag=h200 ;;
*H100*) default_tag=h100 ;;
*) default_tag=gpu ;;
esac
TAG=${TAG:-$default_tag}
echo "$name ($TAG)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,clocks.applications.graphics,clocks.default_applications.graphics,clocks.max.sm,power.limit,power.default_limit,temperature.gpu --format=csv
python3 -c 'import torch, triton, pynvml; print("torch", torch.__version__, "triton", triton.__version__, "pynvml", pynvml.__file__, "gpus", torch.cuda.device_count())'

for stage in "$@"; do
case $stage in
probe)
    python3 benchmarks/gpu_state_probe.py --out "$OUT/gpu_state_probe_$TAG.json"
    echo "probe rc=$?"
    ;;
overhead)
    # shellcheck disable=SC2086
    timeout "${OVERHEAD_TIMEOUT:-300}" python3 benchmarks/gpu_state_overhead.py ${OVERHEAD_ARGS:-} \
        --out "$OUT/gpu_state_overhead_$TAG.json" 2>"$OUT/gpu_state_overhead_$TAG.log"
    echo "overhead rc=$?"
    tail -20 "$OUT/gpu_state_overhead_$TAG.log"
    python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["summary"], indent=1))' \
        "$OUT/gpu_state_overhead_$TAG.json"
    ;;
sweep)
    provenance=()
    [ -n "${COMMIT:-}" ] && provenance+=(--commit "$COMMIT")
    [ -n "${BRANCH:-}" ] && provenance+=(--branch "$BRANCH")
    for n in $(seq 1 "${REPLICATES:-3}"); do
        # shellcheck disable=SC2086
        timeout "${SWEEP_TIMEOUT:-170}" kernelindex bench jsd \
            ${SWEEP_ARGS:---impl torch,triton --tokens 1024,4096 --dtype fp32,bf16 --input-grad both} \
            "${provenance[@]}" --no-progress -o "$OUT/gpu_state_jsd_${TAG}_$n.jsonl" \
            2>"$OUT/gpu_state_jsd_${TAG}_$n.log"
        echo "sweep $n rc=$?"
        tail -25 "$OUT/gpu_state_jsd_${TAG}_$n.log"
    done
    ;;
report)
    python3 benchmarks/gpu_state_report.py "$OUT"/gpu_state_jsd_"${TAG}"_*.jsonl \
        --out "$OUT/gpu_state_report_$TAG.json"
    echo "report rc=$?"
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps(r["summary"], indent=1)); [print(json.dumps({k: s[k] for k in ("file","runs","with_state","degraded","throttle_reasons","sm_clock_mhz","readings_per_run")})) for s in r["sweeps"]]' \
        "$OUT/gpu_state_report_$TAG.json"
    for f in "$OUT"/gpu_state_jsd_"${TAG}"_*.jsonl; do kernelindex validate --verify-digests "$f"; done 2>&1 | tail -8
    ;;
tests)
    timeout "${TESTS_TIMEOUT:-240}" python3 -m pytest -m gpu -q -p no:cacheprovider \
        tests/reference_kernels/test_gpu_state_gpu.py tests/reference_kernels/test_gpu.py \
        -k "test_gpu_state_gpu or processes or timers or protocol_digest or sweep_checks" \
        2>&1 | tee "$OUT/gpu_state_tests_$TAG.log" | tail -15
    timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_docs.py -k "producer" \
        2>&1 | tee -a "$OUT/gpu_state_tests_$TAG.log" | tail -5
    ;;
*)
    echo "unknown stage $stage" >&2
    exit 2
    ;;
esac
done
