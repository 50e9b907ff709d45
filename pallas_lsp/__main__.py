"""`python -m pallas_lsp` starts the language server."""

import sys

from pallas_lsp.server import main

sys.exit(main())
