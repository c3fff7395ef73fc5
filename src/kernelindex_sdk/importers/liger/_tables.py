"""Liger-Kernel's vocabulary: its CSV columns, passes, metrics, names and dtypes."""

from __future__ import annotations

from typing import Final

__all__ = [
    "BASELINE_PREFERENCE",
    "COLUMNS",
    "DEFAULT_DTYPE",
    "DTYPES",
    "KERNEL_TITLES",
    "LIGER_PROVIDER",
    "METRICS",
    "NAME_SLUGS",
    "PASSES",
    "REPOSITORY",
    "SOURCE",
    "SUPERSEDES",
]

COLUMNS: Final = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "metric_unit",
    "x_name",
    "x_label",
    "x_value",
    "y_value_50",
    "y_value_20",
    "y_value_80",
    "extra_benchmark_config_str",
    "gpu_name",
    "timestamp",
    "liger_version",
)
REPOSITORY: Final = "https://github.com/linkedin/Liger-Kernel"
SOURCE: Final = "liger-kernel-bench"
#: Liger's own provider; ``liger_*`` (``liger_tiled``, ``liger_rms_norm``) are its variants.
LIGER_PROVIDER: Final = "liger"
#: Which provider of a kernel's rows is its baseline (the ``kernelindex.dev/baseline``
#: label of its other rows): the first of these the file measured. Liger's benchmark
#: scripts compare against the Hugging Face module where there is one; the Megatron
#: cross-entropy rows against Megatron's, whose unfused name stayed the same when the
#: fused one was renamed (``megatron`` to ``megatron-fused``, at 80f19ad) and torch was
#: dropped; else against torch.
BASELINE_PREFERENCE: Final = ("huggingface", "megatron-unfused", "torch", "torch_compile")

#: Liger's pass names (``kernel_operation_mode``) -> (schema pass, protocol title, what ran).
PASSES: Final = {
    "forward": ("forward", "forward pass", "the module forward pass"),
    "backward": ("backward", "backward pass", "the backward pass"),
    "full": ("full", "forward and backward passes", "the forward and backward passes"),
    "no-grad-forward": (
        "no_grad_forward",
        "forward pass without autograd",
        "the module forward pass under torch.no_grad()",
    ),
}
#: Liger's metrics -> (CSV unit -> record unit), metric name in records.
METRICS: Final = {"speed": ({"ms": "ms"}, "latency"), "memory": ({"MB": "MiB"}, "memory")}
#: Readable slugs of Liger's x and config names; others are lowercased as they are.
NAME_SLUGS: Final = {
    "BT": "tokens",
    "T": "seqlen",
    "seq_len": "seqlen",
    "B": "batch",
    "bsz": "batch",
    "batch_size": "batch",
    "V": "vocab",
    "vocab_size": "vocab",
    "H": "hidden",
    "hidden_size": "hidden",
    "N": "n",
    "C": "channels",
    "num_channels": "channels",
    "E": "experts",
    "L": "length",
    "D": "dim",
    "M": "m",
}
# x names whose value fixes these config entries, which the name then leaves out
# (BT is batch times sequence length).
SUPERSEDES: Final = {"BT": {"B", "bsz", "batch_size", "T", "seq_len"}}
#: Titles of the kernels Liger benchmarks; others are titled from their name.
KERNEL_TITLES: Final = {
    "jsd": "Jensen-Shannon divergence loss",
    "fused_linear_jsd": "Fused linear Jensen-Shannon divergence loss",
    "cross_entropy": "Cross-entropy loss",
    "fused_linear_cross_entropy": "Fused linear cross-entropy loss",
    "kl_div": "KL divergence loss",
    "tvd": "Total variation distance",
    "rms_norm": "RMS normalization",
    "layer_norm": "Layer normalization",
    "group_norm": "Group normalization",
    "geglu": "GeGLU",
    "swiglu": "SwiGLU",
    "rope": "Rotary position embedding",
    "embedding": "Embedding",
    "dyt": "Dynamic tanh",
}
#: torch dtype spellings in configs -> the short names records use.
DTYPES: Final = {
    "torch.float32": "fp32",
    "torch.float": "fp32",
    "torch.bfloat16": "bf16",
    "torch.float16": "fp16",
    "torch.half": "fp16",
    "torch.float64": "fp64",
    "torch.float8_e4m3fn": "fp8e4m3",
    "torch.float8_e5m2": "fp8e5m2",
}
# Liger's scripts make their tensors in torch's default dtype unless the config names one.
DEFAULT_DTYPE: Final = "fp32"
