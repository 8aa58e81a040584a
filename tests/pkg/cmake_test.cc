// The Debian package's CMake package: tests/pkg/cmake_project, a user's
// project that does find_package(aperture) and links aperture::aperture and
// nothing else, configured, built and run with cmake against the package
// unpacked into a temporary directory (dpkg -x, nothing installed on the
// system; cmake downloads nothing).
#include <stdlib.h>

#include <string>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"
#include "tests/pkg/pkg_shell.h"

namespace {

// The value of a "-- aperture WHAT: VALUE" line of the project's configure
// output; "" when there is none.
std::string Reported(const std::string &out, const std::string &what) {
  std::string key = "-- aperture " + what + ": ";
  size_t at = out.find(key);
  if (at == std::string::npos) return "";
  at += key.size();
  return out.substr(at, out.find('\n', at) - at);
}

// s with every run of white space made one space: cmake wraps its
// messages.
std::string OneLine(const std::string &s) {
  std::string out;
  for (char c : s) {
    bool space = c == ' ' || c == '\n' || c == '\t';
    if (!space) out += c;
    else if (!out.empty() && out.back() != ' ') out += ' ';
  }
  return out;
}

// The NEEDED entries of an ELF file, one a line.
std::string Needed(const std::string &elf) {
  return Shell("objdump -p '" + elf + "' | awk '$1 == \"NEEDED\" { print $2 }'");
}

class CMakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int rc = -1;
    Shell("command -v cmake >/dev/null", &rc);
    ASSERT_EQ(0, rc) << "cmake is not installed (bazel/setup.sh installs it)";
    // A space in the path: every path the config builds must stay quoted.
    dir_ = TempDir("cmake") + "/unpacked package";
    std::string out = Shell("dpkg-deb -x '" + Deb() + "' '" + dir_ + "' 2>&1", &rc);
    ASSERT_EQ(0, rc) << out;
    version_ = Trim(Shell("dpkg-deb -f '" + Deb() + "' Version"));
    ASSERT_FALSE(version_.empty());
    // Under --config=asan the packaged library is instrumented: build the
    // program the same way so the sanitizer runtime comes first.
    std::string lib = dir_ + "/usr/lib/" + Multiarch() + "/libaperture.so";
    if (Shell("objdump -p '" + lib + "'").find("libasan") != std::string::npos) {
      sanitize_ = " -DCMAKE_C_FLAGS=-fsanitize=address,undefined";
      setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    }
  }

  // Configures the project into `build` with the unpacked package's prefix
  // (dir_/usr) asking for `version` ("" for any), `extra` more arguments;
  // returns cmake's output, *rc its exit code.
  std::string Configure(const std::string &build, const std::string &version, int *rc,
                        const std::string &extra = "") {
    return Shell("cmake -S '" + Runfile("tests/pkg/cmake_project") + "' -B '" + build +
                     "' -DCMAKE_PREFIX_PATH='" + dir_ + "/usr' -DAPERTURE_WANT_VERSION=" +
                     version + sanitize_ + extra + " 2>&1",
                 rc);
  }

  std::string dir_, version_, sanitize_;
};

TEST_F(CMakeTest, FindPackageBuildsAProgramThatRunsOnThePackagesLibrary) {
  std::string build = TempDir("cmake_build");
  int rc = -1;
  std::string out = Configure(build, version_, &rc);
  ASSERT_EQ(0, rc) << out;
  // Found in the unpacked package, every path under where it lies.
  std::string libdir = dir_ + "/usr/lib/" + Multiarch();
  EXPECT_EQ(libdir + "/cmake/aperture", Reported(out, "config")) << out;
  EXPECT_EQ(libdir + "/libaperture.so", Reported(out, "library")) << out;
  // (then gRPC's own, the system's)
  std::string include = Reported(out, "include");
  EXPECT_EQ(dir_ + "/usr/include", include.substr(0, include.find(';'))) << out;

  out = Shell("cmake --build '" + build + "' 2>&1", &rc);
  ASSERT_EQ(0, rc) << out;
  std::string prog = build + "/cmake_client";
  out = Shell("'" + prog + "' 2>&1", &rc);
  EXPECT_EQ(0, rc) << out;
  EXPECT_EQ("aperture registered\n", out);

  // gRPC's C core came with aperture::aperture (the project links nothing
  // else); the library is linked by name, so the program does not carry
  // the unpacked tree's path in its NEEDED entries, and it loaded the
  // package's copy.
  std::string needed = "\n" + Needed(prog);
  EXPECT_NE(std::string::npos, needed.find("\nlibgrpc.so.")) << needed;
  EXPECT_NE(std::string::npos, needed.find("\nlibaperture.so\n")) << needed;
  EXPECT_NE(std::string::npos, Shell("ldd '" + prog + "'").find(libdir + "/libaperture.so"));
}

TEST_F(CMakeTest, ANewerVersionThanThePackagesIsNotFound) {
  int major = atoi(version_.c_str());
  int minor = atoi(version_.substr(version_.find('.') + 1).c_str());
  std::string newer = std::to_string(major) + "." + std::to_string(minor + 1);
  int rc = -1;
  std::string out = Configure(TempDir("cmake_newer"), newer, &rc);
  EXPECT_NE(0, rc) << out;
  EXPECT_NE(std::string::npos, OneLine(out).find("requested version \"" + newer + "\"")) << out;
  EXPECT_NE(std::string::npos, OneLine(out).find("version: " + version_)) << out;
}

TEST_F(CMakeTest, WithoutTheSystemsGrpcThePackageSaysWhatIsMissing) {
  // The package's own prefix stays; gRPC's (/usr) is hidden.
  int rc = -1;
  std::string out =
      Configure(TempDir("cmake_nogrpc"), "", &rc, " '-DCMAKE_IGNORE_PREFIX_PATH=/usr;/'");
  EXPECT_NE(0, rc) << out;
  EXPECT_NE(std::string::npos, OneLine(out).find("not found: install libgrpc-dev")) << out;
  EXPECT_EQ(std::string::npos, out.find("-- aperture config:")) << out;
}

}  // namespace
