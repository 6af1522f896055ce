"""Reading the repository's JSON metadata files with errors that name the file."""

import json
from pathlib import Path
from typing import Any

from .errors import PqscopeError


def load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise PqscopeError(f"{path} is missing") from None
    except json.JSONDecodeError as error:
        raise PqscopeError(f"{path} is not valid JSON: {error}") from None


def require(data: dict, key: str, path: Path) -> Any:
    try:
        return data[key]
    except (KeyError, TypeError):
        raise PqscopeError(f"{path} lacks '{key}'") from None
