#!/usr/bin/env bash
# Installs whatever pqscope is missing on a Debian/Ubuntu machine, then returns quickly on every
# later call: the Arm toolchain, build tools, OpenOCD, ser2net, the project's Python venv (.venv)
# with the host tool installed in it, and labgrid's (.venv-labgrid). Safe to run again at any time.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.venv"
labgrid_venv="$root/.venv-labgrid"
labgrid_pin="labgrid==26.0.1"
# Several pqscope commands started at once must not install into the same venv side by side:
# the first installs, the others wait for it and then find everything in place.
exec 9<"${BASH_SOURCE[0]}"
flock 9

say() { echo "pqscope setup: $*" >&2; }

missing=()
command -v arm-none-eabi-gcc >/dev/null || missing+=(gcc-arm-none-eabi)
[ -n "$(find /usr/lib/arm-none-eabi/newlib -name libc_nano.a 2>/dev/null | head -1)" ] \
  || missing+=(libnewlib-arm-none-eabi)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v make >/dev/null || missing+=(make)
command -v cc >/dev/null || missing+=(gcc)
command -v git >/dev/null || missing+=(git)
command -v cmake >/dev/null || missing+=(cmake)
command -v openocd >/dev/null || missing+=(openocd)
# The fuzzers (tests/fuzz): clang with its libFuzzer and sanitizer runtimes.
command -v clang >/dev/null || missing+=(clang)
[ -n "$(find /usr/lib/llvm-*/lib/clang -name 'libclang_rt.fuzzer-x86_64.a' 2>/dev/null | head -1)" ] \
  || missing+=(libclang-rt-dev)
# The images' other compilers (--compiler, firmware/cmake/compilers): clang (above) and GCC 11.3.
command -v arm-linux-gnueabihf-gcc-11 >/dev/null || missing+=(gcc-11-arm-linux-gnueabihf)
python3 -c "import venv, ensurepip" 2>/dev/null || missing+=(python3-venv)
# labgrid's exporter serves serial ports through ser2net (the farm test exports the virtual board's).
command -v ser2net >/dev/null || [ -x /usr/sbin/ser2net ] || missing+=(ser2net)

if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    say "missing ${missing[*]} and no apt-get here: install them with your package manager"; exit 1
  fi
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  say "installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# labgrid (client, coordinator, exporter) in a venv of its own: it brings its own fork of pyserial.
# Installed beside the main venv's packages (both mostly wait on downloads and unpacking).
labgrid_stamp="$labgrid_venv/.pqscope-installed"
labgrid_install=""
if [ "$(cat "$labgrid_stamp" 2>/dev/null)" != "$labgrid_pin" ]; then
  say "installing $labgrid_pin into .venv-labgrid"
  (python3 -m venv "$labgrid_venv" && "$labgrid_venv/bin/python" -m pip install -q "$labgrid_pin" \
    && echo "$labgrid_pin" > "$labgrid_stamp") &
  labgrid_install=$!
fi

if [ ! -x "$venv/bin/python" ]; then
  say "creating the Python environment in .venv"
  python3 -m venv "$venv"
fi

# Reinstall the host tool only when its declared dependencies change.
stamp="$venv/.pqscope-installed"
want=$(cat "$root/host-tools/pyproject.toml" "$root/host-tools/setup.sh" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  say "installing the host tool and its Python dependencies into .venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  # No byte-compiling of every installed module (a third of the time): Python compiles and caches
  # what it imports (host-tools/pqscope and tests/run-all let it cache, whatever the environment).
  "$venv/bin/python" -m pip install -q --no-compile -e "$root/host-tools[test]"
  # CMake >= 3.25 is required; older distributions get it from PyPI inside the venv.
  cmake_version=$(cmake --version | awk 'NR == 1 {print $3}')
  if [ "$(printf '%s\n' 3.25 "$cmake_version" | sort -V | head -1)" != 3.25 ]; then
    "$venv/bin/python" -m pip install -q "cmake>=3.25"
  fi
  echo "$want" > "$stamp"
fi

if [ -n "$labgrid_install" ] && ! wait "$labgrid_install"; then
  say "installing $labgrid_pin into .venv-labgrid failed"; exit 1
fi
