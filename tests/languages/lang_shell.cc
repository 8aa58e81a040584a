#include "tests/languages/lang_shell.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

namespace lang_test {

std::string Runfile(const std::string &path) {
  const char *srcdir = getenv("TEST_SRCDIR");
  const char *ws = getenv("TEST_WORKSPACE");
  return std::string(srcdir ? srcdir : ".") + "/" + (ws ? ws : "aperture") + "/" + path;
}

std::string Quote(const std::string &s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string Shell(const std::string &cmd, int *exit_code) {
  std::string out;
  FILE *f = popen(cmd.c_str(), "r");
  if (f == nullptr) {
    if (exit_code != nullptr) *exit_code = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const int status = pclose(f);
  if (exit_code != nullptr) *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string Env(const char *name) {
  const char *v = getenv(name);
  return v ? v : "";
}

}  // namespace lang_test
