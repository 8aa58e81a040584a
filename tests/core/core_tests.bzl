"""The core's unit tests: one googletest binary per file, the same deps."""

load("@rules_cc//cc:defs.bzl", "cc_test")

def core_tests(names, size = "small"):
    """A cc_test <name> from <name>.cc for each name, against the whole core,
    its testing headers and the test helpers (//tests/core:test_util)."""
    for name in names:
        cc_test(
            name = name,
            size = size,
            srcs = [name + ".cc"],
            deps = [
                "//bazel:gtest_main",
                "//policy/core",
                "//policy/core:testing",
                "//tests/core:test_util",
            ],
        )
