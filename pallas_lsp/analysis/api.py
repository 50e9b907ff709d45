"""What we know of the Pallas Mosaic GPU API, in one place.

The knowledge takes two forms:

* `STUBS`: the source of stand-in modules for the parts of `jax` the rules care about. `brain`
  serves them to astroid instead of the real package, so that `plgpu.TMEM`, `from
  jax.experimental.pallas.mosaic_gpu import tcgen05_mma as mma` and friends infer to these
  definitions whether or not jax is installed, and jax itself is never parsed or imported.
* `MODELLED`: the qualified names of the API functions the tracer models.

Signatures follow jax 0.10.2 - 0.12 (see the research notes); spellings from older releases that
real code still uses (`out_shape=`/`scratch_shapes=`, `GPUMemorySpace`) are accepted too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .values import UNKNOWN

MOSAIC_GPU = "jax.experimental.pallas.mosaic_gpu"
PALLAS = "jax.experimental.pallas"

# The JAX releases the rules follow, as `jax.__version_info__` gives them: code that asks which
# one it runs with (`if jax.__version_info__ >= (0, 11, 0):`) is followed with each
JAX_VERSIONS = ((0, 10, 2), (0, 11, 0), (0, 12, 0))

# The public names jax.experimental.pallas.mosaic_gpu binds in the supported releases (jax 0.10.2
# and 0.12, recorded with `dir()` and the deprecated names that still resolve): a name outside
# all of them is an AttributeError on each, and its import an ImportError (the version shims of
# real code: `getattr(plgpu, "NewThing", None)`). A name only some of them bind is not known.
MOSAIC_GPU_NAMES = frozenset("""
    ACC Barrier BlockSpec ClusterBarrier CompilerParams CopyPartition GMEM InterpretGPUParams Layout
    LoweringSemantics MemorySpace Mesh NDLoopInfo OOBFillMode PeerMemRef PipelinePipeline REGS
    RefType RefUnion Replicated SMEM SemaphoreSignal SemaphoreType ShapeDtypeStruct SwizzleTransform
    TMEM TMEMLayout Tiling TilingTransform TraceScope Transform TryClusterCancelResult
    WGMMAAccumulatorRef WarpMesh alloc_semaphore as_torch_kernel async_copy_scales_to_tmem
    async_copy_smem_to_tmem async_copy_sparse_metadata_to_tmem async_load_tmem async_prefetch
    async_store_smem async_store_tmem atomic_add atomic_and atomic_max atomic_min atomic_or
    atomic_xor barrier_arrive barrier_arrive_and_wait barrier_test barrier_wait broadcasted_iota
    cluster_ref commit_smem commit_smem_to_gmem_group commit_tmem copy_gmem_to_smem
    copy_smem_to_gmem dynamic_scheduling_loop emit_pipeline emit_pipeline_warp_specialized
    find_swizzle force_gpu_interpret_mode format_tcgen05_sparse_metadata
    griddepcontrol_launch_dependents griddepcontrol_wait im2col_ref inline_mgpu kernel layout_cast
    load max min mma multicast_ref multimem_load_reduce multimem_store nd_loop planar_snake
    print_layout prod query_cluster_cancel remote_ref semaphore_signal semaphore_signal_multicast
    semaphore_signal_parallel semaphore_wait set_gpu_interpret_mode set_max_registers store sum
    tcgen05_commit_arrive tcgen05_mma transform_ref transpose_ref try_cluster_cancel
    wait_gmem_to_smem wait_load_tmem wait_smem_to_gmem warp_map wgmma wgmma_accumulator_load
    wgmma_wait
""".split())


# ... those some supported releases do not bind (`hasattr` asked under jax 0.10.2 and 0.12)
MOSAIC_GPU_VERSIONED = frozenset("""
    InterpretGPUParams alloc_semaphore barrier_arrive_and_wait force_gpu_interpret_mode im2col_ref max min
    mma prod set_gpu_interpret_mode store sum transform_ref wait_gmem_to_smem
