"""What JAX's array operations keep of an array's shape and dtype: `x.reshape(...)`,
`jax.lax.collapse(x, ...)`, `x[...]`, `jnp.squeeze(x)`, `x.T` give an array of the same dtype,
whose shape follows from the one before where that is known exactly (a kernel's TMEM often
takes both from an input reshaped first: `x = jax.lax.collapse(x, 0, -1); dtype = x.dtype`)."""

from __future__ import annotations

from typing import Any

from .. import api
from . import objects as o


def derived(array: api.ShapeDtype, shape: Any) -> api.ShapeDtype:
    """An array made from `array`: its dtype, and `shape` where every dimension is known."""
    exact = tuple(shape) if isinstance(shape, tuple) and all(type(dim) is int for dim in shape) else None
    return api.ShapeDtype(api.ARRAY, exact, array.dtype)


def reshaped(array: api.ShapeDtype, dims: tuple[Any, ...]) -> api.ShapeDtype:
    """`x.reshape(*dims)`: JAX's `_canonicalize_reshape` (one -1 takes what the others leave)."""
    if array.shape is not None:
        return derived(array, o.view_shape(array.shape, o.Reshape(dims)))
    return derived(array, dims if -1 not in dims else None)


def collapsed(array: api.ShapeDtype, start: Any, stop: Any) -> api.ShapeDtype:
    """`jax.lax.collapse(x, start, stop)`: `shape[start:stop]` made one dimension, as JAX's
    `collapse` slices it (stop None: to the end)."""
    shape = array.shape
    if shape is None or type(start) is not int or (stop is not None and type(stop) is not int):
        return derived(array, None)
    size = 1
    for dim in shape[start:stop]:
        size *= dim
    rest = shape[stop:] if stop is not None else ()
    return derived(array, (*shape[:start], size, *rest))


def indexed(array: api.ShapeDtype, key: Any) -> api.ShapeDtype:
    """`x[key]`: NumPy's basic indexing (integers, slices, `...`); other keys keep the dtype."""
    return derived(array, o.view_shape(array.shape, key) if array.shape is not None else None)


def squeezed(array: api.ShapeDtype, axis: Any) -> api.ShapeDtype:
    """`jnp.squeeze(x, axis)`: the dimensions of size 1 (those named) taken away."""
    shape = array.shape
    if shape is None:
        return derived(array, None)
    if axis is None:
        return derived(array, tuple(dim for dim in shape if dim != 1))
    axes = axis if isinstance(axis, tuple) else (axis,)
    if not all(type(item) is int and -len(shape) <= item < len(shape) for item in axes):
        return derived(array, None)
    dropped = {item % len(shape) for item in axes}
    if any(shape[item] != 1 for item in dropped):
        return derived(array, None)  # (JAX's own error)
    return derived(array, tuple(dim for position, dim in enumerate(shape) if position not in dropped))


def transposed(array: api.ShapeDtype) -> api.ShapeDtype:
    """`x.T`: the dimensions reversed."""
    return derived(array, tuple(reversed(array.shape)) if array.shape is not None else None)
