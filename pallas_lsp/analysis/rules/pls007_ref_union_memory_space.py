"""PLS007: a RefUnion of refs in different memory spaces, or of GMEM refs."""

from __future__ import annotations

from typing import Any

from ..context import Context
from ..trace import Site
from ..trace.pick import Picker
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .kernels import TracedSiteRule

ALIASABLE = ("SMEM", "TMEM")


class RefUnionMemorySpace(TracedSiteRule):
    """## What it does
    Flags a `plgpu.RefUnion(...)` whose members (looked at through list and tuple groups;
    a nested union counts as one member in its own space) are not all SMEM or all TMEM:
    SMEM aliased with TMEM, or GMEM / REGS refs.

    ## Why is this bad?
    A RefUnion is one allocation seen through several refs, so its members must share a
    memory space, and only shared memory and Tensor Memory can be aliased. JAX raises in the
    constructor, before anything is traced.

    ## Example
    ```python
    plgpu.RefUnion(plgpu.SMEM((128, 64), jnp.float16), plgpu.TMEM((128, 128), jnp.float32))
    ```

    Use instead:
    ```python
    plgpu.RefUnion(plgpu.SMEM((128, 64), jnp.float16), plgpu.SMEM((64, 128), jnp.float16))
    ```

    ## Fix safety
    There is no fix: which allocation should move out of the union is a design decision.

    ## JAX message
    `All aliased Refs must have the same memory space (SMEM or TMEM).` (NotImplementedError,
    when the constructor runs, in every supported version; JAX's message goes on with the repr
    of a generator).
    """

    code = "PLS007"
    name = "ref-union-memory-space"
    summary = "RefUnion of refs in different memory spaces, or of GMEM"
    jax_message = "All aliased Refs must have the same memory space (SMEM or TMEM)."
    jax_exception = "NotImplementedError"
    triggers = (b"RefUnion",)
    identifiers = frozenset({"RefUnion"})
    kinds = ("union",)
    VALID = (examples.PLS007_VALID,)
    INVALID = (Invalid(examples.PLS007_INVALID),)

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        """The members' spaces, in order, when JAX refuses them; () when fine; UNKNOWN."""
        found = pick.leaves(site.value.groups)
        if found is UNKNOWN or not found:
            return UNKNOWN
        spaces = [pick.space(leaf) for leaf in found]
        if UNKNOWN in spaces or "mixed" in spaces:  # a nested union JAX refuses is its own finding
            return UNKNOWN
        if len(set(spaces)) == 1 and spaces[0] in ALIASABLE:
            return ()
        return tuple(spaces)

    def same_problem(self, ctx: Context, site: Site, detail: Any) -> Any:
        return True  # one finding per union, whichever members a setting gives it

    def message(self, ctx: Context, site: Site, detail: Any) -> str:
        return ("All aliased Refs must have the same memory space (SMEM or TMEM): "
                f"this RefUnion aliases {_describe(detail)}")


def _describe(spaces: tuple[str, ...]) -> str:
    distinct = list(dict.fromkeys(spaces))
    if len(distinct) == 1:
        return f"{distinct[0]} refs only, which cannot be aliased"
    return " with ".join(distinct)
