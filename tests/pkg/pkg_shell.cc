#include "tests/pkg/pkg_shell.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

std::string Runfile(const std::string &path) {
  const char *srcdir = getenv("TEST_SRCDIR");
  const char *ws = getenv("TEST_WORKSPACE");
  return std::string(srcdir ? srcdir : ".") + "/" + (ws ? ws : "aperture") + "/" + path;
}

std::string Deb() { return Runfile("policy/pkg/aperture.deb"); }

std::string Shell(const std::string &cmd, int *status) {
  std::string out;
  FILE *f = popen(cmd.c_str(), "r");
  if (f == nullptr) {
    if (status) *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  int rc = pclose(f);
  if (status) *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string Multiarch() { return Trim(Shell("gcc -print-multiarch")); }
