"""A room of the pure-C core: one folder, one library, built the same way."""

load("@rules_cc//cc:defs.bzl", "cc_library")

CORE_COPTS = [
    "-Wextra",
    "-Werror=implicit-function-declaration",
    # Every client must compute the same doubles: no fused multiply-add
    # where the compiler would choose it.
    "-ffp-contract=off",
]

def core_room(name, deps, shared_internal = []):
    """The room's library, its tests' view and its files for the fuzzers.

    <name>: every .c of the folder; its headers, but for *_internal.h
    (private to the room) and *_testing.h (functions only tests call).
    :testing: the *_testing.h headers, for tests (through //policy/core:testing).
    :sources, :headers: the files, for the libFuzzer builds of //tests/fuzz.
    shared_internal: *_internal.h headers another room of the core reads
    (declared as headers, so a layering check sees them).
    """
    private = [
        h
        for h in native.glob(["*_internal.h", "*_testing.h"])
        if h not in shared_internal
    ]
    cc_library(
        name = name,
        srcs = native.glob(["*.c"]) + private,
        hdrs = native.glob(["*.h"], exclude = private),
        copts = CORE_COPTS,
        visibility = ["//visibility:public"],
        deps = deps,
    )
    cc_library(
        name = "testing",
        testonly = 1,
        hdrs = native.glob(["*_testing.h"]),
        visibility = ["//policy/core:__pkg__"],
        deps = [":" + name],
    )
    native.filegroup(
        name = "sources",
        srcs = native.glob(["*.c"]),
        visibility = ["//policy/core:__pkg__"],
    )
    native.filegroup(
        name = "headers",
        srcs = native.glob(["*.h"]),
        visibility = ["//policy/core:__pkg__"],
    )
