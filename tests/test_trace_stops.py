"""Where JAX's trace of a kernel body stops before a site, for errors no rule reports: the
fixtures cannot hold these (a case JAX rejects with an error no marker names fails the
oracle), so each test asks JAX itself when it is installed, then the linter."""

import textwrap

import pytest

from pallas_lsp.analysis import analyze_source

# A scales copy whose target is SMEM (the TMEM was written as SMEM): the copy's abstract
# evaluation raises first, and the MMA after it, whose `b_scale` is that SMEM, is never
# traced (PLS009 was reported there).
SCALES_COPIED_TO_SMEM = textwrap.dedent('''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    T = (plgpu.TilingTransform((8, 128)), plgpu.SwizzleTransform(128))
    SC = jnp.float8_e8m0fnu
    F8 = jnp.float8_e5m2


    def matmul():
      def kernel(a_gmem, b_gmem, a_sc_gmem, b_sc_gmem, out_gmem,
                 a_smem, b_smem, a_sc_smem, b_sc_smem, acc, a_sc, b_sc, barrier):
        plgpu.async_copy_scales_to_tmem(a_sc_smem, a_sc)
        plgpu.async_copy_scales_to_tmem(b_sc_smem, b_sc)
        plgpu.tcgen05_mma(acc, a_smem, plgpu.transpose_ref(b_smem, (1, 0)), barrier,
                          a_scale=a_sc, b_scale=b_sc)

      f = plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32), scratch_types=[
          plgpu.SMEM((128, 128), F8, transforms=T),
          plgpu.SMEM((128, 128), F8, transforms=T),
          plgpu.SMEM((1, 1, 32, 16), SC),
          plgpu.SMEM((1, 1, 32, 16), SC),
          plgpu.TMEM((128, 128), jnp.float32),
          plgpu.TMEM((128, 4), SC, layout=plgpu.TMEMLayout.SCALES_LAYOUT),
          plgpu.SMEM((128, 4), SC),
          plgpu.Barrier(orders_tensor_core=True),
      ])
      scales = jax.ShapeDtypeStruct((1, 1, 32, 16), SC)
      return f, (jax.ShapeDtypeStruct((128, 128), F8), jax.ShapeDtypeStruct((128, 128), F8), scales, scales)
''')


def test_jax_stops_at_a_scales_copy_into_smem():
    jax = pytest.importorskip("jax")
    namespace: dict = {}
    exec(compile(SCALES_COPIED_TO_SMEM, "<scales>", "exec"), namespace)
    f, args = namespace["matmul"]()
    with pytest.raises(ValueError, match="async_copy_scales_to_tmem target must be a TMEM ref"):
        jax.make_jaxpr(f)(*args)


def test_no_mma_finding_after_a_copy_that_surely_raises():
    assert analyze_source(SCALES_COPIED_TO_SMEM, "scales.py").findings == []
