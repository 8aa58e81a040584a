#!/usr/bin/env bash
# Idempotent set-up for building and testing aperture offline.
#  1. installs the Debian packages the build needs, when any is missing
#     (iproute2 and dnsmasq-base: the fleet's netns network and DNS server;
#     cmake: the package's CMake test);
#  2. unpacks Debian's source package of the installed libgrpc (for the
#     internal headers the LB policy shim compiles against) into a cache
#     outside the tracked tree, and links it as bazel/grpc_src;
#  3. checks that the source version equals the installed library version;
#  4. builds grpcio on the system's gRPC core once (bazel/python-grpcio.sh,
#     cached outside the tree) and writes bazel/python.bazelrc (untracked,
#     imported by .bazelrc), which tells the Python tests where it is, or
#     why it is unavailable.
# Fast when everything is present: a few dpkg queries and a symlink check.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache_root=${APERTURE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/aperture}

packages=(
  bazel-bootstrap bazel-rules-cc bazel-rules-java
  build-essential dpkg-dev
  libgrpc-dev libgrpc++-dev protobuf-compiler protobuf-compiler-grpc grpc-proto
  libprotobuf-c-dev protobuf-c-compiler libprotobuf-dev
  pkg-config cmake ruby-grpc python3-prometheus-client python3-protobuf
  libabsl-dev googletest libgtest-dev libbenchmark-dev
  iproute2 dnsmasq-base
)

say() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

# shellcheck source=bazel/debian_packages.sh
. "$repo_root/bazel/debian_packages.sh"
install_missing_packages "${packages[@]}" ||
  die "could not install the Debian packages: ${MISSING_PACKAGES[*]}"

# Version of the installed library, without a binNMU suffix (+bN): that is
# the version of the source package it was built from.
lib_version=$(dpkg-query -W -f='${Version}' libgrpc-dev)
src_version=${lib_version%%+b*}
upstream=${src_version%%-*}
src_dir="$cache_root/grpc-$src_version"

if [ ! -f "$src_dir/.aperture-source-version" ]; then
  say "fetching Debian source package grpc=$src_version into $cache_root"
  mkdir -p "$cache_root"
  work=$(mktemp -d "$cache_root/fetch.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  sources="$work/deb-src.sources"
  cat >"$sources" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  apt_opts=(-o "Dir::Etc::sourcelist=$sources" -o "Dir::Etc::sourceparts=-"
            -o "APT::Get::List-Cleanup=0")
  as_root apt-get "${apt_opts[@]}" update -q >&2
  (cd "$work" && apt-get "${apt_opts[@]}" source --download-only \
      "grpc=$src_version" >&2) ||
    die "could not download the source of grpc=$src_version (installed libgrpc-dev $lib_version)"
  dsc="$work/grpc_${src_version#*:}.dsc"
  [ -f "$dsc" ] || die "source package grpc_${src_version}.dsc not found after download"
  got=$(sed -n 's/^Version: //p' "$dsc")
  [ "$got" = "$src_version" ] ||
    die "source version $got does not match installed libgrpc-dev $lib_version"
  (cd "$work" && dpkg-source --no-check -x "$dsc" src >/dev/null) ||
    die "could not unpack $dsc"
  echo "$got" >"$work/src/.aperture-source-version"
  rm -rf "$src_dir"
  mv "$work/src" "$src_dir"
fi

have=$(cat "$src_dir/.aperture-source-version")
[ "$have" = "$src_version" ] ||
  die "cached gRPC source $have does not match installed libgrpc-dev $lib_version"
# The header that the shim's ABI depends on must agree with the library.
hdr_version=$(sed -n 's/.*GRPC_CPP_VERSION_STRING "\(.*\)".*/\1/p' \
  "$src_dir/include/grpcpp/version_info.h" 2>/dev/null || true)
if [ -n "$hdr_version" ] && [ "$hdr_version" != "$upstream" ]; then
  die "gRPC source headers say $hdr_version, installed library is $upstream"
fi

# gRPC's own Bazel BUILD files under src/ and include/ would make those
# directories separate packages of @grpc_src and hide their headers from the
# glob in grpc_src.BUILD; only the headers are used here, so set them aside.
find "$src_dir/src" "$src_dir/include" -type f \( -name BUILD -o -name BUILD.bazel \) \
  -exec sh -c 'for f; do mv "$f" "$f.upstream"; done' sh {} +

link="$repo_root/bazel/grpc_src"
if [ "$(readlink "$link" 2>/dev/null)" != "$src_dir" ]; then
  rm -f "$link"
  ln -s "$src_dir" "$link"
fi
# Python on the system core (docs/languages.md): bazel test gives tests a
# HOME of their own, so the build's directory reaches them as a --test_env
# in bazel/python.bazelrc. When python-grpcio.sh cannot get its packages
# (exit 3) the Python tests skip with its reason; when it fails otherwise
# they fail with its error (and the other tests still run).
python_rc="$repo_root/bazel/python.bazelrc"
if [ -z "${APERTURE_SETUP_SKIP_PYTHON:-}" ]; then
  python_log=$(mktemp "${TMPDIR:-/tmp}/aperture-python.XXXXXX")
  python_out=$(mktemp "${TMPDIR:-/tmp}/aperture-python.XXXXXX")
  python_status=0
  # Its messages go to our stderr and to a log (read below), its stdout
  # (the directory, last line) to a file.
  { "$repo_root/bazel/python-grpcio.sh" 2>&1 1>&3 3>&- | tee "$python_log" >&2; } \
    3>"$python_out" || python_status=$?
  python_dir=$(tail -n 1 "$python_out")
  if [ "$python_status" -eq 0 ]; then
    setting="APERTURE_PYTHON_DIR=$python_dir"
  elif [ "$python_status" -eq 3 ]; then
    reason=$(sed -n 's/^python-grpcio: unavailable: //p' "$python_log" | tail -n 1)
    say "grpcio on the system core unavailable, the Python tests will skip: $reason"
    setting="APERTURE_PYTHON_UNAVAILABLE=${reason:-its Debian packages cannot be installed}"
  else
    reason=$(sed -n 's/^python-grpcio: error: //p' "$python_log" | tail -n 1)
    say "warning: bazel/python-grpcio.sh failed (see above), the Python tests will fail"
    setting="APERTURE_PYTHON_BUILD_FAILED=${reason:-bazel/python-grpcio.sh exited $python_status}"
  fi
  rm -f "$python_log" "$python_out"
  rc_text=$(printf '# Written by bazel/setup.sh: where the Python tests find grpcio.\nbuild --test_env="%s"' \
    "${setting//\"/\'}")
  [ "$(cat "$python_rc" 2>/dev/null)" = "$rc_text" ] || printf '%s\n' "$rc_text" >"$python_rc"
fi
say "ok: gRPC $src_version (library and source agree), packages present"
