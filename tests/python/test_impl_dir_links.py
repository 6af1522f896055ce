"""Your own implementation (--impl-dir) as pqm4 lays it out (issue #57): files shared between
parameter sets by relative links are built through the links; a folder taken out of its pqm4 tree,
whose links needed by the build lead nowhere, and a folder named as a catalogue row are each refused
in one line before CMake runs. The build of a real pqm4 folder is
tests/virtual-board/test_impl_dir_pqm4.py's."""

import os
from pathlib import Path

from click.testing import CliRunner

from pqscope.cli import cli


def _parameter_sets(tmp_path: Path, shared: tuple[str, ...]) -> Path:
    """crypto_sign/set-1/m4 with api.h and sign.c, and crypto_sign/set-2/m4 whose `shared` files
    are relative links to set-1's (as pqm4's mayo2/m4f/mayo.c -> ../../mayo1/m4f/mayo.c); returns set-2's."""
    first, second = tmp_path / "crypto_sign/set-1/m4", tmp_path / "crypto_sign/set-2/m4"
    first.mkdir(parents=True)
    second.mkdir(parents=True)
    (first / "api.h").write_text("#define CRYPTO_BYTES 1\n")
    (first / "sign.c").write_text('#include "api.h"\n')
    (second / "api.h").write_text("#define CRYPTO_BYTES 2\n")
    for name in shared:
        (second / name).symlink_to(f"../../set-1/m4/{name}")
    return second


def _build(own: Path, *names: str):
    return CliRunner().invoke(cli, ["build", "--board", "stm32f4discovery", "--impl-dir", str(own), *names])


def test_a_folder_whose_files_are_relative_links_is_built_where_it_is(fake_repo, fake_toolchain, tmp_path):
    log = fake_toolchain()
    own = _parameter_sets(tmp_path, ("sign.c", "helper.h"))  # helper.h leads nowhere, and nothing needs it
    result = _build(own)
    assert result.exit_code == 0, result.output
    configure, build = log.read_text().splitlines()
    assert f"-DPQSCOPE_IMPL_DIR={own}" in configure.split()
    assert build == "--build build/stm32f4discovery.impl-dir --target image.set-2.m4"


def test_a_compiled_file_linked_out_of_the_tree_is_refused_naming_the_link(fake_repo, fake_toolchain, tmp_path):
    log = fake_toolchain()
    own = _parameter_sets(tmp_path, ("sign.c", "util.S"))
    os.remove(tmp_path / "crypto_sign/set-1/m4/sign.c")  # set-2 taken without set-1's files
    result = _build(own)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"Error: {own / 'sign.c'} links to ../../set-1/m4/sign.c, which is missing (and 1 more such links): pqm4 "
        "shares files between parameter sets by relative links, so give the folder inside its whole pqm4 checkout "
        "(with its mupq submodule)"]
    assert log.read_text() == ""


def test_an_api_h_linked_out_of_the_tree_is_named_as_such(fake_repo, fake_toolchain, tmp_path):
    fake_toolchain()
    own = _parameter_sets(tmp_path, ())
    (own / "api.h").unlink()
    (own / "api.h").symlink_to("../../set-0/m4/api.h")
    result = _build(own)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {own / 'api.h'} links to ../../set-0/m4/api.h, which is missing: ")


def test_a_folder_named_as_a_catalogue_row_is_refused_until_named_apart(fake_repo, fake_toolchain, tmp_path):
    log = fake_toolchain()
    own = tmp_path / "crypto_sign/ml-dsa-44/m4f"  # the fake catalogue's one row
    own.mkdir(parents=True)
    (own / "api.h").write_text("#define CRYPTO_BYTES 1\n")
    result = _build(own)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"Error: {own} is named ml-dsa-44/m4f, as a catalogue row is: name it apart with --scheme or --impl (or "
        "measure the row with --scheme ml-dsa-44 --impl m4f, without --impl-dir)"]
    assert log.read_text() == ""
    result = _build(own, "--scheme", "my-ml-dsa-44")
    assert result.exit_code == 0, result.output
    assert log.read_text().splitlines()[-1] == "--build build/stm32f4discovery.impl-dir --target image.my-ml-dsa-44.m4f"
