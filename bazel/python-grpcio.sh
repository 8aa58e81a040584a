#!/usr/bin/env bash
# Builds gRPC's Python package (grpcio, the version of the installed
# libgrpc) on the system's shared gRPC core, so that Python channels run on
# libgrpc.so.29 and reach the LB policies registered into it (aperture):
#  - source: the Debian gRPC source that bazel/setup.sh caches (runs
#    setup.sh first when it is not cached yet); the cached tree is read, never
#    changed: setup.py, the Python package and the roots file are copied into
#    a build directory, and only that copy of setup.py is patched
#    (bazel/grpcio-system-core.patch: build only the Cython extension and link
#    it to -lgrpc -lgpr, no core source compiled in);
#  - tools: Debian's /usr/bin/python3 and cython3, nothing from PyPI;
#  - output: ${APERTURE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/aperture}/python
#    holding the packages `grpc` and `aperture` (policy/python/aperture, with
#    the status proto's generated module); the directory is the last line
#    printed on stdout (everything else goes to stderr).
# Idempotent: when the build's inputs (the libgrpc-dev, Python and Cython
# versions, the build flags, the patch, the recipe number below) have not
# changed it only refreshes the aperture module (seconds).
# Exit status: 0 built or up to date; 3 the packages it needs are missing
# and cannot be installed (the message says which); 1 any other failure.
#
#   PYTHONPATH=$(bazel/python-grpcio.sh | tail -n 1) /usr/bin/python3 -c 'import grpc, aperture'
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache_root=${APERTURE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/aperture}
install_dir="$cache_root/python"
python=/usr/bin/python3 # Debian's: a python3 earlier on PATH may be another build
patch_file="$repo_root/bazel/grpcio-system-core.patch"
module_src="$repo_root/policy/python/aperture"

packages=(
  python3 python3-dev python3-setuptools cython3 python3-protobuf
  libgrpc-dev libabsl-dev protobuf-compiler build-essential patch
)

