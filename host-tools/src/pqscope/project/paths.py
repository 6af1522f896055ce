"""Where the pqscope repository is."""

import os
from pathlib import Path

from .errors import PqscopeError


def repo_root() -> Path:
    """The repository root: $PQSCOPE_ROOT, else the checkout this (editable) package lives in."""
    configured = os.environ.get("PQSCOPE_ROOT")
    # host-tools/src/pqscope/project/paths.py -> parents[4] is the repository root.
    root = Path(configured) if configured else Path(__file__).resolve().parents[4]
    if not (root / "boards").is_dir():
        raise PqscopeError(f"{root} is not a pqscope repository (no boards/); set PQSCOPE_ROOT")
    return root
