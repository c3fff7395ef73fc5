#!/usr/bin/env bash
# The JSD kernel's GPU runs on a bare GPU machine (torch, Triton and pytest preinstalled),
# from a copy of the repository. Stages, each one command:
#   tests    the whole gpu suite, then Liger-Kernel's own test_jsd.py (the liger stage)
#   liger    Liger-Kernel's own test_jsd.py (from its source distribution in $WHL) with its
#            entry points swapped for ours (liger_test_swap.py)
#   bench    benchmarks/jsd_forward.py (BENCH_ARGS; outputs named with BENCH_TAG)
#   before-after  benchmarks/jsd_before_after.py against BEFORE (an earlier fused.py):
#            bits, then time, in one process
#   host     benchmarks/jsd_host_time.py (HOST_ARGS): where the host time goes
#   final    the GPU tests of the kernel, Liger's test_jsd.py, the benchmark, each under
#            its own time limit
#   recheck  the kernel tests again on the GPU (test_jsd*.py whole, the training-step tests)
# Needs: $WHL holding the runtime wheels, liger-kernel 0.8.5's wheel and its sdist (tests,
# liger, final, and bench with liger among its providers); $OUT for results.
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: jsd_h200_run.sh tests|liger|bench|before-after|host|final|recheck ..." >&2; exit 2; }
WHL=${WHL:-../.whl}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
if compgen -G "$WHL/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site "$WHL"/*.whl || exit 1
fi
export PYTHONPATH="$PWD/src:$PWD/benchmarks:/tmp/site"
export PYTHONUNBUFFERED=1
# No console script without an install: docs examples call `kernelindex`.
mkdir -p /tmp/bin
printf '#!/bin/sh\nexec python3 -m kernelindex_sdk "$@"\n' >/tmp/bin/kernelindex
chmod +x /tmp/bin/kernelindex
export PATH="/tmp/bin:$PATH"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, "gpus", torch.cuda.device_count())'

for stage in "$@"; do
case $stage in
tests)
    {
        python3 -m pytest -m gpu -q -p no:cacheprovider --continue-on-collection-errors tests/
        # The interpreter's tests on the GPU too (masked vocabularies, labels, gradients).
        python3 -m pytest -m "not gpu" -q -p no:cacheprovider \
            tests/reference_kernels/test_jsd.py tests/reference_kernels/test_jsd_masked.py
    } 2>&1 | tee "$OUT/jsd_gpu_tests_h200.log" | grep -E "passed|failed|error|FAILED|ERROR" | tail -30
    "$0" liger
    ;;
bench)
    # shellcheck disable=SC2086
    tag=${BENCH_TAG:-}
    python3 benchmarks/jsd_forward.py ${BENCH_ARGS:-} --records "$OUT/jsd_forward_h200$tag.jsonl" \
        --summary "$OUT/jsd_forward_h200$tag.json" --table "$OUT/jsd_forward_h200$tag.md" \
        2>&1 | tail -40
    echo "jsd_forward rc=${PIPESTATUS[0]}"
    ;;
before-after)
    timeout "${BEFORE_AFTER_TIMEOUT:-300}" python3 benchmarks/jsd_before_after.py \
        --before "${BEFORE:?BEFORE names an earlier fused.py}" --out "$OUT/jsd_before_after.json"
    echo "jsd_before_after rc=$?"
    ;;
host)
    # shellcheck disable=SC2086
    timeout "${HOST_TIMEOUT:-300}" python3 benchmarks/jsd_host_time.py ${HOST_ARGS:-} \
        --out "$OUT/jsd_host_time.json"
    echo "jsd_host_time rc=$?"
    ;;
final)
    # The final code in one call, each part under its own limit so that one slow part
    # cannot take the others' time: the kernel's GPU tests, Liger-Kernel's own
    # test_jsd.py on our kernel, the benchmark (BENCH_ARGS).
    timeout "${TESTS_TIMEOUT:-230}" python3 -m pytest -m gpu -q -p no:cacheprovider \
        --durations=8 tests/reference_kernels 2>&1 | tee "$OUT/jsd_gpu_tests_h200.log" | tail -15
    "$0" liger
    tag=${BENCH_TAG:-}
    # shellcheck disable=SC2086
    timeout "${BENCH_TIMEOUT:-180}" python3 benchmarks/jsd_forward.py ${BENCH_ARGS:-} \
        --records "$OUT/jsd_forward_h200$tag.jsonl" --summary "$OUT/jsd_forward_h200$tag.json" \
        --table "$OUT/jsd_forward_h200$tag.md" 2>&1 | tail -12
    echo "jsd_forward rc=${PIPESTATUS[0]}"
    ;;
liger)
    # Liger-Kernel's own tests, from its sdist, pointed at our kernel.
    rm -rf /tmp/liger && mkdir -p /tmp/liger
    tar xzf "$WHL"/liger_kernel-0.8.5.tar.gz -C /tmp/liger liger_kernel-0.8.5/test/__init__.py \
        liger_kernel-0.8.5/test/conftest.py liger_kernel-0.8.5/test/utils.py \
        liger_kernel-0.8.5/test/transformers/test_jsd.py
    test_file=/tmp/liger/liger_kernel-0.8.5/test/transformers/test_jsd.py
    sed -i -e 's/^from liger_kernel.transformers.functional import liger_jsd$/from liger_test_swap import liger_jsd/' \
        -e 's/^from liger_kernel.transformers.jsd import LigerJSD$/from liger_test_swap import LigerJSD/' \
        -e 's/^from liger_kernel.transformers.jsd import LigerJSDFunction$/from liger_test_swap import LigerJSDFunction/' \
        "$test_file"
    grep -c '^from liger_test_swap import' "$test_file"
    (cd /tmp/liger/liger_kernel-0.8.5 && timeout 120 python3 -m pytest -q -p no:cacheprovider \
        test/transformers/test_jsd.py) 2>&1 | tee "$OUT/liger_test_jsd_h200.log" | tail -15
    ;;
recheck)
    python3 -m pytest -q -p no:cacheprovider tests/reference_kernels/test_jsd.py \
        tests/reference_kernels/test_jsd_masked.py tests/reference_kernels/test_training_step_gpu.py \
        2>&1 | tee "$OUT/jsd_gpu_recheck_h200.log" | tail -8
    python3 -m pytest -q -p no:cacheprovider tests/reference_kernels/test_gpu.py \
        -k "training_step or another_gpu or cuda_graph" 2>&1 | tee -a "$OUT/jsd_gpu_recheck_h200.log" | tail -4
    ;;
*)
    echo "unknown stage $stage" >&2
    exit 2
    ;;
esac
done
