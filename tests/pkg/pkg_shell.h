// What the package tests share: the runfiles, the .deb, and shell commands
// (dpkg-deb, cc, cmake) run with their output captured.
#ifndef APERTURE_TESTS_PKG_PKG_SHELL_H
#define APERTURE_TESTS_PKG_PKG_SHELL_H

#include <string>

// Path of a file in the runfiles, e.g. "tests/pkg/pkg_client.c".
std::string Runfile(const std::string &path);

// The package built by //policy:aperture_deb.
std::string Deb();

// Runs a shell command; returns its stdout, *status its exit code (-1 when
// it did not exit normally).
std::string Shell(const std::string &cmd, int *status = nullptr);

// s without its trailing newlines and spaces.
std::string Trim(std::string s);

// The Debian multiarch triplet the package's libraries are under.
std::string Multiarch();

#endif  // APERTURE_TESTS_PKG_PKG_SHELL_H
