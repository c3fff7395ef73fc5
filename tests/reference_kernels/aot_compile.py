"""Compile every table config and kernel mode of the fused JSD kernel, and the kernel that
scales its gradient, for a GPU not present.

Run as a script (without TRITON_INTERPRET): ``python aot_compile.py 100`` compiles for
sm_100 and prints how many variants compiled; Triton needs no GPU of that kind to do it.
"""

from __future__ import annotations

import itertools
import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from kernelindex_sdk.reference_kernels.jsd import fused, launch_plan

# (labels, flat): the row-by-row loop with and without labels, and the flat loop.
LAYOUTS = ((False, False), (False, True), (True, False))
RUNTIME = {
    "rows": "i32",
    "cols": "i32",
    "stride_x": "i32",
    "stride_y": "i32",
    "stride_dx": "i32",
    "beta": "fp32",
    "log2_beta": "fp32",
    "log2_one_minus_beta": "fp32",
    "unit": "fp32",
    "inv_n": "fp32",
    "ignore_index": "i32",
}


def main(capability: int) -> int:
    target = GPUTarget("cuda", capability, 32)
    compiled = 0
    # CONFIG_TABLE's entries in every layout; FLAT_TABLE's in the flat layout only.
    entries = [
        (size, grad, entry, LAYOUTS)
        for table in launch_plan.CONFIG_TABLE.values()
        for (size, grad), entry in table.items()
    ] + [
        (size, grad, entry, ((False, True),))
        for table in launch_plan.FLAT_TABLE.values()
        for (size, grad), entry in table.items()
    ]
    for size, grad, (block, warps, _per_sm, stages), layouts in entries:
        dtypes = ("fp32",) if size == 4 else ("bf16", "fp16")
        half = launch_plan.HALF_CUDA if grad else launch_plan.HALF_LOSS_CUDA
        forms = [launch_plan.FLOAT32_CUDA] if size == 4 else [half]
        for dtype, beta_mode, (labels, flat), (form, ops) in itertools.product(
            dtypes, (0, 1, 2), layouts, forms
        ):
            signature = {
                "x_ptr": f"*{dtype}",
                "y_ptr": f"*{dtype}",
                "labels_ptr": "*i64",
                "dx_ptr": f"*{dtype}",
                "partial_ptr": "*fp32",
                "ticket_ptr": "*i32",
                "loss_ptr": f"*{dtype}",
                **RUNTIME,
            }
            constexprs = {
                "BETA_MODE": beta_mode,
                "HAS_LABELS": labels,
                "COMPUTE_GRAD": grad,
                "FORM": form,
                "OPS": ops,
                "BLOCK_V": block,
                "BLOCK_P": 1024,
                "BLOCK_L": 1024,
                "FLAT": flat,
                "STAGES": stages,
            }
            signature.update(dict.fromkeys(constexprs, "constexpr"))
            source = ASTSource(fn=fused.jsd_fwd_kernel, signature=signature, constexprs=constexprs)
            triton.compile(source, target=target, options={"num_warps": warps})
            compiled += 1
    for dtype in ("fp32", "bf16", "fp16"):
        source = ASTSource(
            fn=fused.jsd_scale_kernel,
            signature={
                "dx_ptr": f"*{dtype}",
                "grad_ptr": f"*{dtype}",
                "n": "i64",
                "BLOCK": "constexpr",
            },
            constexprs={"BLOCK": launch_plan.SCALE_BLOCK},
        )
        triton.compile(source, target=target, options={"num_warps": launch_plan.SCALE_WARPS})
        compiled += 1
    print(compiled)
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
