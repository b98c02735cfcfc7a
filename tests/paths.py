"""Where the tests find the repository and the shared datasets (tests skip without the latter)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
SHARED = REPO.parent / "shared" / "data"
