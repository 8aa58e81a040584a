// What the language tests share: runfiles, shell quoting, commands run
// with their output captured, and the environment the Python build leaves.
#ifndef APERTURE_TESTS_LANGUAGES_LANG_SHELL_H
#define APERTURE_TESTS_LANGUAGES_LANG_SHELL_H

#include <string>

namespace lang_test {

// Path of a file in the runfiles, e.g. "tests/languages/python_client.py".
std::string Runfile(const std::string &path);

// `s` quoted for /bin/sh (single quotes; a quote inside closed and escaped).
std::string Quote(const std::string &s);

// Runs `cmd` with /bin/sh; returns its stdout, and its exit code in
// *exit_code when given (-1 when it did not exit normally).
std::string Shell(const std::string &cmd, int *exit_code = nullptr);

// The variable's value, "" when unset.
std::string Env(const char *name);

}  // namespace lang_test

#endif  // APERTURE_TESTS_LANGUAGES_LANG_SHELL_H
