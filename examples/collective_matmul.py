"""A 2-CTA (collective) Blackwell matmul step with two bugs JAX would only report one at a time.

    flake8 --select=PLS examples/

PLS001: the accumulator is used by a collective MMA but allocated without collective=True.
PLS002: a RefUnion aliases collective and non-collective TMEM.
The fixed version is collective_matmul_fixed.py.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

M, K, N = 128, 64, 128


def matmul(a, b):
    def kernel(a_gmem, b_gmem, out_gmem, a_smem, b_smem, acc_tmem, barrier):
        is_leader = jax.lax.axis_index("x") == 0

        @pl.when(is_leader)
        def _():
            acc_slice = acc_tmem.at[:, pl.ds(0, 2 * N)]
            plgpu.tcgen05_mma(acc_slice, a_smem, b_smem, barrier, collective_axis="x")  # PLS001

    return plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
        cluster=(2,),
        cluster_names=("x",),
        scratch_types=dict(
            a_smem=plgpu.SMEM((M, K), jnp.float16),
            b_smem=plgpu.SMEM((K, N), jnp.float16),
            acc_tmem=plgpu.TMEM((M, 2 * N), jnp.float32),
            barrier=plgpu.Barrier(orders_tensor_core=True),
        ),
    )(a, b)


def aliased_accumulators(x):
    def kernel(x_gmem, out_gmem, tmem):
        acc_a, acc_b = tmem

    return plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
        cluster=(2,),
        cluster_names=("x",),
        scratch_types=[
            plgpu.RefUnion(  # PLS002
                plgpu.TMEM((M, 2 * N), jnp.float32, collective=True),
                plgpu.TMEM((M, 2 * N), jnp.float32),
            ),
        ],
    )(x)


def case_matmul():
    a = jax.ShapeDtypeStruct((M, K), jnp.float16)
    b = jax.ShapeDtypeStruct((K, N), jnp.float16)
    return matmul, (a, b)


def case_aliased():
    return aliased_accumulators, (jax.ShapeDtypeStruct((M, N), jnp.float32),)
