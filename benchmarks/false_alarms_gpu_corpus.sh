#!/usr/bin/env bash
# The GPU false-alarm corpus: one JSD sweep of 32 series (torch, triton, torch-compile and
# liger; 256 and 1024 tokens of a 128256 vocabulary; fp32 and bf16; the loss alone and the
# training step) rerun REPEATS times (default 10) in fresh processes, one after another on
# one GPU, same code, same commit, nothing else running: for benchmarks/false_alarms.py.
# GPU-state sampling is left as the harness does it. Run from the repository root on the
# device machine (bare: torch, Triton and pytest preinstalled, nothing pip-installed):
#
#   COMMIT=<the commit measured> WHL=.whl bash benchmarks/false_alarms_gpu_corpus.sh
#
# Outputs: $OUT/gpu-corpus/rerun-NN.jsonl.gz and manifest.json (benchmarks/
# false_alarms_corpus.py's), $OUT/gpu-corpus.log. Bring the folder back as
# benchmarks/corpora/<gpu>-reruns (e.g. h100-reruns) and run false_alarms.py on it.
#
# Settings (environment): REPEATS (10), BUDGET_S (480: no rerun is started that would
# likely end after it, so that 10 fit one 10-minute device call), CORPUS_FROM (a corpus
# folder in the tree, e.g. benchmarks/corpora/h100-reruns: copied to $OUT/gpu-corpus
# first, and the new reruns numbered after its last, to extend a corpus on the same warm
# machine; the manifest notes each call's GPU by UUID), IMPL, TOKENS,
# VOCAB, DTYPE, COMMIT. $WHL holds the package's runtime wheels (the lead's .whl folder:
# attrs, cattrs, jsonschema, rfc8785, ...) and liger-kernel's, installed with --no-deps into
# /tmp/site; without liger-kernel the sweep runs the other providers, 24 series, and says so.
set -uo pipefail
OUT=${OUT:-/tmp/out}
WHL=${WHL:-.whl}
REPEATS=${REPEATS:-10}
BUDGET_S=${BUDGET_S:-480}
IMPL=${IMPL:-torch,triton,torch-compile,liger}
TOKENS=${TOKENS:-256,1024}
VOCAB=${VOCAB:-128256}
DTYPE=${DTYPE:-fp32,bf16}
COMMIT=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || true)}
mkdir -p "$OUT" /tmp/bin /tmp/site
# The package's runtime wheels and liger-kernel's, as benchmarks/jsd_h200_run.sh takes them.
if compgen -G "$WHL/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site "$WHL"/*.whl || exit 1
fi
export PYTHONPATH="$PWD/src:/tmp/site"
export PYTHONUNBUFFERED=1
# No console script without an install (NOTES.md, 2026-12-01): a shim on PATH.
printf '#!/bin/sh\nexec python3 -m kernelindex_sdk "$@"\n' >/tmp/bin/kernelindex
chmod +x /tmp/bin/kernelindex
export PATH="/tmp/bin:$PATH"
gpu=unknown
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
    gpu=$(nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | head -1)
fi
corpus="$OUT/gpu-corpus"
mkdir -p "$corpus"
if [ -n "${CORPUS_FROM:-}" ]; then
    cp -r "$CORPUS_FROM"/. "$corpus"/ || exit 2
fi
first=$(($(find "$corpus" -name 'rerun-*.jsonl.gz' | wc -l) + 1))
if [[ ,$IMPL, == *,liger,* ]] && ! python3 -c 'import liger_kernel.transformers.jsd' 2>/dev/null; then
    echo "false_alarms_gpu_corpus: no liger-kernel here (put its wheel in \$WHL): liger left out" >&2
    IMPL=$(echo ",$IMPL," | sed 's/,liger,/,/; s/^,//; s/,$//')
fi
provenance=(--branch main)
[ -n "$COMMIT" ] && provenance+=(--commit "$COMMIT")
python3 benchmarks/false_alarms_corpus.py "$corpus" --repeats "$REPEATS" \
    --first "$first" --budget-s "$BUDGET_S" \
    --note "benchmarks/false_alarms_gpu_corpus.sh: IMPL=$IMPL TOKENS=$TOKENS VOCAB=$VOCAB DTYPE=$DTYPE, one GPU ($gpu), nothing else running" \
    -- --impl "$IMPL" --tokens "$TOKENS" --vocab "$VOCAB" --dtype "$DTYPE" --input-grad both \
    "${provenance[@]}" 2>&1 | tee "$OUT/gpu-corpus.log"
status=${PIPESTATUS[0]}
echo "false_alarms_corpus rc=$status"
exit "$status"
