"""Compiler options of every room of the pure-C core."""

CORE_COPTS = [
    "-Wextra",
    "-Werror=implicit-function-declaration",
    # Every client must compute the same doubles: no fused multiply-add
    # where the compiler would choose it.
    "-ffp-contract=off",
]
