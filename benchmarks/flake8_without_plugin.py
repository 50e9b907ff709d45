"""flake8 with the pallas-lsp plugin hidden from plugin discovery: the baseline for measuring
the plugin's overhead in the same environment.

    python benchmarks/flake8_without_plugin.py [flake8 arguments]
"""

import sys

from flake8.main import cli
from flake8.plugins import finder

_find = finder._find_importlib_plugins


def _without_pallas():
    for plugin in _find():
        if plugin.package != "pallas-lsp":
            yield plugin


finder._find_importlib_plugins = _without_pallas

if __name__ == "__main__":
    sys.exit(cli.main())
