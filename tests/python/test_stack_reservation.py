"""A measured stack above the stack reserved for an image (--stack-bytes, or the catalogue's
stack_bytes), which the "fits" check took for its need (issue #55): a warning; an error where the
image fits the board's RAM only with the reservation, not with the stack it used. An --impl-dir
image whose key pool of two key pairs does not fit beside the stack: one key pair for a run."""

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from fakedevice import fake_stack
from pqscope.cli import cli
from pqscope.link.protocol import Op
from pqscope.project.boards import get_board
from pqscope.project.build import PLAIN, BuildError, ImageSize, check_stack
from pqscope.project.catalogue import find_implementation, implementation_from_dir, load_catalogue
from pqscope.targets import target as target_module
from pqscope.targets.kinds import open_target

DEEPEST = max(fake_stack(op) for op in Op)  # the fake device's stack use


def own(tmp_path: Path) -> Path:
    directory = tmp_path / "crypto_sign/my-scheme/opt"
    directory.mkdir(parents=True)
    (directory / "api.h").write_text("#define CRYPTO_BYTES 1\n")
    return directory


def test_a_stack_above_your_own_reservation_is_a_warning(fake_repo, fake_toolchain, tmp_path):
    result = CliRunner().invoke(cli, ["run", "--impl-dir", str(own(tmp_path)), "--stack-bytes", "1024", "-n", "1",
                                      "--seed", "01", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.stderr
    assert (f"warning: opt.elf used {DEEPEST:,} bytes of stack, more than the 1,024 reserved for it when it was "
            "checked to fit virtual: raise --stack-bytes (now 1,024)") in " ".join(result.stderr.split())


def test_a_stack_within_the_reservation_says_nothing(fake_repo, fake_toolchain, tmp_path):
    result = CliRunner().invoke(cli, ["run", "--impl-dir", str(own(tmp_path)), "--stack-bytes", str(DEEPEST), "-n",
                                      "1", "--seed", "01", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.stderr
    assert "warning" not in result.stderr


def test_a_catalogue_row_s_warning_names_its_stack_bytes(fake_repo):
    row = find_implementation(load_catalogue(fake_repo), "ml-dsa-44", "m4f")
    warning = check_stack(get_board(fake_repo, "virtual"), Path("m4f.elf"), ImageSize(1000, 100, 1000), row,
                          row.stack_bytes + 1)
    assert warning.endswith(f"raise the catalogue's stack_bytes of ml-dsa-44/m4f (now {row.stack_bytes:,})")


def test_a_stack_with_which_the_image_does_not_fit_is_an_error(fake_repo, tmp_path):
    board = get_board(fake_repo, "virtual")
    implementation = implementation_from_dir(own(tmp_path), stack_bytes=4096)
    size = ImageSize(text=1000, data=100, bss=board.ram_bytes - 100 - 4096)  # fits with exactly the reservation
    assert check_stack(board, Path("opt.elf"), size, implementation, 4096) is None
    with pytest.raises(BuildError, match=f"opt.elf used 4,097 bytes of stack: with its data and bss that is "
                                         f"{board.ram_bytes + 1:,} bytes of RAM, board virtual has {board.ram_bytes:,}; "
                                         r"it fit only by --stack-bytes \(now 4,096\), which is too low"):
        check_stack(board, Path("opt.elf"), size, implementation, 4097)


def test_an_image_whose_two_key_pairs_do_not_fit_has_one_for_a_run_and_a_constant_time_test_is_told_why(
        fake_repo, tmp_path, monkeypatch):
    built = []

    def build(root, board, directory, scheme, impl, stack_bytes, variant, key_slots=None):
        built.append(key_slots)
        if key_slots is None:
            raise BuildError(f"image.{scheme}.{impl}: image too big for RAM: its static data plus the stack it needs")
        return tmp_path / "opt.elf"

    monkeypatch.setattr(target_module, "build_impl_dir", build)
    target = open_target(fake_repo, get_board(fake_repo, "virtual"))
    implementation = implementation_from_dir(own(tmp_path), stack_bytes=4096)
    console = Console(file=io.StringIO(), width=200)
    assert target._impl_dir_image(implementation, PLAIN, 1, console) == tmp_path / "opt.elf"
    assert built == [None, 1]
    assert "opt.elf: its key pool holds one key pair, as two do not fit beside its stack" in console.file.getvalue()
    with pytest.raises(BuildError, match=r"image too big for RAM: its static data plus the stack it needs, with the "
                                         r"two key pairs a constant-time test holds at once \(with one, as pqscope run "
                                         r"holds, it fits\)"):
        target._impl_dir_image(implementation, PLAIN, 2, console)
    assert built == [None, 1, None, 1]


def test_an_image_that_fails_to_build_otherwise_is_not_built_again(fake_repo, tmp_path, monkeypatch):
    built = []

    def build(root, board, directory, scheme, impl, stack_bytes, variant, key_slots=None):
        built.append(key_slots)
        raise BuildError(f"image.{scheme}.{impl}: image too big for flash: its code and constants exceed the flash")

    monkeypatch.setattr(target_module, "build_impl_dir", build)
    target = open_target(fake_repo, get_board(fake_repo, "virtual"))
    with pytest.raises(BuildError, match="too big for flash"):
        target._impl_dir_image(implementation_from_dir(own(tmp_path), stack_bytes=4096), PLAIN, 1,
                               Console(file=io.StringIO()))
    assert built == [None]
