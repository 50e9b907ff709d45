"""How each real file is traced on the CPU (standard library only): the harness spec.

A module file (JAX's GPU ops, tokamax's kernels) is loaded under its own dotted name and each
of its cases builds a kernel call `(fn, args)` from it (`mod`): every case runs for every
mutant. A test file (`tests/pallas/*_test.py`) runs the test methods that contain the mutated
line (`PallasCallTCGen05Test.test_x`, each of its generated parameterizations), with the
kernel calls intercepted (see `harness.py`). A tutorial page runs its final kernel.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .mutate import Mutant
from .sources import Source

_JAX_OPS = "jax.experimental.pallas.ops.gpu"

# Python (with `mod`, `jax`, `jnp`) evaluating to (fn, args).
_MATMUL = (
    "(lambda c: (lambda a, b: mod.matmul_kernel(a, b, config=c), "
    "(jax.ShapeDtypeStruct((512, 256), jnp.float16), jax.ShapeDtypeStruct((256, 512), jnp.float16))))"
    "(mod.TuningConfig(tile_m=128, tile_n=128, tile_k=64, max_concurrent_steps=2, collective={c}))"
)
_RAGGED = (
    "(lambda bm: (lambda c: (lambda a, b, g: mod.ragged_dot_kernel(a, b, g, c), "
    "(jax.ShapeDtypeStruct((1024, 256), jnp.float16), jax.ShapeDtypeStruct((4, 256, 512), jnp.float16), "
    "jax.ShapeDtypeStruct((4,), jnp.int32))))"
    "(mod.TuningConfig(tile_m=128, tile_n=128, tile_k=64, max_concurrent_steps=2, collective={c}, "
    "grid_tile_width=1, grid_minor_dim=bm.MatmulDimension.N)))"
    "(__import__('jax.experimental.pallas.ops.gpu.blackwell_matmul_mgpu', fromlist=['x']))"
)
# The CPU has no SM count; kernels only size their grid with it.
_FAKE_DEVICES = (
    "class _Dev:\n    core_count = 148\n    platform = 'gpu'\n"
    "jax.local_devices = lambda *a, **k: [_Dev()]\n"
    "import jax.extend.backend as _b\n_b.get_default_device = lambda: _Dev()\n"
)


@dataclass(frozen=True)
class Target:
    module: str
    purge: tuple[str, ...] = ()
    sys_path: tuple[str, ...] = ()
    intercept: bool = False
    setup: str = ""
    cases: tuple[dict, ...] = ()  # every mutant
    tests: bool = False  # cases from the mutant's enclosing test method
    test_classes: dict = field(default_factory=dict)  # class -> classes to run it as

    def cases_for(self, mutant: Mutant | None, source: Source) -> list[dict]:
        if not self.tests:
            return list(self.cases)
        if mutant is None:
            return []
        scope = mutant.scope
        if len(scope) >= 2 and scope[1].startswith("test"):
            return [{"kind": "test", "class": scope[0], "method": scope[1]}]
        return []

    def spec(self, source: Source) -> dict:
        return {"module": self.module, "purge": list(self.purge), "sys_path": [*([] if source.installed else [str(source.root)]), *self.sys_path],
                "intercept": self.intercept, "setup": self.setup}


def _test_target(source: Source) -> Target:
    name = source.rel.rsplit("/", 1)[-1][:-3]
    return Target(module=name, purge=(name,), sys_path=(str(source.path.parent),), intercept=True,
                  setup=_FAKE_DEVICES, tests=True)


def _doc_target(source: Source) -> Target | None:
    # The final kernel of the Blackwell tutorial (the one whole program on the page).
    if not source.rel.endswith("blackwell_matmul.md"):
        return None
    defs = {n.name for n in ast.parse(source.text).body if isinstance(n, ast.FunctionDef)}
    if "matmul6" not in defs:
        return None
    code = (
        "(lambda c: (lambda a, b: mod.matmul6(a, b, c), (jax.ShapeDtypeStruct((1024, 512), jnp.float16), "
        "jax.ShapeDtypeStruct((512, 1024), jnp.float16))))(__import__('types').SimpleNamespace(tile_m=128, "
        "tile_n=128, tile_k=64, max_concurrent_steps=2, epilogue_tile_n=64, grid_tile_width=1, grid_minor_dim="
        "__import__('jax.experimental.pallas.ops.gpu.blackwell_matmul_mgpu', fromlist=['x']).MatmulDimension.N))"
    )
    return Target(module="blackwell_matmul_tutorial", purge=("blackwell_matmul_tutorial",), setup=_FAKE_DEVICES,
                  cases=({"kind": "call", "name": "matmul6", "code": code},))


def target_for(source: Source) -> Target | None:
    if not source.blackwell:
        return None
    rel = source.rel
    if source.origin == "jax":
        if rel.endswith("/blackwell_matmul_mgpu.py"):
            return Target(module=f"{_JAX_OPS}.blackwell_matmul_mgpu", purge=(f"{_JAX_OPS}.blackwell_matmul_mgpu",),
                          cases=tuple({"kind": "call", "name": f"matmul collective={c}", "code": _MATMUL.format(c=c)}
                                      for c in (True, False)))
        if rel.endswith("/blackwell_ragged_dot_mgpu.py"):
            return Target(module=f"{_JAX_OPS}.blackwell_ragged_dot_mgpu",
                          purge=(f"{_JAX_OPS}.blackwell_ragged_dot_mgpu",), setup=_FAKE_DEVICES,
                          cases=tuple({"kind": "call", "name": f"ragged collective={c}", "code": _RAGGED.format(c=c)}
                                      for c in (True, False)))
        if rel.startswith("tests/pallas/") and rel.endswith("_test.py"):
            return _test_target(source)
        if rel.endswith(".md"):
            return _doc_target(source)
        return None
    if source.origin == "tokamax":
        from .tokamax_cases import tokamax_target
        return tokamax_target(source)
    return None
