"""A Python process that sees only the interpreter's libraries and the folders a test names.

``-I -S``: neither the checkout (the working directory, ``PYTHONPATH``) nor any ``.pth`` file is on the path, and the
editable install's finder is such a file; the site-packages folders are then appended as plain folders, which runs
none of their ``.pth`` files. So a package of ours imports there only from a folder the test puts first.
"""

from __future__ import annotations

import json
import site
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

#: Before the test's code: the named folders first, the libraries last (read from and removed off ``sys.argv``).
_PRELUDE = "import json, sys; sys.path[:0] = json.loads(sys.argv.pop(1)); sys.path += json.loads(sys.argv.pop(1))\n"


def isolated_python(code: str, *args: str, first: Sequence[str | Path] = (), cwd: str | Path | None = None
                    ) -> subprocess.CompletedProcess:
    """Run ``code`` with ``args`` as ``sys.argv[1:]``, ``first`` ahead of the libraries on the path."""
    return subprocess.run([sys.executable, "-I", "-S", "-c", _PRELUDE + code, json.dumps([str(p) for p in first]),
                           json.dumps(site.getsitepackages()), *args],
                          cwd=cwd, capture_output=True, text=True, check=False)
