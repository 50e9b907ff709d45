"""flake8 with the pallas-lsp plugin, printing the plugin's own CPU time to stderr: its import
and its checker's runs (for row 2 of `run.py`: on a shared machine the difference of two
whole flake8 processes moves by more than the plugin costs once its results are cached).

    python benchmarks/flake8_plugin_time.py [flake8 arguments]
"""

import sys
import time

from flake8.main import cli  # what flake8 imports before its plugins: not ours to count

started = time.process_time()
import flake8_pallas  # noqa: E402 - timed: flake8 finds it imported

spent = [time.process_time() - started]
_run = flake8_pallas.PallasChecker.run


def _timed_run(self):
    began = time.process_time()
    found = list(_run(self))
    spent[0] += time.process_time() - began
    return iter(found)


flake8_pallas.PallasChecker.run = _timed_run

if __name__ == "__main__":
    try:
        cli.main()
    finally:
        sys.stderr.write(f"PLUGIN_CPU={spent[0]:.4f} PROCESS_CPU={time.process_time():.4f}\n")
