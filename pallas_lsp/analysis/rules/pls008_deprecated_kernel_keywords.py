"""PLS008: `plgpu.kernel(out_shape=..., scratch_shapes=...)`, the spelling removed in jax 0.12."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from astroid import nodes

from .. import fixes
from ..api import Kind
from ..context import Context
from ..findings import Applicability, Finding, Fix, Severity
from . import examples
from .base import Invalid, Rule
from .kernels import is_mosaic_kernel

RENAMES = {"out_shape": "out_type", "scratch_shapes": "scratch_types"}


@dataclass(frozen=True)
class Use:
    call: nodes.Call  # plgpu.kernel(...) or functools.partial(plgpu.kernel, ...)
    old: tuple[str, ...]  # deprecated keywords written
    both: tuple[str, ...]  # deprecated keywords written together with their new name
    positional: nodes.NodeNG | None  # out_shape given as the second positional argument


class DeprecatedKernelKeywords(Rule):
    """## What it does
    Flags `plgpu.kernel(...)` calls (also `functools.partial(plgpu.kernel, ...)` and the
    decorator forms) that pass `out_shape=` or `scratch_shapes=`, or the output type as a
    second positional argument. `pl.pallas_call` keeps those names and is not concerned.

    ## Why is this bad?
    jax 0.10.2 renamed them `out_type=` / `scratch_types=` (keyword-only) and deprecated the
    old names; jax 0.12 removed them. Code that still uses them, as the Blackwell matmul
    tutorial did, warns on jax 0.10.2 and 0.11 and fails on jax 0.12 with a `TypeError` that
    does not say what to write instead. Passing an old name together with its new name fails
    in every version.

    ## Example
    ```python
    plgpu.kernel(body, out_shape=jax.ShapeDtypeStruct((128, 128), jnp.float32),
                 scratch_shapes=[plgpu.SMEM((128, 64), jnp.float16)])
    ```

    Use instead:
    ```python
    plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32),
                 scratch_types=[plgpu.SMEM((128, 64), jnp.float16)])
    ```

    ## Fix safety
    Renaming the keywords (or naming the positional output type `out_type=`) is safe: jax
    0.10.2 and 0.11 treat both spellings alike, and 0.12 accepts only the new one. When old
    and new names are both given, removing the old one is unsafe.

    ## JAX message
    jax 0.10.2 - 0.11: `DeprecationWarning: The out_shape and scratch_shapes arguments to
    plgpu.kernel are deprecated. Use out_type and scratch_types instead.`; jax 0.12:
    `TypeError: Mesh.__init__() got an unexpected keyword argument 'out_shape'` (or
    `'scratch_shapes'`; for a positional output type `kernel() takes from 0 to 1 positional
    arguments ...`). Both names: `Cannot specify both out_shape and out_type. Use out_type.`
    (ValueError before 0.12).
    """

    code = "PLS008"
    name = "deprecated-kernel-keywords"
    summary = "plgpu.kernel(out_shape=..., scratch_shapes=...): deprecated, removed in jax 0.12"
    jax_message = "The out_shape and scratch_shapes arguments to plgpu.kernel are deprecated."
    severity = Severity.WARNING
    triggers = (b"out_shape", b"scratch_shapes")
    identifiers = frozenset({"kernel"})
    VALID = (examples.PLS008_VALID,)
    INVALID = (Invalid(examples.PLS008_INVALID, fixed=examples.PLS008_VALID),)

    def check(self, ctx: Context) -> Iterator[Finding]:
        for use in _uses(ctx):
            span = ctx.span(use.call.func)
            if span is not None:
                yield Finding(self.code, _message(use), span, Severity.ERROR if use.both else self.severity,
                              fixes=_fixes(ctx, use))


def _uses(ctx: Context) -> Iterator[Use]:
    for call in ctx.flow.sites(Kind.KERNEL, Kind.PARTIAL):
        if not is_mosaic_kernel(ctx, call):
            continue
        # functools.partial(plgpu.kernel, ...) gets its body later: no positional output type
        positional = call.args[1] if len(call.args) == 2 and ctx.flow.api_kind(call) is Kind.KERNEL else None
        written = {kw.arg for kw in call.keywords or ()}
        old = tuple(name for name in RENAMES if name in written)
        if isinstance(positional, nodes.Starred):
            positional = None
        if not old and positional is None:
            continue
        both = tuple(name for name in old if RENAMES[name] in written)
        yield Use(call, old, both, positional)


def _message(use: Use) -> str:
    if use.both:
        name = use.both[0]
        return (f"Cannot specify both {name} and {RENAMES[name]}. Use {RENAMES[name]}. "
                "(a ValueError before jax 0.12, a TypeError from 0.12)")
    spelled = [f"{name}=" for name in use.old] + (["a positional output type"] if use.positional else [])
    instead = [f"{RENAMES[name]}=" for name in use.old] + (["out_type="] if use.positional else [])
    return (f"plgpu.kernel with {' and '.join(spelled)}: deprecated in jax 0.10.2 and 0.11, a TypeError "
            f"from jax 0.12; use {' and '.join(instead)}")


def _fixes(ctx: Context, use: Use) -> tuple[Fix, ...]:
    if use.both:  # old and new name: drop the old one, when there is just one such pair
        edits = fixes.remove_keyword(ctx, use.call, use.both[0]) if len(use.both) == 1 else ()
        return (Fix(f"Remove {use.both[0]}=", Applicability.UNSAFE, edits),) if edits else ()
    edits = tuple(edit for name in use.old for edit in fixes.rename_keyword(ctx, use.call, name, RENAMES[name]))
    if use.positional is not None:
        edits += fixes.insert_before(ctx, use.positional, "out_type=")
    if len(edits) != len(use.old) + (use.positional is not None):
        return ()
    renames = [f"{name}= to {RENAMES[name]}=" for name in use.old]
    title = "Rename " + " and ".join(renames) if renames else "Pass the output type as out_type="
    if renames and use.positional is not None:
        title += ", pass the output type as out_type="
    return (Fix(title, Applicability.SAFE, edits, preferred=True),)