""".split())


def surely_missing(module: str, name: str) -> bool:
    """Does no supported release of this API module bind `name` (a public one)?"""
    return module == MOSAIC_GPU and not name.startswith("_") and name not in MOSAIC_GPU_NAMES


def surely_present(module: str, name: str) -> bool:
    """Does every supported release of this API module bind `name`?"""
    return module == MOSAIC_GPU and name in MOSAIC_GPU_NAMES and name not in MOSAIC_GPU_VERSIONED



_MEMORY_SPACE_SIGNATURE = (
    "(shape, dtype, *, transforms=(), packed=None, collective=None, layout=None)"
)

_MOSAIC_GPU_STUB = f'''
"""pallas-lsp stand-in for jax.experimental.pallas.mosaic_gpu."""

def TMEM{_MEMORY_SPACE_SIGNATURE}: ...
def SMEM{_MEMORY_SPACE_SIGNATURE}: ...
def GMEM{_MEMORY_SPACE_SIGNATURE}: ...
def REGS{_MEMORY_SPACE_SIGNATURE}: ...

class MemorySpace:
    TMEM = TMEM
    SMEM = SMEM
    GMEM = GMEM
    REGS = REGS

GPUMemorySpace = MemorySpace

class RefUnion:
    def __init__(self, *refs): ...

def Barrier(*, num_arrivals=1, num_barriers=(), orders_tensor_core=False): ...
def ClusterBarrier(*, collective_axes, num_barriers=(), num_arrivals=1, orders_tensor_core=False,
                   leader_tracked=False): ...

def tcgen05_mma(acc, a, b, barrier=None, *, a_scale=None, b_scale=None,
                a_sparse_metadata=None, accumulate=True, collective_axis=None): ...
def tcgen05_commit_arrive(barrier, collective_axis=None, *, predicate=None): ...
def async_copy_smem_to_tmem(smem_ref, tmem_ref, collective_axis=None): ...
def async_copy_scales_to_tmem(smem_ref, tmem_ref, collective_axis=None): ...
def async_copy_sparse_metadata_to_tmem(smem_ref, tmem_ref, collective_axis=None): ...

def kernel(body=None, out_shape=None, *, out_type=None, scratch_shapes=None,
           scratch_types=None, compiler_params=None, interpret=None, **mesh_kwargs): ...

def _loop_body_runner(init_carry):
    def decorator(body):
        if init_carry is None:
            body(_traced())
        else:
            return body(_traced(), init_carry)
    return decorator

def nd_loop(grid, *, collective_axes=(), tiling=None, init_carry=None, include_wave=False):
    return _loop_body_runner(init_carry)

def dynamic_scheduling_loop(grid_names, *, thread_axis=None, init_carry=None):
    return _loop_body_runner(init_carry)

def warp_map(f):
    f(_traced())

def emit_pipeline(body, *, grid=(), in_specs=(), out_specs=(), max_concurrent_steps=1, init_carry=None,
                  **kwargs):
    # the body gets the step's indices, then a block of each operand: in SMEM unless its spec
    # says otherwise, of the spec's block shape
    def pipeline(*gmem_refs):
        if init_carry is None:
            return body(_traced(), *_blocks(in_specs, out_specs))
        return body(_traced(), *_blocks(in_specs, out_specs), init_carry)
    return pipeline

def _traced(): ...
def _blocks(in_specs, out_specs): ...
'''

_PALLAS_STUB = '''
"""pallas-lsp stand-in for jax.experimental.pallas."""

def pallas_call(kernel, out_shape=None, *, grid_spec=None, grid=(), in_specs=None,
                out_specs=None, scratch_shapes=(), interpret=False, **kwargs): ...
def kernel(body=None, out_type=None, *, mesh=None, scratch_types=None, scratch_shapes=None,
           compiler_params=None, interpret=False, **kwargs): ...
def core_map(mesh, *, compiler_params=None, scratch_shapes=(), **kwargs): ...
def run_scoped(f, *types, collective_axes=(), **kw_types): ...

def with_scoped(*types, collective_axes=(), **kw_types): ...

def when(condition):
    # a Python bool decides at once whether the body is traced; anything else is `lax.cond`'s
    # (the body runs outside any `if` of the stub where it runs whatever the condition)
    def decorator(f):
        if _is_false(condition):
            _never_called(f)
            return
        f()
    return decorator

def run_state(f):
    # `run_state(f)(values)`: `f` runs on refs holding the values, and their final values are
    # what comes back (the trace follows the values as the refs)
    def run(values):
        f(values)
        return values
    return run

def loop(lower, upper=None, *, init_carry=None, step=1, unroll=None):
    # JAX runs the body under `lax.fori_loop` with `lower + i * step`: a traced integer
    def decorator(body):
        if init_carry is None:
            body(_index())
        else:
            return body(_index(), init_carry)
    return decorator

def _traced(): ...
def _index(): ...
def _never_called(f): ...
def _is_false(value): ...
'''

_LAX_STUB = '''
"""pallas-lsp stand-in for jax.lax: control flow calls its functions as tracing does."""

def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    return body_fun(_index(), init_val)

def while_loop(cond_fun, body_fun, init_val):
    cond_fun(init_val)
    return body_fun(init_val)

def cond(pred, true_fun, false_fun, *operands, **kwargs):
    true_fun(*operands)
    return false_fun(*operands)

def switch(index, branches, *operands, **kwargs):
    result = None
    for branch in branches:
        result = branch(*operands)
    return result

def scan(f, init, xs=None, length=None, reverse=False, unroll=1, **kwargs):
    return f(init, _traced())

def axis_index(axis_name): ...
def rem(x, y): ...
def _traced(): ...
def _index(): ...
'''

_JAX_STUB = '''
"""pallas-lsp stand-in for jax: transformations that keep the function they wrap (custom
derivative rules: the function as it is called; `grad` and `vmap`: it called with the arguments
as JAX traces them, whose gradients are not followed), and `eval_shape`, whose result is what
the function makes of the shapes (the trace follows shapes); `jvp`, `vjp`, `linearize` and
`make_jaxpr` call the function with the primals (the arguments) where they are called.
`eval_shape` and `make_jaxpr` only trace: the kernels they apply are never lowered."""

def jit(fun=None, *args, **kwargs):
    if fun is None:
        def decorator(f):
            return f
        return decorator
    return fun

named_call = checkpoint = remat = jit


def eval_shape(fun, *args, **kwargs):
    return _trace_only(fun, *args, **kwargs)


def custom_vjp(fun, nondiff_argnums=()):
    return fun

custom_jvp = custom_vjp


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, **kwargs):
    def gradient(*args, **kwargs):
        fun(*args, **kwargs)
        return _traced()
    return gradient


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, **kwargs):
    def value_and_gradient(*args, **kwargs):
        return fun(*args, **kwargs), _traced()
    return value_and_gradient


jacfwd = jacrev = hessian = grad


def jvp(fun, primals, tangents, has_aux=False):
    return fun(*primals), _traced()


def vjp(fun, *primals, has_aux=False, **kwargs):
    return fun(*primals), _traced()

linearize = vjp


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None):
    def jaxpr_of(*args, **kwargs):  # (traced here: inside the `with pytest.raises(...)` around it)
        _trace_only(fun, *args, **kwargs)
        return _traced()
    return jaxpr_of


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    def batched(*args, **kwargs):
        return fun(*_unbatched(args, in_axes), **_unbatched(kwargs, 0))
    return batched


def _unbatched(values, in_axes): ...
def _traced(): ...
def _trace_only(fun, *args, **kwargs): ...
'''

_JAX_UTIL_STUB = '''
"""pallas-lsp stand-in for jax._src.util: list helpers kernels split their refs with."""

def split_list(args, ns):
    lists = []
    for n in ns:
        lists.append(args[:n])
        args = args[n:]
    lists.append(args)
    return lists
'''

# Modules served to astroid: name -> source. Every other `jax.*` module is served empty.
# A stub whose body is `...` is a primitive the analysis models itself; any other body is run
# by the tracer as it stands (higher-order APIs call their function arguments).
STUBS: dict[str, str] = {
    "jax": _JAX_STUB,
    "jax.lax": _LAX_STUB,
    "jax.experimental": "",
    PALLAS: _PALLAS_STUB,
    MOSAIC_GPU: _MOSAIC_GPU_STUB,
    "jax._src.util": _JAX_UTIL_STUB,
}
PACKAGES = frozenset({"jax", "jax.experimental", PALLAS})

# The API functions the tracer models (`trace.stubs`), by qualified name.
MODELLED: frozenset[str] = frozenset({
    *(f"{MOSAIC_GPU}.{space}" for space in ("TMEM", "SMEM", "GMEM", "REGS")),
    *(f"{MOSAIC_GPU}.{name}" for name in (
        "RefUnion", "Barrier", "ClusterBarrier", "tcgen05_mma", "tcgen05_commit_arrive",
        "async_copy_smem_to_tmem", "async_copy_scales_to_tmem", "async_copy_sparse_metadata_to_tmem",
        "kernel", "nd_loop", "dynamic_scheduling_loop", "warp_map")),
    *(f"{PALLAS}.{name}" for name in ("kernel", "pallas_call", "core_map", "run_scoped", "with_scoped", "when")),
    "functools.partial",
})

# Names under which the API is called. Inference is asked only about calls whose callee ends in
# one of these names: it keeps astroid away from every other library the kernel file uses.
CALLEE_NAMES = frozenset(qname.rsplit(".", 1)[1] for qname in MODELLED)

# Parameters that may be passed positionally, per API function (as in the stubs above).
POSITIONAL: dict[str, tuple[str, ...]] = {
    "TMEM": ("shape", "dtype"),
    "SMEM": ("shape", "dtype"),
    "GMEM": ("shape", "dtype"),
    "REGS": ("shape", "dtype"),
    "tcgen05_mma": ("acc", "a", "b", "barrier"),
    "tcgen05_commit_arrive": ("barrier", "collective_axis"),
    **{copy: ("smem_ref", "tmem_ref", "collective_axis") for copy in (
        "async_copy_smem_to_tmem", "async_copy_scales_to_tmem", "async_copy_sparse_metadata_to_tmem")},
    "Barrier": (),  # keyword-only
    "ClusterBarrier": (),
}
TMEM_ONLY_KEYWORDS = ("packed", "collective", "layout")  # JAX refuses any non-None value elsewhere


@dataclass(frozen=True)
class DType:
    """A dtype named in the source (`jnp.float16`); `bits` is its item size. `instance`: a
    NumPy dtype object (`jnp.dtype(jnp.float16)`, `x.dtype`), which has an `itemsize`, rather
    than JAX's scalar type (`jnp.float16`), which has none; the two compare equal, but hash
    apart, as in NumPy and JAX: a dtype object and a scalar type are two keys of a dict
    (`{jnp.int8: 96}[x.dtype]` is a KeyError; `jnp.int8` and `np.int8` are one key)."""

    name: str
    bits: int
    instance: bool = field(default=False, compare=False)

    def __hash__(self) -> int:
        return hash((self.name, self.bits, self.instance))

    def as_instance(self) -> DType:
        return DType(self.name, self.bits, True)


def same_dtype(left: DType, right: DType) -> Any:
    """`x.dtype == jnp.float32`: NumPy's dtypes and JAX's scalar types compare equal when they
    name one dtype (`np.half` is `float16`). 64-bit types stay undecided: JAX may make them
    32-bit (x64 off)."""
    if 64 in (left.bits, right.bits):
        return UNKNOWN
    return canonical_dtype_name(left.name) == canonical_dtype_name(right.name)


def dtype_name(dtype: DType) -> Any:
    """A NumPy dtype's `name` (`str` of it): its canonical name (`bool_`'s is `bool`); unknown
    for 64-bit types, which JAX may make 32-bit."""
    if dtype.bits == 64:
        return UNKNOWN
    name = canonical_dtype_name(dtype.name)
    return "bool" if name == "bool_" else name


# NumPy's `kind` of the dtypes whose kind every NumPy and ml_dtypes version agrees on
_NUMPY_KINDS = {"int8": "i", "int16": "i", "int32": "i", "uint8": "u", "uint16": "u", "uint32": "u",
                "float16": "f", "float32": "f", "bool_": "b"}


def numpy_kind(dtype: DType) -> Any:
    return _NUMPY_KINDS.get(canonical_dtype_name(dtype.name), UNKNOWN)


def dtype_equals_name(dtype: DType, name: str) -> Any:
    """`x.dtype == "bfloat16"`: NumPy compares a dtype with the dtype a string names (True or
    False for a name of ours); JAX's scalar type (`jnp.bfloat16`) equals no string."""
    if not dtype.instance:
        return False
    named = "bool_" if name == "bool" else name
    if named not in DTYPE_BITS or dtype.bits == 64 or DTYPE_BITS[named] == 64:
        return UNKNOWN
    return same_dtype(dtype, DType(named, DTYPE_BITS[named]))


