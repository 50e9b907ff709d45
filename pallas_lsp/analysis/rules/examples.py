"""The rules' VALID/INVALID programs: shown in the docs, run by the rule tests and traced by
the JAX oracle (`case_*` functions), so every claim in the docs is one JAX confirms."""

_MATMUL = '''\
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def matmul(a, b):
    def kernel(a_gmem, b_gmem, out_gmem, a_smem, b_smem, acc_tmem, barrier):
        plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, barrier, collective_axis="x"){marker}

    return plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((128, 256), jnp.float32),
        cluster=(2,),
        cluster_names=("x",),
        scratch_types=dict(
            a_smem=plgpu.SMEM((128, 64), jnp.float16),
            b_smem=plgpu.SMEM((64, 128), jnp.float16),
            acc_tmem=plgpu.TMEM((128, 256), jnp.float32{flag}),
            barrier=plgpu.Barrier(orders_tensor_core=True),
        ),
    )(a, b)


def case_matmul():
    a = jax.ShapeDtypeStruct((256, 64), jnp.float16)
    b = jax.ShapeDtypeStruct((64, 256), jnp.float16)
    return matmul, (a, b)
'''

PLS001_INVALID = _MATMUL.format(marker="  # PLS001", flag="")
PLS001_VALID = _MATMUL.format(marker="", flag=", collective=True")

_UNION = '''\
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def aliased_accumulators(x):
    def kernel(x_gmem, out_gmem, tmem):
        acc_a, acc_b = tmem

    return plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32),
        cluster=(2,),
        cluster_names=("x",),
        scratch_types=[
            plgpu.RefUnion({marker}
                plgpu.TMEM((128, 128), jnp.float32, collective=True),
                plgpu.TMEM((128, 128), jnp.float32{flag}),
            ),
        ],
    )(x)


def case_union():
    return aliased_accumulators, (jax.ShapeDtypeStruct((128, 128), jnp.float32),)
'''

PLS002_INVALID = _UNION.format(marker="  # PLS002", flag="")
PLS002_VALID = _UNION.format(marker="", flag=", collective=True")


# A kernel that only allocates: enough for JAX to run the constructors, trace and lower.
_ALLOCATES = '''\
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def {name}(x):
    def kernel(x_gmem, out_gmem, scratch):
        del x_gmem, out_gmem, scratch

    return plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32),
        scratch_types=[
            {scratch}
        ],
    )(x)


def case_{name}():
    return {name}, (jax.ShapeDtypeStruct((128, 128), jnp.float32),)
'''


def _allocates(name: str, scratch: str) -> str:
    return _ALLOCATES.format(name=name, scratch=scratch)


PLS003_INVALID = _allocates("staged", "plgpu.SMEM((128, 64), jnp.float16, collective=False),  # PLS003")
PLS003_VALID = _allocates("staged", "plgpu.SMEM((128, 64), jnp.float16),")

PLS004_INVALID = _allocates(
    "scales", "plgpu.TMEM((128, 4), jnp.float8_e8m0fnu, packed=True, layout=plgpu.TMEMLayout.SCALES_LAYOUT),  # PLS004")
PLS004_VALID = _allocates("scales", "plgpu.TMEM((128, 4), jnp.float8_e8m0fnu, layout=plgpu.TMEMLayout.SCALES_LAYOUT),")

PLS005_INVALID = _allocates("lhs_in_tmem", "plgpu.TMEM((128, 64), jnp.float16),  # PLS005")
PLS005_VALID = _allocates("lhs_in_tmem", "plgpu.TMEM((128, 64), jnp.float16, packed=True),")

PLS006_INVALID = _allocates(
    "accumulator", "plgpu.TMEM((128, 128), jnp.float32, transforms=(plgpu.TilingTransform((8, 64)),)),  # PLS006")
PLS006_VALID = _allocates("accumulator", "plgpu.TMEM((128, 128), jnp.float32),")

PLS007_INVALID = _allocates(
    "aliased", "plgpu.RefUnion(plgpu.SMEM((128, 64), jnp.float16), plgpu.TMEM((128, 128), jnp.float32)),  # PLS007")
