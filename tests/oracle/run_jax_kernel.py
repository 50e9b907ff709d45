"""Trace one of JAX's Blackwell kernels (or a mutant of it) with collective=True, on the CPU.

    python run_jax_kernel.py PATH matmul|ragged [--lower]

With --lower the kernel is also lowered for CUDA (`jax.jit(f).trace(*args).lower(...)`).

Prints JSON: null when tracing succeeds, else the error's type, message and the innermost
line of PATH in the traceback.
"""
import functools
import importlib.util
import json
import sys
import traceback

import jax
import jax.numpy as jnp

path, which = sys.argv[1], sys.argv[2]
lower = "--lower" in sys.argv[3:]
spec = importlib.util.spec_from_file_location("mutant", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
jax.clear_caches()
if which == "matmul":
    cfg = mod.TuningConfig(tile_m=128, tile_n=128, tile_k=64, max_concurrent_steps=2, collective=True)
    f = functools.partial(mod.matmul_kernel, config=cfg)
    args = (jax.ShapeDtypeStruct((512, 256), jnp.float16), jax.ShapeDtypeStruct((256, 512), jnp.float16))
else:
    from jax.experimental.pallas.ops.gpu import blackwell_matmul_mgpu as bm
    cfg = mod.TuningConfig(tile_m=128, tile_n=128, tile_k=64, max_concurrent_steps=2, collective=True,
                           grid_tile_width=1, grid_minor_dim=bm.MatmulDimension.N)

    class _Dev:  # the CPU has no SM count; the kernel only sizes its grid with it
        core_count = 148
    jax.local_devices = lambda *a, **k: [_Dev()]

    def f(lhs, rhs, gs):
        return mod.ragged_dot_kernel(lhs, rhs, gs, cfg)
    args = (jax.ShapeDtypeStruct((1024, 256), jnp.float16), jax.ShapeDtypeStruct((4, 256, 512), jnp.float16),
            jax.ShapeDtypeStruct((4,), jnp.int32))
try:
    jax.make_jaxpr(f)(*args)
    if lower:
        jax.jit(f).trace(*args).lower(lowering_platforms=("cuda",))
    print(json.dumps(None))
except Exception as e:  # noqa: BLE001 - whatever JAX raises is the verdict
    frames = [fr.lineno for fr in traceback.extract_tb(e.__traceback__) if fr.filename == path]
    print(json.dumps({"type": type(e).__name__, "message": str(e)[:200], "line": frames[-1] if frames else None}))
