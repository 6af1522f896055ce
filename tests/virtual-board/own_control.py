"""The udiv control as a library's own implementation directory (--impl-dir), for the tests of
pqscope in a library's CI (test_ci_virtual.py, test_ci_recipe.py)."""

from pathlib import Path

from conftest import ROOT

CONTROLS = ROOT / "firmware/schemes/controls"
SIGNING = "                          const uint8_t *sk)\n{\n"  # crypto_sign_signature's body opens here


def own_control(path: Path, leaky: bool, slower: bool = False) -> Path:
    """The udiv control as a library's own directory (--impl-dir); `slower`: its signing first
    counts to 1,000."""
    path.mkdir()
    (path / "api.h").write_text((CONTROLS / "api.h").read_text())
    source = (CONTROLS / "control.c").read_text()
    assert source.count(SIGNING) == 1
    if slower:
        source = source.replace(SIGNING, SIGNING + "  for (volatile int i = 0; i < 1000; i++) {}\n")
    (path / "control.c").write_text(f"#define CONTROL_UDIV\n#define CONTROL_LEAKY {int(leaky)}\n{source}")
    return path