def canonical_dtype_name(name: str) -> str:
    """NumPy's name of a dtype spelled by an alias (`half` is `float16`)."""
    return _DTYPE_ALIASES.get(name, name)


def dtype_kind(dtype: DType) -> str:
    """"float" (floating point, `bfloat16` and the float8 kinds included), "int", or "" (bool)."""
    name = _DTYPE_ALIASES.get(dtype.name, dtype.name)
    if name.startswith(("float", "bfloat")) or name == "double":
        return "float"
    return "int" if name.startswith(("int", "uint")) else ""


_DTYPE_ALIASES = {"half": "float16", "single": "float32"}


# Where dtypes are spelled as module attributes (`jnp.float16`, `np.int8`).
DTYPE_MODULES = frozenset({"numpy", "jax.numpy", "ml_dtypes"})
DTYPE_BITS = {
    **{name: 8 for name in ("int8", "uint8", "float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz",
                            "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float8_e3m4",
                            "float8_e4m3", "bool_")},
    **{name: 4 for name in ("int4", "uint4", "float4_e2m1fn")},
    **{name: 16 for name in ("float16", "bfloat16", "int16", "uint16", "half")},
    **{name: 32 for name in ("float32", "int32", "uint32", "single")},
    **{name: 64 for name in ("float64", "int64", "uint64", "double")},
}


