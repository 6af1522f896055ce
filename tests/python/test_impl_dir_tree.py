"""Bring-your-own builds and the board's build tree (issue #55): a directory is configured only in
the tree of its own (build/<tree>.impl-dir), and a board tree that an earlier, killed pqscope left
naming a directory that is gone since is configured without it before it builds. The kill itself,
with CMake, is tests/virtual-board/test_impl_dir_killed.py's."""

from click.testing import CliRunner

from pqscope.cli import cli

BUILD = ("build", "--board", "stm32f4discovery", "--scheme", "ml-dsa-44", "--impl", "m4f")
CONFIGURE = "--preset stm32f4discovery -B build/stm32f4discovery -DPQSCOPE_COMPILER=gcc12 -DPQSCOPE_OPT="


def _configured_with(fake_repo, impl_dir: str) -> None:
    tree = fake_repo / "build/stm32f4discovery"
    tree.mkdir(parents=True)
    (tree / "CMakeCache.txt").write_text(f"CMAKE_BUILD_TYPE:STRING=Release\nPQSCOPE_IMPL_DIR:PATH={impl_dir}\n")
    (tree / "build.ninja").write_text("")


def test_a_board_tree_left_naming_a_deleted_directory_is_configured_without_it(fake_repo, fake_toolchain, tmp_path):
    log = fake_toolchain()
    _configured_with(fake_repo, str(tmp_path / "deleted/crypto_sign/toy/mine"))
    result = CliRunner().invoke(cli, list(BUILD))
    assert result.exit_code == 0, result.stderr
    assert log.read_text().splitlines() == [f"{CONFIGURE} -DPQSCOPE_IMPL_DIR=",
                                            "--build build/stm32f4discovery --target image.ml-dsa-44.m4f"]


def test_a_board_tree_configured_with_a_directory_that_is_there_is_left_as_it_is(fake_repo, fake_toolchain, tmp_path):
    log = fake_toolchain()
    (tmp_path / "api.h").write_text("#define CRYPTO_BYTES 1\n")
    _configured_with(fake_repo, str(tmp_path))  # as `cmake -DPQSCOPE_IMPL_DIR=...` by hand makes it
    result = CliRunner().invoke(cli, list(BUILD))
    assert result.exit_code == 0, result.stderr
    assert log.read_text().splitlines() == ["--build build/stm32f4discovery --target image.ml-dsa-44.m4f"]


def test_builds_of_two_directories_configure_only_their_own_tree(fake_repo, fake_toolchain, tmp_path):
    log = fake_toolchain()
    for name in ("first", "second"):
        own = tmp_path / "crypto_sign/toy" / name
        own.mkdir(parents=True)
        (own / "api.h").write_text("#define CRYPTO_BYTES 1\n")
        result = CliRunner().invoke(cli, ["build", "--board", "stm32f4discovery", "--impl-dir", str(own)])
        assert result.exit_code == 0, result.stderr
    calls = [call.split() for call in log.read_text().splitlines()]
    trees = [call[call.index("-B" if "-B" in call else "--build") + 1] for call in calls]
    assert trees == ["build/stm32f4discovery.impl-dir"] * 4  # configured and built, for each directory
    assert [f"-DPQSCOPE_IMPL_DIR={tmp_path / 'crypto_sign/toy' / name}" in calls[index]
            for index, name in ((0, "first"), (2, "second"))] == [True, True]
