"""A fuzz target as a deterministic test and as a manual libFuzzer binary."""

load("@rules_cc//cc:defs.bzl", "cc_test")

def core_fuzz_test(name, deps):
    """<name>_fuzz_test (bazel test) and libfuzzer_<name> (manual, clang).

    The target is <name>_fuzzer.c; the libFuzzer build compiles it with the
    pure C sources of //policy/core and //policy/affinity.
    """
    cc_test(
        name = name + "_fuzz_test",
        size = "small",
        srcs = [
            "fuzz_driver.c",
            "fuzz_input.h",
            name + "_fuzzer.c",
        ],
        copts = ["-Wextra"],
        deps = deps,
    )
    native.genrule(
        name = "libfuzzer_" + name,
        srcs = [
            name + "_fuzzer.c",
            "fuzz_input.h",
            "//policy/core:sources",
            "//policy/affinity:sources",
            "//policy/core:headers",
            "//policy/affinity:headers",
        ],
        outs = [name + "_fuzzer"],
        cmd = " ".join([
            "clang-14 -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -I.",
            "$(location " + name + "_fuzzer.c)",
            "$(locations //policy/core:sources)",
            "$(locations //policy/affinity:sources)",
            "-lm -lpthread -o $@",
        ]),
        tags = ["manual"],
    )