say() { printf 'python-grpcio: %s\n' "$*" >&2; }
die() { printf 'python-grpcio: error: %s\n' "$*" >&2; exit 1; }
unavailable() { printf 'python-grpcio: unavailable: %s\n' "$*" >&2; exit 3; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# 1. Packages, as bazel/setup.sh gets them.
missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing: ${missing[*]}"
  { as_root apt-get update -q >&2 &&
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      --no-install-recommends "${missing[@]}" >&2; } ||
    unavailable "Debian packages missing and not installable: ${missing[*]}"
fi

# 2. The cached gRPC source of the installed library.
lib_version=$(dpkg-query -W -f='${Version}' libgrpc-dev)
src_version=${lib_version%%+b*}
src_dir="$cache_root/grpc-$src_version"
if [ ! -f "$src_dir/.aperture-source-version" ]; then
  say "gRPC source $src_version not cached yet: running bazel/setup.sh"
  APERTURE_SETUP_SKIP_PYTHON=1 "$repo_root/bazel/setup.sh" >&2
fi
[ -f "$src_dir/setup.py" ] && [ -d "$src_dir/src/python/grpcio" ] ||
  die "no grpcio source in $src_dir"

# How setup.py builds: only the Cython extension, on the system core; no
# BoringSSL assembly (nothing of BoringSSL is built). -UNDEBUG: Debian's
# libgrpc is built without NDEBUG, and so must be anything that includes
# gRPC's internal headers (docs/languages.md).
build_env=(
  GRPC_PYTHON_BUILD_SYSTEM_GRPC_CORE=1
  GRPC_PYTHON_BUILD_WITH_CYTHON=1
  GRPC_BUILD_WITH_BORING_SSL_ASM=0
  "GRPC_PYTHON_CFLAGS=-std=c++14 -fvisibility=hidden -fno-wrapv -fno-exceptions -UNDEBUG"
  "GRPC_PYTHON_LDFLAGS=-lpthread"
)
# Raise when the steps below change in a way the inputs do not show.
recipe=1

# 3. Up to date? The key names every input of the build.
key=$(
  printf 'recipe %s\n' "$recipe"
  printf 'libgrpc-dev %s\n' "$lib_version"
  printf 'python %s\n' "$("$python" -c 'import sys; print(sys.version.split()[0])')"
  printf 'cython3 %s\n' "$(dpkg-query -W -f='${Version}' cython3)"
  printf 'env %s\n' "${build_env[*]}"
  printf 'patch %s\n' "$(sha256sum "$patch_file" | cut -d' ' -f1)"
)
built() {
  [ "$(cat "$install_dir/.aperture-grpcio-key" 2>/dev/null)" = "$key" ] &&
    compgen -G "$install_dir/grpc/_cython/cygrpc*.so" >/dev/null
}

mkdir -p "$cache_root"
exec 9>"$cache_root/python.lock"
flock 9 # one build at a time (worktrees share the cache)

work=$(mktemp -d "$cache_root/python-build.XXXXXX")
trap 'rm -rf "$work"' EXIT

if ! built; then
  say "building grpcio $src_version on the system libgrpc (a few minutes, once)"
  start=$(date +%s)
  b="$work/src"
  mkdir -p "$b/etc" "$b/src/python"
  cp "$src_dir/setup.py" "$src_dir/_metadata.py" "$src_dir/PYTHON-MANIFEST.in" "$b/"
  cp "$src_dir/etc/roots.pem" "$b/etc/"
  cp -r "$src_dir/src/python/grpcio" "$b/src/python/"
  # Read only: the public headers and the three internal headers the Cython
  # layer includes (src/core/lib/iomgr/{executor,timer_manager,iomgr_internal}.h).
  ln -s "$src_dir/include" "$b/include"
  ln -s "$src_dir/src/core" "$b/src/core"
  rm -f "$b"/src/python/grpcio/grpc/_cython/cygrpc.cpp "$b"/src/python/grpcio/grpc/_cython/*.so
  patch -s -d "$b" -p1 <"$patch_file" || die "the patch does not apply to $src_dir/setup.py"
  (cd "$b" && env "${build_env[@]}" "$python" -E -s setup.py build --build-base="$work/build" >"$work/build.log" 2>&1) || {
    tail -n 40 "$work/build.log" >&2
    die "setup.py build failed (the end of its output is above)"
  }
  lib=$(echo "$work"/build/lib.*)
  so=$(echo "$lib"/grpc/_cython/cygrpc*.so)
  [ -f "$so" ] || die "no cygrpc extension built"
  # The checks this build exists for: the shared core, none of its own.
  # (whole outputs are read into variables: no early exit that would
  # SIGPIPE a pipe under pipefail)
  needed=$(objdump -p "$so" | awk '$1 == "NEEDED" { print $2 }')
  grep -qx 'libgrpc\.so\.29' <<<"$needed" || die "$so does not link libgrpc.so.29"
  grep -qx 'libgpr\.so\.29' <<<"$needed" || die "$so does not link libgpr.so.29"
  defined=$(nm -C --defined-only "$so")
  own=$(grep -c 'grpc_core::' <<<"$defined" || true)
  [ "$own" -eq 0 ] || die "$so defines $own grpc_core symbols: core sources were compiled in"
  ! grep -qw 'grpc_init' <<<"$defined" || die "$so defines grpc_init: core sources were compiled in"
  new="$work/install"
  mkdir -p "$new"
  cp -r "$lib/grpc" "$new/"
  "$python" -E -s -c 'import sys; sys.path.insert(0, sys.argv[1]); import grpc' "$new" ||
    die "the built grpc does not import"
  "$python" -E -s -m compileall -q "$new/grpc" >&2
  echo "$key" >"$new/.aperture-grpcio-key"
  rm -rf "$install_dir.old"
  [ ! -e "$install_dir" ] || mv "$install_dir" "$install_dir.old"
  mv "$new" "$install_dir"
  rm -rf "$install_dir.old"
  say "built in $(($(date +%s) - start)) s: $(echo "$install_dir"/grpc/_cython/cygrpc*.so)"
fi

# 4. The aperture module (with the status proto's generated code), replaced
# only when it differs, so readers see either the old or the new one.
mod="$work/module"
mkdir -p "$mod"
cp -r "$module_src" "$mod/aperture"
find "$mod" -name __pycache__ -prune -exec rm -rf {} +
protoc --proto_path="$repo_root/proto" --python_out="$mod" aperture/v1/status.proto
if ! diff -r -q -x __pycache__ "$mod/aperture" "$install_dir/aperture" >/dev/null 2>&1; then
  "$python" -E -s -m compileall -q "$mod/aperture" >&2
  rm -rf "$install_dir/aperture.old"
  [ ! -e "$install_dir/aperture" ] || mv "$install_dir/aperture" "$install_dir/aperture.old"
  mv "$mod/aperture" "$install_dir/aperture"
  rm -rf "$install_dir/aperture.old"
  say "installed the aperture module from $module_src"
fi
echo "$install_dir"
