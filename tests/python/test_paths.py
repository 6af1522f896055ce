"""Where the repository is: the checkout the package lives in, unless PQSCOPE_ROOT says otherwise
(the commands run from a checkout set nothing, so the default must find it wherever the package's
modules sit)."""

from pathlib import Path

import pytest

from pqscope.project.errors import PqscopeError
from pqscope.project.paths import repo_root

CHECKOUT = Path(__file__).resolve().parents[2]


def test_without_pqscope_root_the_checkout_the_package_lives_in_is_the_root(monkeypatch):
    monkeypatch.delenv("PQSCOPE_ROOT", raising=False)
    assert repo_root() == CHECKOUT


def test_pqscope_root_names_another_checkout(monkeypatch, tmp_path):
    (tmp_path / "boards").mkdir()
    monkeypatch.setenv("PQSCOPE_ROOT", str(tmp_path))
    assert repo_root() == tmp_path


def test_a_root_without_boards_is_refused_naming_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PQSCOPE_ROOT", str(tmp_path))
    with pytest.raises(PqscopeError, match=f"{tmp_path} is not a pqscope repository"):
        repo_root()
