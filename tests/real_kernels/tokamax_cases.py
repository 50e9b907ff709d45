"""How tokamax's Blackwell kernels are traced on the CPU (see `targets.py`).

Each case calls a kernel function of the loaded module (`mod`) directly, with the shapes and
configurations its own heuristics pick (collective and not), on `jax.ShapeDtypeStruct`s.
"""

from __future__ import annotations

_S = "jax.ShapeDtypeStruct"

_ATTENTION = (
    "(lambda c: (lambda q, k, v: mod.flash_attention_kernel(q, k, v, None, None, None, None, is_causal=False, "
    "logits_soft_cap=None, logits_scale=1.0, out_dtype=jnp.dtype(jnp.bfloat16), normalize_output=True, "
    "return_residuals=False, use_stable_softmax=True, rescale_threshold=8.0, config=c), "
    f"({_S}((1024, 2, 128), jnp.bfloat16), {_S}((1024, 2, 128), jnp.bfloat16), {_S}((1024, 2, 128), jnp.bfloat16))))"
    "(mod.Config(block_q={block_q}, block_kv=128, num_stages=2, collective={c}))"
)

_RAGGED_CONFIG = (
    "__import__('tokamax._src.ops.ragged_dot.pallas_mosaic_gpu_common', fromlist=['x']).Config("
    "block_m=128, block_n=128, block_k=64, num_stages=2, split_k=1, collective={c})"
)
_RAGGED = (
    "(lambda c: (lambda a, b, g: mod.ragged_dot_gpu_non_quant_blackwell_kernel(a, b, g, jnp.dtype(jnp.bfloat16), c), "
    f"({_S}((1024, 256), jnp.bfloat16), {_S}((4, 256, 512), jnp.bfloat16), {_S}((4,), jnp.int32))))"
    f"({_RAGGED_CONFIG})"
)
_GLU_CONFIG = (
    "(lambda cls: cls(**{{k: v for k, v in {{**dict(tile_m=128, tile_n=64, tile_k=64, num_stages=4), **dict({extra})}}.items() "
    "if k in cls.__dataclass_fields__}}))(__import__('tokamax._src.ops.gated_linear_unit.pallas_mosaic_gpu_common', "
    "fromlist=['x']).Config)"
)
_GLU = (
    "(lambda c: (lambda x, w: (getattr(mod, 'gated_linear_unit', None) or mod.gated_linear_unit_sm100)(x, w, "
    "activation=jax.nn.silu, config=c), "
    f"({_S}((512, 256), jnp.bfloat16), {_S}((256, 2, 512), jnp.bfloat16))))"
    "({config})"
)

# Quantized operands: qwix.QArray of small concrete arrays (quantized on the CPU).
_Q = "__import__('qwix').quantize"
_QUANT = (
    "(lambda c: (lambda a, b, g: mod.{fn}(a, b, g, jnp.dtype(jnp.bfloat16), c), "
    "({lhs}, {rhs}, {_S}((4,), jnp.int32))))"
    f"({_RAGGED_CONFIG.replace('collective={c}', 'collective={c}, {extra}')})"
)
_W_INT4 = f"{_Q}(jnp.ones((4, 512, 256), jnp.bfloat16), 'int4', channelwise_axes=[0, 2], tiled_axes={{1: 128}})"
_W_INT8 = f"{_Q}(jnp.ones((4, 512, 256), jnp.bfloat16), 'int8', channelwise_axes=[0, 2])"
_X_BF16 = f"{_S}((1024, 512), jnp.bfloat16)"
_X_FP8 = f"{_Q}(jnp.ones((1024, 512), jnp.bfloat16), 'float8_e4m3fn', channelwise_axes=[0], tiled_axes={{1: 128}})"
_X_INT8 = f"{_Q}(jnp.ones((1024, 512), jnp.bfloat16), 'int8', channelwise_axes=[0])"


def _quant(fn, lhs, rhs, extra=""):
    return tuple(
        {"kind": "call", "name": f"{fn} collective={c}",
         "code": _QUANT.format(fn=fn, lhs=lhs, rhs=rhs, c=c, extra=extra, _S=_S)}
        for c in (True, False)
    )


_CASES = {
    "tokamax/_src/ops/attention/pallas_mosaic_gpu_kernel_sm100.py": tuple(
        {"kind": "call", "name": f"attention collective={c}", "code": _ATTENTION.format(c=c, block_q=256 if c else 128)}
        for c in (True, False)
    ),
    "tokamax/_src/ops/ragged_dot/pallas_mosaic_gpu_kernel_sm100.py": tuple(
        {"kind": "call", "name": f"ragged_dot collective={c}", "code": _RAGGED.format(c=c)} for c in (True, False)
    ),
    "tokamax/_src/ops/ragged_dot/pallas_mosaic_gpu_kernel_sm100_quant.py": _quant(
        "ragged_dot_gpu_quant_blackwell_kernel", _X_BF16, _W_INT4),
    "tokamax/_src/ops/ragged_dot/pallas_mosaic_gpu_kernel_sm100_quant_post_scale.py": _quant(
        "ragged_dot_gpu_quant_post_scale_blackwell_kernel", _X_BF16, _W_INT4, "post_scale=True"),
    "tokamax/_src/ops/ragged_dot/pallas_mosaic_gpu_kernel_sm100_i8_quant.py": _quant(
        "ragged_dot_gpu_i8_quant_blackwell_kernel", _X_INT8, _W_INT8),
    "tokamax/_src/ops/ragged_dot/pallas_mosaic_gpu_kernel_sm100_fp8_quant.py": _quant(
        "ragged_dot_gpu_fp8_quant_blackwell_kernel", _X_FP8, _W_INT4),
    "tokamax/_src/ops/gated_linear_unit/pallas_mosaic_gpu_kernel_sm100.py": tuple(
        {"kind": "call", "name": f"glu {extra or 'no cluster'}", "code": _GLU.format(config=_GLU_CONFIG.format(extra=extra))}
        for extra in ("", "cluster_size_m=2, tile_n=128", "cluster_size_n=2, tile_n=128")
    ),
}


# tokamax's benchmarking module imports the xprof profiler, which tracing never uses.
_NO_XPROF = (
    "import sys, types\n"
    "try:\n    import xprof.cli.tools\n"
    "except ImportError:\n"
    "    for _n in ('xprof', 'xprof.cli', 'xprof.cli.tools'):\n"
    "        sys.modules.setdefault(_n, types.ModuleType(_n))\n"
    "    sys.modules['xprof.cli.tools'].get_kernel_stats_tool = None\n"
)


def tokamax_target(source):
    from .targets import _FAKE_DEVICES, Target

    cases = _CASES.get(source.rel)
    if cases is None:
        return None
    module = source.rel[:-3].replace("/", ".")
    setup = _FAKE_DEVICES + ("" if source.installed else _NO_XPROF)
    return Target(module=module, purge=(module,), setup=setup, cases=cases)
