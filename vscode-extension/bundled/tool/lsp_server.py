"""Start the pallas language server for the VS Code extension (LSP over stdio).

The extension runs ``<interpreter> bundled/tool/lsp_server.py [pallas.args...]``.
``bundled/libs`` holds pallas-lsp and its pure-Python dependencies (``npm run bundle``).
LS_IMPORT_STRATEGY=useBundled (the default) puts it first on sys.path; fromEnvironment imports
the pallas-lsp installed in the interpreter's environment and falls back to the bundle only when
that import fails.
"""

import os
import sys

if sys.version_info < (3, 10):
    sys.stderr.write(
        "pallas: the server needs Python 3.10 or newer; %s is Python %d.%d.\n"
        % (sys.executable, sys.version_info[0], sys.version_info[1])
    )
    sys.exit(2)

LIBS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs")
STRATEGY = os.environ.get("LS_IMPORT_STRATEGY", "useBundled")

def _use_bundle():
    sys.path.insert(0, LIBS)
    for name in [m for m in sys.modules if m == "pallas_lsp" or m.startswith("pallas_lsp.")]:
        del sys.modules[name]


if STRATEGY == "fromEnvironment":
    # The environment's pallas-lsp (and its pygls); the bundle only when that cannot be imported.
    try:
        from pallas_lsp.server import main
    except ImportError as e:
        sys.stderr.write("pallas: no usable pallas-lsp in this environment (%s); using the bundled one\n" % e)
        _use_bundle()
        from pallas_lsp.server import main
else:
    _use_bundle()
    from pallas_lsp.server import main

if __name__ == "__main__":
    import pallas_lsp

    sys.stderr.write(
        "pallas: server from %s (importStrategy %s, Python %s)\n"
        % (os.path.dirname(os.path.abspath(pallas_lsp.__file__)), STRATEGY, sys.version.split()[0])
    )
    sys.exit(main(sys.argv[1:]))
