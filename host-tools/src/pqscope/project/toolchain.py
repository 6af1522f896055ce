"""Which compiler and optimisation level make an image's C, the harness's included: constant-time
C is only as constant-time as the code a compiler makes of it. The default, GCC 12 at the
catalogue's own flags (pqm4's -O3), builds in the tree of the board's CMake preset; every other
toolchain in a tree of its own beside it (build/<preset>.<compiler>.<level>), configured through
the toolchain file's PQSCOPE_COMPILER and PQSCOPE_OPT (firmware/cmake/toolchain-arm-none-eabi.cmake)."""

from dataclasses import dataclass

from .errors import UnknownNameError, match_name

# The toolchain file's compilers: Debian's arm-none-eabi-gcc 12, GCC 11.3 (pqm4's) and clang/LLVM.
COMPILERS = ("gcc12", "gcc11", "clang")
CATALOGUE_OPT = "catalogue"  # the catalogue's own flags: -O3, as pqm4 and PQClean build
OPT_LEVELS = (CATALOGUE_OPT, "-O0", "-Os", "-O2", "-O3")


@dataclass(frozen=True)
class Toolchain:
    compiler: str = COMPILERS[0]
    opt: str = CATALOGUE_OPT

    def __post_init__(self):
        if self.compiler not in COMPILERS:
            raise UnknownNameError("compiler", self.compiler, COMPILERS)
        if self.opt not in OPT_LEVELS:
            raise UnknownNameError("optimisation level", self.opt, OPT_LEVELS)

    @classmethod
    def parse(cls, compiler: str | None, opt: str | None) -> "Toolchain":
        """From command-line values, in any case; a level may be given with or without its dash (Os, -Os)."""
        if opt is not None and opt.lower() != CATALOGUE_OPT and not opt.startswith("-"):
            opt = f"-{opt}"
        return cls(match_name("compiler", compiler or COMPILERS[0], COMPILERS),
                   match_name("optimisation level", opt or CATALOGUE_OPT, OPT_LEVELS))

    @property
    def flags(self) -> str:
        """The level the compiler is given: the catalogue's own is CMake's Release level, -O3."""
        return "-O3" if self.opt == CATALOGUE_OPT else self.opt

    @property
    def is_default(self) -> bool:
        return self == DEFAULT_TOOLCHAIN

    @property
    def slug(self) -> str:
        """A name for files: clang.Os, gcc12.catalogue."""
        return f"{self.compiler}.{self.opt.lstrip('-')}"

    def tree(self, preset: str) -> str:
        """The build tree's name under build/."""
        return preset if self.is_default else f"{preset}.{self.slug}"

    def cmake_options(self) -> list[str]:
        return [f"-DPQSCOPE_COMPILER={self.compiler}", f"-DPQSCOPE_OPT={'' if self.opt == CATALOGUE_OPT else self.opt}"]

    @property
    def label(self) -> str:
        return f"{self.compiler} {self.opt}"

    def to_json(self) -> dict:
        return {"compiler": self.compiler, "opt": self.opt}

    @classmethod
    def from_json(cls, data: dict | None) -> "Toolchain":
        """From a run's metadata (absent in runs before toolchains: the default)."""
        return cls(**data) if data else DEFAULT_TOOLCHAIN


DEFAULT_TOOLCHAIN = Toolchain()


def built_with(toolchain: dict | None, build_info: dict | None) -> dict:
    """What a run's image was built with, for its documents: the toolchain (run metadata) and the
    tree's compiler version and C flags (its build-info.json, kept in the metadata)."""
    return {**Toolchain.from_json(toolchain).to_json(), "compiler_version": (build_info or {}).get("compiler"),
            "c_flags": (build_info or {}).get("c_flags")}


def built_with_text(built: dict | None) -> str:
    """"clang at -Os (Clang 14.0.6)"; documents from before toolchains were recorded: not recorded."""
    if not built:
        return "not recorded"
    version = f" ({built['compiler_version']})" if built.get("compiler_version") else ""
    return f"{built['compiler']} at {built['opt']}{version}"
