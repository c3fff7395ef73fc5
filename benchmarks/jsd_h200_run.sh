#!/usr/bin/env bash
# The JSD kernel's GPU runs on a bare H200 machine (torch, Triton and pytest preinstalled),
# from a copy of the repository. Stages, each one command:
#   probe  correctness of masked vocabularies, the CUDA-graph and no-sync tests, then
#          benchmarks/jsd_training_step.py against BASELINE (profile and step), with
#          the variants named in VARIANTS ("name=sed-expression;...", applied to fused.py)
#   tests  the whole gpu suite, then Liger-Kernel's own test_jsd.py (from its source
#          distribution in $WHL) with its entry points swapped for ours (liger_test_swap.py)
#   bench  benchmarks/jsd_forward.py (BENCH_ARGS; outputs named with BENCH_TAG)
#   step   benchmarks/jsd_training_step.py profile, host and step against BASELINE
#   variants benchmarks/jsd_variant_probe.py (kernel variants, steps, host time) and the
#          registers of what it compiled
#   final  the final code: GPU tests of the kernel, Liger's test_jsd.py, the benchmark,
#          the training step against BASELINE unless STEP=0 (each under its own time limit)
#   liger  Liger-Kernel's own test_jsd.py on our kernel
#   recheck  the kernel tests again on the GPU (test_jsd*.py whole, the training-step tests)
# Needs: $WHL holding the runtime wheels, liger-kernel 0.8.5's wheel and its sdist;
# $OUT for results; BASELINE, a fused.py to compare with (probe, bench).
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: jsd_h200_run.sh probe|tests|bench|step ..." >&2; exit 2; }
WHL=${WHL:-../.whl}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site "$WHL"/*.whl || exit 1
export PYTHONPATH="$PWD/src:$PWD/benchmarks:/tmp/site"
export PYTHONUNBUFFERED=1
# No console script without an install: docs examples call `kernelindex`.
mkdir -p /tmp/bin
printf '#!/bin/sh\nexec python3 -m kernelindex_sdk "$@"\n' >/tmp/bin/kernelindex
chmod +x /tmp/bin/kernelindex
export PATH="/tmp/bin:$PATH"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, "gpus", torch.cuda.device_count())'

variants() {
    local spec="${VARIANTS:-}" list="" name expr
    IFS=';' read -ra items <<<"$spec"
    for item in "${items[@]}"; do
        [ -z "$item" ] && continue
        name=${item%%=*}
        expr=${item#*=}
        sed -e "$expr" src/kernelindex_sdk/reference_kernels/jsd/fused.py >"/tmp/fused_$name.py"
        cmp -s src/kernelindex_sdk/reference_kernels/jsd/fused.py "/tmp/fused_$name.py" &&
            echo "variant $name changed nothing" >&2
        list="$list${list:+,}$name=/tmp/fused_$name.py"
    done
    echo "$list"
}

for stage in "$@"; do
case $stage in
probe)
    python3 -m pytest -q -p no:cacheprovider tests/reference_kernels/test_jsd_masked.py \
        tests/reference_kernels/test_jsd.py \
        tests/reference_kernels/test_gpu.py -k "training_step or cuda_graph or another_gpu" \
        2>&1 | tee "$OUT/probe_tests.log" | tail -25
    KI_BASELINE_FUSED=$BASELINE KI_VARIANTS=$(variants) OUT=$OUT \
        python3 benchmarks/jsd_training_step.py profile step >"$OUT/jsd_training_step_probe.json"
    echo "training step rc=$?"
    ;;
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
    echo "jsd_forward rc=$?"
    ;;
final)
    # The final code in one call, each part under its own limit so that one slow part
    # cannot take the others' time: the kernel's GPU tests, Liger-Kernel's own
    # test_jsd.py on our kernel, the benchmark (BENCH_ARGS), the training step against
    # BASELINE.
    timeout "${TESTS_TIMEOUT:-230}" python3 -m pytest -m gpu -q -p no:cacheprovider \
        --durations=8 tests/reference_kernels 2>&1 | tee "$OUT/jsd_gpu_tests_h200.log" | tail -15
    "$0" liger
    tag=${BENCH_TAG:-}
    # shellcheck disable=SC2086
    timeout "${BENCH_TIMEOUT:-180}" python3 benchmarks/jsd_forward.py ${BENCH_ARGS:-} \
        --records "$OUT/jsd_forward_h200$tag.jsonl" --summary "$OUT/jsd_forward_h200$tag.json" \
        --table "$OUT/jsd_forward_h200$tag.md" 2>&1 | tail -12
    echo "jsd_forward rc=${PIPESTATUS[0]}"
    if [ "${STEP:-1}" = 1 ]; then
        KI_BASELINE_FUSED=$BASELINE KI_ROUNDS=${KI_ROUNDS:-1} timeout "${STEP_TIMEOUT:-110}" \
            python3 benchmarks/jsd_training_step.py step host >"$OUT/jsd_training_step_h200.json"
        echo "training step rc=$?"
    fi
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
variants)
    # Kernel variants side by side, training steps as called, host time per call; then the
    # registers of every kernel this run compiled (Triton's cache, this Triton's cuobjdump).
    KI_BASELINE_FUSED=${BASELINE:-} timeout "${PROBE_TIMEOUT:-420}" python3 \
        benchmarks/jsd_variant_probe.py ${PROBE_PARTS:-kernels steps host} \
        >"$OUT/jsd_variant_probe_h200.json" 2>"$OUT/jsd_variant_probe_h200.log"
    echo "variant probe rc=$?"
    tail -30 "$OUT/jsd_variant_probe_h200.log"
    cuobjdump=$(python3 -c 'import triton, os; print(os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/cuobjdump"))')
    find ~/.triton/cache -name '*.cubin' | while read -r cubin; do
        meta=${cubin%.cubin}.json
        printf '%s %s\n' "$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["name"], m["num_warps"], m.get("hash","")[:8])' "$meta" 2>/dev/null)" \
            "$("$cuobjdump" -res-usage "$cubin" 2>/dev/null | grep -o 'REG:[0-9]*' | head -1)"
    done >"$OUT/jsd_variant_regs_h200.txt"
    ;;
recheck)
    python3 -m pytest -q -p no:cacheprovider tests/reference_kernels/test_jsd.py \
        tests/reference_kernels/test_jsd_masked.py tests/reference_kernels/test_training_step_gpu.py \
        2>&1 | tee "$OUT/jsd_gpu_recheck_h200.log" | tail -8
    python3 -m pytest -q -p no:cacheprovider tests/reference_kernels/test_gpu.py \
        -k "training_step or another_gpu or cuda_graph" 2>&1 | tee -a "$OUT/jsd_gpu_recheck_h200.log" | tail -4
    ;;
step)
    KI_BASELINE_FUSED=$BASELINE \
        python3 benchmarks/jsd_training_step.py profile host step >"$OUT/jsd_training_step_h200.json"
    echo "training step rc=$?"
    ;;
*)
    echo "unknown stage $stage" >&2
    exit 2
    ;;
esac
done
