"""pallas-lsp: static checks for JAX Pallas Mosaic GPU kernels (tcgen05 MMAs and Tensor Memory)."""

__version__ = "0.1.0"