PLS007_VALID = _allocates(
    "aliased", "plgpu.RefUnion(plgpu.SMEM((128, 64), jnp.float16), plgpu.SMEM((64, 128), jnp.float16)),")

PLS008_VALID = _allocates("staged", "plgpu.SMEM((128, 64), jnp.float16),")
PLS008_INVALID = (
    PLS008_VALID.replace("plgpu.kernel(\n", "plgpu.kernel(  # PLS008\n")
    .replace("out_type=", "out_shape=")
    .replace("scratch_types=", "scratch_shapes=")
)


_MMA = '''\
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def matmul(a, b):
    def kernel(a_gmem, b_gmem, out_gmem, a_smem, b_smem, acc, barrier{extra_params}):
        plgpu.tcgen05_mma(acc, a_smem, b_smem, barrier{mma_args}){marker}

    return plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32),
        scratch_types=dict(
            a_smem=plgpu.SMEM((128, 64), jnp.float16),
            b_smem=plgpu.SMEM((64, 128), jnp.float16),
            acc={acc},
            barrier={barrier},{extra_scratch}
        ),
    )(a, b)


def case_matmul():
    a = jax.ShapeDtypeStruct((128, 64), jnp.float16)
    b = jax.ShapeDtypeStruct((64, 128), jnp.float16)
    return matmul, (a, b)
'''


def _mma(marker: str = "", acc: str = "plgpu.TMEM((128, 128), jnp.float32)",
         barrier: str = "plgpu.Barrier(orders_tensor_core=True)", mma_args: str = "",
         extra_params: str = "", extra_scratch: str = "") -> str:
    return _MMA.format(marker=marker, acc=acc, barrier=barrier, mma_args=mma_args,
                       extra_params=extra_params, extra_scratch=extra_scratch)


PLS009_INVALID = _mma(marker="  # PLS009", acc="plgpu.SMEM((128, 128), jnp.float32)")
PLS009_VALID = _mma()

PLS010_INVALID = _mma(barrier="plgpu.Barrier()", marker="  # PLS010")
PLS010_VALID = _mma(barrier="plgpu.Barrier(orders_tensor_core=True)")

_SCALES = '''
            a_scales=plgpu.TMEM((128, 4), jnp.float8_e8m0fnu, layout=plgpu.TMEMLayout.SCALES_LAYOUT),'''
PLS011_INVALID = _mma(marker="  # PLS011", mma_args=", a_scale=a_scales", extra_params=", a_scales",
                      extra_scratch=_SCALES)
PLS011_VALID = _mma(extra_params=", a_scales", extra_scratch=_SCALES)


# A collective matmul that lowers for CUDA on the CPU in jax 0.10.2 too (its SMEM needs
# real tiling and swizzling there).
_COLLECTIVE_MATMUL = '''\
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

TRANSFORMS = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))


def matmul(a, b):
    def kernel(a_gmem, b_gmem, out_gmem, a_smem, b_smem, acc_tmem, barrier):
        plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, barrier, collective_axis={axis}){marker}

    return plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((128, 256), jnp.float32),
        cluster={cluster},
        cluster_names={names},
        scratch_types=dict(
            a_smem=plgpu.SMEM((128, 64), jnp.float16, transforms=TRANSFORMS),
            b_smem=plgpu.SMEM((64, 128), jnp.float16, transforms=TRANSFORMS),
            acc_tmem=plgpu.TMEM((128, 256), jnp.float32, collective=True),
            barrier=plgpu.Barrier(orders_tensor_core=True),
        ),
    )(a, b)


def case_matmul():
    a = jax.ShapeDtypeStruct((256, 64), jnp.float16)
    b = jax.ShapeDtypeStruct((64, 256), jnp.float16)
    return matmul, (a, b)
'''


def _collective_matmul(axis: str = '"x"', cluster: str = "(2,)", names: str = '("x",)', marker: str = "") -> str:
    return _COLLECTIVE_MATMUL.format(axis=axis, cluster=cluster, names=names, marker=marker)


