"""``python -m biodivergence_cli COMMAND …`` runs the ``biodivergence`` command (e.g. under ``accelerate launch``)."""

import sys

from .main import main

sys.exit(main())