def dtype_named(qualified: str | None) -> DType | None:
    """`jax.numpy.float16` -> DType('float16', 16); None for anything else."""
    if not qualified or "." not in qualified:
        return None
    module, name = qualified.rsplit(".", 1)
    if module not in DTYPE_MODULES or name not in DTYPE_BITS:
        return None
    return DType(name, DTYPE_BITS[name])


def scalar_of(dtype: DType, value: Any) -> Any:
    """`np.int64(96)`, `np.bool_(0)`: a scalar type applied to a plain number, as the number
    it is to Python (`bool()`, an index, a comparison); None where we do not say."""
    if dtype.instance or type(value) not in (bool, int, float):
        return None
    if dtype.name == "bool_":
        return bool(value)
    if dtype.name.startswith(("int", "uint")) and dtype.bits >= 8 and float(value).is_integer() \
            and (value >= 0 or dtype.name.startswith("int")) and abs(value) < 2 ** (dtype.bits - 1):
        return int(value)
    return None


# NumPy's boolean scalars (`collective=np.False_`): to Python, the bools they compare equal to.
NUMPY_BOOLS = {"numpy.False_": False, "numpy.True_": True}

SHAPE_DTYPE_STRUCT = "jax.ShapeDtypeStruct"  # one output ref when given as out_type
ARRAY = "<array>()"  # an array made in the code (`jnp.zeros(shape, dtype)`): its shape and dtype


