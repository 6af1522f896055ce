"""Sessions with catalogue images on the virtual board, through the host tool's own modules."""

import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from pqscope.project.boards import get_board
from pqscope.project.build import build_image
from pqscope.project.console import stderr
from pqscope.targets.target import Link
from pqscope.targets.virtual import VirtualTarget
import pytest_session  # noqa: E402

# Each session a temporary directory of its own (see the module).
pytest_configure = pytest_session.pytest_configure
pytest_sessionfinish = pytest_session.pytest_sessionfinish

ROOT = Path(__file__).resolve().parents[2]
IMAGES = Path(os.environ.get("PQSCOPE_IMAGES", ROOT / "build/stm32f4discovery/images"))
EMULATOR = Path(os.environ.get("PQSCOPE_VBOARD_EXE", ROOT / "build/host/boards/virtual/emulator/pqscope-vboard"))


def catalogue_rows() -> list[dict]:
    return json.loads((ROOT / "firmware/schemes/catalogue.json").read_text())["implementations"]


def discovery_rows() -> list[dict]:
    """The rows the Discovery's images hold: status "ok" on it (a row may not fit it: MAYO, UOV)."""
    return [row for row in catalogue_rows() if row.get("boards", {}).get("stm32f4discovery", row["status"]) == "ok"]


def image(scheme: str, impl: str) -> Path:
    """The image of (scheme, impl), built first where it is not: a slow row's is not part of the
    tree's "all" (firmware/cmake/catalogue.cmake)."""
    path = IMAGES / scheme / f"{impl}.elf"
    return path if path.exists() else build_image(ROOT, get_board(ROOT, "stm32f4discovery"), scheme, impl)


@pytest.fixture
def image_session(tmp_path):
    """Opens a DeviceSession with the image of (scheme, impl) running on the virtual board."""
    with contextlib.ExitStack() as stack:
        def open_session(scheme: str, impl: str):
            # No timeout: the virtual board awaits a slow row's records (minutes of signing) as long as it runs.
            target = VirtualTarget(ROOT, get_board(ROOT, "virtual"), Link(), emulator=EMULATOR)
            stats_dir = Path(tempfile.mkdtemp(prefix=f"{scheme}.{impl}.", dir=tmp_path))  # a board of its own each
            connection = stack.enter_context(target.connect(image(scheme, impl), stderr(),
                                                            stats_dir=stats_dir))
            return connection.session

        yield open_session
