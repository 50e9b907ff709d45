"""Fuzzing the core, the flake8 plugin, the CLI and the server with broken versions of real
kernels. `python tests/fuzz/run.py` is the long run; `tests/test_fuzz.py` a short one."""
