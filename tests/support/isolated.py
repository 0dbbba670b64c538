"""A Python process in a fresh virtual environment that sees the libraries installed beside the tests but none of our
packages, except from the folders a test names.

The environment is made once per test process (``python -m venv --without-pip`` in a temporary folder, removed at
exit). Its site-packages holds one ``.pth`` file naming the test interpreter's site-packages folders: a ``.pth`` line
that is a folder puts that folder on the path without running the ``.pth`` files inside it, and the editable
install of the checkout is such a file (its finder answers for our packages). ``-I`` leaves out the working directory,
``PYTHONPATH`` and the user's site-packages. So a package of ours imports there only from a folder the test puts
first.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import site
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

#: Before the test's code: the named folders first (read from and removed off ``sys.argv``).
_PRELUDE = "import json, sys; sys.path[:0] = json.loads(sys.argv.pop(1))\n"
#: The ``.pth`` file of the fresh environment that names the libraries' folders.
LIBRARIES_PTH = "libraries.pth"


@functools.cache
def fresh_venv() -> Path:
    """The Python of a fresh virtual environment (no pip) whose only addition is :data:`LIBRARIES_PTH`."""
    root = Path(tempfile.mkdtemp(prefix="biodivergence-venv-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, capture_output=True)
    python = root / "bin" / "python"
    purelib = subprocess.run([str(python), "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / LIBRARIES_PTH).write_text("".join(f"{p}\n" for p in site.getsitepackages()), encoding="utf-8")
    return python


def isolated_python(code: str, *args: str, first: Sequence[str | Path] = (), cwd: str | Path | None = None
                    ) -> subprocess.CompletedProcess:
    """Run ``code`` in the fresh environment (:func:`fresh_venv`) with ``args`` as ``sys.argv[1:]``, ``first``
    ahead of everything else on the path."""
    return subprocess.run([str(fresh_venv()), "-I", "-c", _PRELUDE + code, json.dumps([str(p) for p in first]),
                           *args], cwd=cwd, capture_output=True, text=True, check=False)
