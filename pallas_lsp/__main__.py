"""`python -m pallas_lsp ...` is `pallas-lint ...`."""

import sys

from .cli import main

sys.exit(main())