PLS012_INVALID = _collective_matmul(cluster="(2, 1)", names='("x", "y")', marker="  # PLS012 [lowering]")
PLS012_VALID = _collective_matmul(cluster="(1, 2)", names='("x", "y")', axis='"y"')


_TWO_ACCUMULATORS = '''\
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def accumulators(x):
    def kernel(x_gmem, out_gmem, acc_a, acc_b):
        del x_gmem, out_gmem, acc_a, acc_b

    return plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32),{cluster}
        scratch_types=[
            plgpu.TMEM((128, 128), jnp.float32, collective=True),{marker_a}
            plgpu.TMEM((128, 128), jnp.float32{flag}),{marker_b}
        ],
    )(x)


def case_accumulators():
    return accumulators, (jax.ShapeDtypeStruct((128, 128), jnp.float32),)
'''
_PAIR = '\n        cluster=(2,),\n        cluster_names=("x",),'


def _two_accumulators(marker_a: str = "", marker_b: str = "", cluster: str = _PAIR,
                      flag: str = ", collective=True") -> str:
    """JAX gives these lowering errors no line: the finding goes on an allocation."""
    return _TWO_ACCUMULATORS.format(marker_a=marker_a, marker_b=marker_b, cluster=cluster, flag=flag)


PLS013_INVALID = _two_accumulators(marker_a="  # PLS013 [lowering]", cluster="")
PLS013_VALID = _two_accumulators()

PLS014_INVALID = _two_accumulators(marker_b="  # PLS014 [lowering]", flag="")
PLS014_VALID = _two_accumulators()


_SINGLE_SCRATCH = '''\
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def accumulate(x):
    def kernel(x_gmem, out_gmem, acc_tmem):
        del x_gmem, out_gmem, acc_tmem

    return plgpu.kernel(  {marker}
        kernel,
        out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32),
        scratch_types={scratch},
    )(x)


def case_accumulate():
    return accumulate, (jax.ShapeDtypeStruct((128, 128), jnp.float32),)
'''

PLS015_INVALID = _SINGLE_SCRATCH.format(marker="# PLS015", scratch="plgpu.TMEM((128, 128), jnp.float32)")
PLS015_VALID = _SINGLE_SCRATCH.format(marker="", scratch="[plgpu.TMEM((128, 128), jnp.float32)]").replace(
    "plgpu.kernel(  \n", "plgpu.kernel(\n")


_THREADS = '''\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def two_warpgroups(x):
    def kernel(x_gmem, out_gmem):
        def body(acc_tmem):
            del acc_tmem

        pl.run_scoped(body, plgpu.TMEM((128, 128), jnp.float32){collective_axes}){marker}

    return plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32),
        num_threads=2,
        thread_name="wg",
    )(x)


def case_two_warpgroups():
    return two_warpgroups, (jax.ShapeDtypeStruct((128, 128), jnp.float32),)
'''

PLS016_INVALID = _THREADS.format(collective_axes="", marker="  # PLS016 [lowering]")
PLS016_VALID = _THREADS.format(collective_axes=', collective_axes="wg"', marker="")

PLS017_INVALID = _collective_matmul(axis="None", marker="  # PLS017 [lowering jax>=0.11]").replace(
    "plgpu.tcgen05_mma(acc_tmem,", "plgpu.tcgen05_mma(acc_tmem.at[:, :128],")
PLS017_VALID = _collective_matmul()

PLS018_INVALID = PLS001_VALID.replace(
    "acc_tmem=plgpu.TMEM((128, 256), jnp.float32, collective=True)",
    "acc_tmem=plgpu.TMEM((128, 128), jnp.float32, collective=True)",
).replace('collective_axis="x")', 'collective_axis="x")  # PLS018')
PLS018_VALID = PLS001_VALID

PLS019_INVALID = _allocates("accumulator", "plgpu.TMEM((96, 128), jnp.float32),  # PLS019")
PLS019_VALID = _allocates("accumulator", "plgpu.TMEM((128, 128), jnp.float32),")