@dataclass(frozen=True)
class ApiValue:
    """Some object of the Pallas API (`plgpu.TMEMLayout.SCALES_LAYOUT`, a transform): we do
    not model it, but it is certainly not None."""

    qualified: str


@dataclass(frozen=True)
class ShapeDtype(ApiValue):
    """A `jax.ShapeDtypeStruct(shape, dtype)`, or an array made with a known shape and dtype
    (`qualified` is `ARRAY`): its `.shape` and `.dtype` are what it was given (hashable,
    UNKNOWN-free values only; None for what cannot be said)."""

    shape: Any = None
    dtype: Any = None


def is_shape_dtype_struct(value: Any) -> bool:
    return isinstance(value, ApiValue) and value.qualified == SHAPE_DTYPE_STRUCT + "()"


def output_refs(out_type: Any) -> int | None:
    """How many output refs a kernel body gets for this `out_type`: one per item of a tuple
    or list, one for a `jax.ShapeDtypeStruct(...)`, none without one (None: not known)."""
    if out_type is None:
        return 0
    if is_shape_dtype_struct(out_type):
        return 1
    if isinstance(out_type, (tuple, list)):
        return len(out_type)
    return None


# API classes whose call makes an object, never None: a WGMMA accumulator (`plgpu.ACC`,
# allocated by `pl.run_scoped` in registers: no TMEM, and no thread-collective check)
MADE_OBJECTS = frozenset({"ACC"})


