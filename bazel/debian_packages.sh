# Sourced by bazel/setup.sh and bazel/python-grpcio.sh: installs the Debian
# packages a step needs when any is missing (apt-get, with sudo when not
# root). The sourcing script defines say().

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Installs those of the packages "$@" that are not installed; returns
# apt-get's status (0 when nothing was missing). MISSING_PACKAGES holds
# what was missing.
install_missing_packages() {
  MISSING_PACKAGES=()
  local p status
  for p in "$@"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || MISSING_PACKAGES+=("$p")
  done
  [ ${#MISSING_PACKAGES[@]} -gt 0 ] || return 0
  say "installing: ${MISSING_PACKAGES[*]}"
  as_root apt-get update -q >&2 &&
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      --no-install-recommends "${MISSING_PACKAGES[@]}" >&2
}
