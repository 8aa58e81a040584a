"""Compiler options of every target that includes gRPC's internal headers.

-UNDEBUG: the shim must see gRPC's headers as Debian's libgrpc was built,
without NDEBUG (grpc_seam.h, item 1, says why). -fvisibility=hidden and
-fvisibility-inlines-hidden: the shim must not export gRPC's inline symbols,
which could override libgrpc's own copies.
"""

SHIM_COPTS = [
    "-UNDEBUG",
    "-fvisibility=hidden",
    "-fvisibility-inlines-hidden",
    "-Wextra",
    "-Wno-unused-parameter",
]

# Tests that include gRPC internals need the same NDEBUG setting (and keep
# default visibility).
GRPC_INTERNAL_TEST_COPTS = ["-UNDEBUG"]
