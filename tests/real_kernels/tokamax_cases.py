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
_GLU = (
    "(lambda c: (lambda x, w: (getattr(mod, 'gated_linear_unit', None) or mod.gated_linear_unit_sm100)(x, w, activation=jax.nn.silu, config=c), "
    f"({_S}((512, 256), jnp.bfloat16), {_S}((256, 2, 512), jnp.bfloat16))))"
    "(__import__('tokamax._src.ops.gated_linear_unit.pallas_mosaic_gpu_common', fromlist=['x']).Config("
    "tile_m=128, tile_n=64, tile_k=64, num_stages=4))"
)

_CASES = {
    "tokamax/_src/ops/attention/pallas_mosaic_gpu_kernel_sm100.py": tuple(
        {"kind": "call", "name": f"attention collective={c}", "code": _ATTENTION.format(c=c, block_q=256 if c else 128)}
        for c in (True, False)
    ),
    "tokamax/_src/ops/ragged_dot/pallas_mosaic_gpu_kernel_sm100.py": tuple(
        {"kind": "call", "name": f"ragged_dot collective={c}", "code": _RAGGED.format(c=c)} for c in (True, False)
    ),
    "tokamax/_src/ops/gated_linear_unit/pallas_mosaic_gpu_kernel_sm100.py": (
        {"kind": "call", "name": "glu heuristics", "code": _GLU},
    ),
}


def tokamax_target(source):
    from .targets import _FAKE_DEVICES, Target

    cases = _CASES.get(source.rel)
    if cases is None:
        return None
    module = source.rel[:-3].replace("/", ".")
    return Target(module=module, purge=(module,), setup=_FAKE_DEVICES, cases=cases)