# The API's enum classes (Mosaic GPU's), none with aliases among its members: two members are
# two objects. Their members in order where every supported jax has the same ones (what
# iterating the class gives), None where the releases differ (`Layout` grew in 0.12).
ENUMS: dict[str, tuple[str, ...] | None] = {
    f"{MOSAIC_GPU}.LoweringSemantics": ("Lane", "Warpgroup"),
    f"{MOSAIC_GPU}.TraceScope": ("WARP", "WARPGROUP"),
    f"{MOSAIC_GPU}.SemaphoreType": ("REGULAR", "BARRIER"),
    f"{MOSAIC_GPU}.TMEMLayout": ("SCALES_LAYOUT", "SPARSE_METADATA_LAYOUT", "M64_COLLECTIVE_LAYOUT",
                                 "SCALES_M64_COLLECTIVE_LAYOUT"),
    f"{MOSAIC_GPU}.Layout": None,
}


# Their members by value (`plgpu.LoweringSemantics(1)`), the same in every supported jax.
ENUM_VALUES: dict[str, dict[Any, str]] = {
    f"{MOSAIC_GPU}.LoweringSemantics": {1: "Lane", 2: "Warpgroup"},
    f"{MOSAIC_GPU}.TraceScope": {"warp": "WARP", "warpgroup": "WARPGROUP"},
    f"{MOSAIC_GPU}.SemaphoreType": {"regular": "REGULAR", "barrier": "BARRIER"},
    f"{MOSAIC_GPU}.TMEMLayout": {1: "SCALES_LAYOUT", 2: "SPARSE_METADATA_LAYOUT", 3: "M64_COLLECTIVE_LAYOUT",
                                 4: "SCALES_M64_COLLECTIVE_LAYOUT"},
}

# Where else the API's classes are defined and exported: Mosaic GPU's own package, whose
# `LoweringSemantics` third-party kernels pass (`mgpu.LoweringSemantics.Lane`) is Pallas's.
ALIASES = {
    "jax.experimental.mosaic.gpu.LoweringSemantics": f"{MOSAIC_GPU}.LoweringSemantics",
    "jax.experimental.mosaic.gpu.core.LoweringSemantics": f"{MOSAIC_GPU}.LoweringSemantics",
}


def enum_member(qualified: str, key: Any, by_name: bool) -> ApiValue | None:
    """`Enum(value)` / `Enum["NAME"]` of one of the API's enums: the member, if it has one."""
    if by_name:
        names = ENUMS.get(qualified) or tuple(ENUM_VALUES.get(qualified, {}).values())
        found = key if isinstance(key, str) and key in names else None
    else:
        found = ENUM_VALUES.get(qualified, {}).get(key) if type(key) in (int, str) else None
    return None if found is None else ApiValue(f"{qualified}.{found}")


def same_api_object(left: ApiValue, right: ApiValue) -> bool | None:
    """Are two attributes of the API one object: the same name, or two members of one of its
    enums (`ENUMS`: not)? None when it cannot be said (a call's result, other attributes)."""
    if left.qualified.endswith("()") or right.qualified.endswith("()"):
        return None
    if left.qualified == right.qualified:
        return True
    owner, _, _ = left.qualified.rpartition(".")
    return False if owner in ENUMS and right.qualified.rpartition(".")[0] == owner else None


def enum_members(qualified: str) -> list[ApiValue] | None:
    """The members iterating one of the API's enum classes gives, when every release agrees."""
    members = ENUMS.get(qualified)
    return None if members is None else [ApiValue(f"{qualified}.{member}") for member in members]


def api_value(qualified: str | None, called: bool = False) -> ApiValue | None:
    """What an attribute of the Pallas modules (or a call of one) is, when we can say it is
    not None: enum members and attributes, layouts, transforms. Functions the analysis
    models (`MODELLED`) keep their own treatment."""
    if called and qualified == SHAPE_DTYPE_STRUCT:
        return ApiValue(qualified + "()")
    if not qualified or not qualified.startswith(f"{PALLAS}."):
        return None
    name = qualified.rsplit(".", 1)[1]
    if name in CALLEE_NAMES:
        return None
    if called and not (".TMEMLayout." in qualified or name.endswith("Transform") or name in MADE_OBJECTS):
        return None  # other API functions may return None (barrier_wait, ...)
    return ApiValue(qualified + ("()" if called else ""))
