"""Where the tests find the repository and the shared data, named once so a test's folder depth does not matter."""

from __future__ import annotations

from pathlib import Path

#: The repository root (this file is ``tests/support/repo_paths.py``).
REPO = Path(__file__).resolve().parents[2]
#: The real data sets beside the checkout (``../shared/data``); records are read from here, never copied.
SHARED_DATA = REPO.parent / "shared" / "data"
