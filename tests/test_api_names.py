"""The names the Mosaic GPU API binds (`api.MOSAIC_GPU_NAMES`, recorded from the supported jax
releases): every public name the installed jax's module answers to is among them, so that no
version shim is taken for a missing name that this release has."""

import warnings

import pytest

from pallas_lsp.analysis import api


def test_every_public_name_of_the_installed_module_is_recorded():
    plgpu = pytest.importorskip("jax.experimental.pallas.mosaic_gpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        names = {name for name in dir(plgpu) if not name.startswith("_")}
        names |= {name for name in getattr(plgpu, "_deprecations", {}) if hasattr(plgpu, name)}
    assert sorted(names - api.MOSAIC_GPU_NAMES) == []
    assert not api.surely_missing(api.MOSAIC_GPU, "tcgen05_mma")
    assert api.surely_missing(api.MOSAIC_GPU, "NoSuchName")
    assert not api.surely_missing(api.PALLAS, "NoSuchName")  # (a package: its submodules are not listed)
