"""``python -m tangent_ckpt``: the command line (see tangent_ckpt.cli)."""

import sys

from tangent_ckpt.cli import main

sys.exit(main())
