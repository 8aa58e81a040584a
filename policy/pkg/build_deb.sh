#!/usr/bin/env bash
# Stages the aperture package tree and builds the .deb with dpkg-deb.
#   build_deb.sh OUT.deb VERSION LIB.so HEADER APERTURECTL PROTO PC_IN \
#     CMAKE_CONFIG_IN CMAKE_VERSION_IN [PY...]
# PY: the files of the Python module (policy/python/aperture/..., the part
# after policy/python/ is their path under dist-packages).
# Depends: is computed from the shared libraries that libaperture.so and
# aperturectl need (objdump NEEDED -> the Debian package that ships each,
# at least the installed version's upstream part).
set -euo pipefail

out=$1 version=$2 lib=$3 header=$4 ctl=$5 proto=$6 pc_in=$7
cmake_config_in=$8 cmake_version_in=$9
shift 9

arch=$(dpkg --print-architecture)
multiarch=$(gcc -print-multiarch 2>/dev/null || echo "$(uname -m)-linux-gnu")
stage=$(mktemp -d "${TMPDIR:-/tmp}/aperture-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
chmod 0755 "$stage"

install -d "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/include" \
  "$stage/usr/lib/$multiarch/pkgconfig" "$stage/usr/lib/$multiarch/cmake/aperture" \
  "$stage/usr/share/aperture/proto/aperture/v1" \
  "$stage/usr/share/doc/aperture"
install -m 0644 "$lib" "$stage/usr/lib/$multiarch/libaperture.so"
install -m 0755 "$ctl" "$stage/usr/bin/aperturectl"
install -m 0644 "$header" "$stage/usr/include/aperture.h"
install -m 0644 "$proto" "$stage/usr/share/aperture/proto/aperture/v1/status.proto"
py_root="$stage/usr/lib/python3/dist-packages"
for f in "$@"; do
  rel=${f##*policy/python/}
  [ "$rel" != "$f" ] || { echo "build_deb: $f is not under policy/python/" >&2; exit 1; }
  install -D -m 0644 "$f" "$py_root/$rel"
done
sed -e "s|@MULTIARCH@|$multiarch|" -e "s|@VERSION@|$version|" "$pc_in" \
  >"$stage/usr/lib/$multiarch/pkgconfig/aperture.pc"
chmod 0644 "$stage/usr/lib/$multiarch/pkgconfig/aperture.pc"
# The CMake package: the config finds the package relative to itself and
# gRPC by the SONAMEs the library needs; the version file carries the
# version and the library's word size.
cmake_dir="$stage/usr/lib/$multiarch/cmake/aperture"
grpc_soname=$(objdump -p "$lib" | awk '$1 == "NEEDED" && $2 ~ /^libgrpc\.so\./ { print $2 }')
gpr_soname=$(objdump -p "$lib" | awk '$1 == "NEEDED" && $2 ~ /^libgpr\.so\./ { print $2 }')
[ -n "$grpc_soname" ] && [ -n "$gpr_soname" ] ||
  { echo "build_deb: $lib does not link libgrpc and libgpr" >&2; exit 1; }
sed -e "s|@GRPC_SONAME@|$grpc_soname|g" -e "s|@GPR_SONAME@|$gpr_soname|g" "$cmake_config_in" \
  >"$cmake_dir/apertureConfig.cmake"
pointer_bytes=$(($(dpkg-architecture -qDEB_HOST_ARCH_BITS) / 8))
sed -e "s|@VERSION@|$version|" -e "s|@POINTER_BYTES@|$pointer_bytes|g" "$cmake_version_in" \
  >"$cmake_dir/apertureConfigVersion.cmake"
chmod 0644 "$cmake_dir/apertureConfig.cmake" "$cmake_dir/apertureConfigVersion.cmake"
strip --strip-unneeded "$stage/usr/lib/$multiarch/libaperture.so" "$stage/usr/bin/aperturectl"
cat >"$stage/usr/share/doc/aperture/README" <<DOC
aperture $version: a deterministic-aperture load-balancing policy for gRPC
C-core. Select it with the service config
  {"loadBalancingConfig": [{"aperture": {}}]}
and register it by linking libaperture (pkg-config --cflags --libs aperture;
in CMake find_package(aperture) and target aperture::aperture)
or by preloading it: LD_PRELOAD=/usr/lib/$multiarch/libaperture.so.
aperturectl status HOST:PORT reads a process's status service
(/usr/share/aperture/proto/aperture/v1/status.proto).
Python (on a grpcio that links the system's libgrpc, see the project's
docs/languages.md): import aperture loads the library; aperture.register(),
aperture.set_coordinate(index, count), aperture.status("HOST:PORT") (needs
python3-protobuf).
DOC
chmod 0644 "$stage/usr/share/doc/aperture/README"

# Runtime dependencies from the ELF NEEDED entries.
declare -A deps=()
for elf in "$stage/usr/lib/$multiarch/libaperture.so" "$stage/usr/bin/aperturectl"; do
  for soname in $(objdump -p "$elf" | awk '$1 == "NEEDED" { print $2 }'); do
    # (whole outputs are read: no early exit that would SIGPIPE a pipe)
    path=$(ldconfig -p | awk -v s="$soname" '$1 == s && !found { print $NF; found = 1 }')
    [ -n "$path" ] || { echo "build_deb: no library for $soname" >&2; exit 1; }
    owners=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null || dpkg -S "$path" 2>/dev/null || true)
    owner=${owners%%:*}
    [ -n "$owner" ] || { echo "build_deb: no package ships $path" >&2; exit 1; }
    v=$(dpkg-query -W -f='${Version}' "$owner")
    v=${v%%-*} # the upstream version: any Debian revision of it will do
    deps[$owner]="$owner (>= ${v#*:})"
  done
done
depends=$(printf '%s\n' "${deps[@]}" | sort | paste -sd, | sed 's/,/, /g')
size_kb=$(du -k -s --exclude=DEBIAN "$stage" | cut -f1)

cat >"$stage/DEBIAN/control" <<CTL
Package: aperture
Version: $version
Architecture: $arch
Maintainer: aperture maintainers <aperture@localhost>
Installed-Size: $size_kb
Depends: $depends
Suggests: python3-protobuf
Section: libs
Priority: optional
Description: deterministic-aperture load balancing for gRPC C-core
 A load-balancing policy plugin for gRPC's C core (gRPC 1.51): clients agree
 on a ring of backends, each connects only to its slice of the ring and
 spreads calls inside it with power-of-two choices. Ships libaperture.so
 (link it or LD_PRELOAD it), aperture.h, the pkg-config file and CMake
 package, the aperturectl status tool, the status service's .proto and the Python module
 aperture (for a grpcio built on the system's libgrpc).
CTL
dpkg-deb --root-owner-group -Zxz --build "$stage" "$out" >/dev/null
