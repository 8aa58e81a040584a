// The Debian package (//policy:aperture_deb): its control file, its
// contents, and a program built outside Bazel with pkg-config against the
// package unpacked into a temporary root (dpkg -x, nothing installed on
// the system), run against real servers on 127.0.0.1.
#include <ctype.h>
#include <stdlib.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"
#include "tests/pkg/pkg_shell.h"

namespace {

std::string Field(const std::string &name) {
  return Trim(Shell("dpkg-deb -f '" + Deb() + "' " + name));
}

TEST(DebTest, ControlFileNamesTheLibrariesItNeedsAndDescribesThePackage) {
  EXPECT_EQ("aperture", Field("Package"));
  EXPECT_EQ(Trim(Shell("dpkg --print-architecture")), Field("Architecture"));
  std::string version = Field("Version");
  ASSERT_FALSE(version.empty());
  EXPECT_TRUE(isdigit(static_cast<unsigned char>(version[0]))) << version;
  EXPECT_NE(std::string::npos, Field("Maintainer").find('<'));
  EXPECT_GT(atoi(Field("Installed-Size").c_str()), 0);
  EXPECT_EQ("libs", Field("Section"));
  EXPECT_EQ("optional", Field("Priority"));
  EXPECT_EQ("python3-protobuf", Field("Suggests"));  // for the Python module's status()
  std::string depends = Field("Depends");
  EXPECT_NE(std::string::npos, depends.find("libgrpc29 (>= 1.51")) << depends;
  EXPECT_NE(std::string::npos, depends.find("libprotobuf-c1")) << depends;
  EXPECT_NE(std::string::npos, depends.find("libc6")) << depends;
  std::string description = Shell("dpkg-deb -f '" + Deb() + "' Description");
  EXPECT_GT(std::count(description.begin(), description.end(), '\n'), 2) << "no long description";

  std::string files = Shell("dpkg-deb -c '" + Deb() + "'");
  std::string multiarch = Multiarch();
  for (const std::string &f :
       {"./usr/lib/" + multiarch + "/libaperture.so", std::string("./usr/include/aperture.h"),
        "./usr/lib/" + multiarch + "/pkgconfig/aperture.pc",
        "./usr/lib/" + multiarch + "/cmake/aperture/apertureConfig.cmake",
        "./usr/lib/" + multiarch + "/cmake/aperture/apertureConfigVersion.cmake",
        std::string("./usr/bin/aperturectl"),
        std::string("./usr/share/aperture/proto/aperture/v1/status.proto"),
        std::string("./usr/lib/python3/dist-packages/aperture/__init__.py"),
        std::string("./usr/lib/python3/dist-packages/aperture/_library.py"),
        std::string("./usr/lib/python3/dist-packages/aperture/v1/status_pb2.py")}) {
    EXPECT_NE(std::string::npos, files.find(" " + f + "\n")) << f << " missing:\n" << files;
  }
  std::istringstream lines(files);
  for (std::string line; std::getline(lines, line);)
    EXPECT_NE(std::string::npos, line.find(" root/root ")) << "not owned by root: " << line;
}

TEST(DebTest, PkgConfigBuildFromTheUnpackedPackageRunsAgainstRealServers) {
  std::string root = TempDir("deb_root");
  int rc = -1;
  Shell("dpkg -x '" + Deb() + "' '" + root + "' 2>&1", &rc);
  ASSERT_EQ(0, rc);
  std::string multiarch = Multiarch();
  std::string env = "PKG_CONFIG_SYSROOT_DIR='" + root + "' PKG_CONFIG_PATH='" + root + "/usr/lib/" +
                    multiarch + "/pkgconfig' ";
  std::string flags = Trim(Shell(env + "pkg-config --cflags --libs aperture", &rc));
  ASSERT_EQ(0, rc) << flags;
  EXPECT_NE(std::string::npos, flags.find("-I" + root + "/usr/include")) << flags;
  EXPECT_NE(std::string::npos, flags.find("-L" + root + "/usr/lib/" + multiarch)) << flags;
  EXPECT_NE(std::string::npos, flags.find("-laperture")) << flags;
  EXPECT_NE(std::string::npos, flags.find("-lgrpc")) << flags;

  // Under --config=asan the packaged library is instrumented: build the
  // program the same way so the sanitizer runtime comes first.
  std::string lib = root + "/usr/lib/" + multiarch + "/libaperture.so";
  bool asan = Shell("objdump -p '" + lib + "'").find("libasan") != std::string::npos;
  if (asan) {
    flags += " -fsanitize=address,undefined";
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
  }

  std::string prog = root + "/pkg_client";
  std::string raw_call = Runfile("tests/common/raw_call.c");
  std::string raw_call_dir = raw_call.substr(0, raw_call.rfind('/'));
  std::string out = Shell("cc -std=c11 -Wall -Werror -o '" + prog + "' '" + Runfile("tests/pkg/pkg_client.c") +
                            "' '" + raw_call + "' -I'" + raw_call_dir + "' " + flags + " -Wl,-rpath,'" + root + "/usr/lib/" + multiarch +
                            "' 2>&1",
                        &rc);
  ASSERT_EQ(0, rc) << out;
  // The program loads the package's library, not some other copy.
  EXPECT_NE(std::string::npos, Shell("ldd '" + prog + "'").find(root + "/usr/lib/" + multiarch +
                                                                "/libaperture.so"));

  // 4 servers; peer 0 of 2 with minAperture 2 over 4: 2 members.
  ServerSet servers(4, {}, "deb_servers");
  Child client(prog, {servers.Target(), "200"}, root + "/pkg_client.log");
  std::string status_addr = client.WaitLine("status listening ");
  ASSERT_FALSE(status_addr.empty());
  std::string result = client.WaitLine("calls ", 60000);
  ASSERT_FALSE(result.empty());
  std::istringstream words(result);
  std::string ok, failed, peers_word, peer;
  words >> ok >> failed >> peers_word;
  EXPECT_EQ("ok=200", ok);
  EXPECT_EQ("failed=0", failed);
  std::set<std::string> reached;  // "127.0.0.1:PORT"
  while (words >> peer) {
    std::string addr = peer.substr(0, peer.rfind('='));
    if (addr.rfind("ipv4:", 0) == 0) addr = addr.substr(5);
    reached.insert(addr);
  }

  // The package's aperturectl reads the program's ring.
  std::string json_path = root + "/ring.json";
  Shell("'" + root + "/usr/bin/aperturectl' status " + status_addr + " --json > '" + json_path + "'",
      &rc);
  ASSERT_EQ(0, rc);
  Json ring_state = ReadJson(json_path);
  ASSERT_TRUE(ring_state);
  const json_value *ring = io_json_at(io_json_get(ring_state.get(), "rings"), 0);
  ASSERT_NE(nullptr, ring);
  EXPECT_EQ(4, io_json_get_number(ring, "endpoint_count", -1));
  EXPECT_EQ("continuous", std::string(io_json_string(io_json_get(ring, "mode"))));
  std::set<std::string> members;
  const json_value *endpoints = io_json_get(ring, "endpoints");
  for (size_t i = 0; i < io_json_size(endpoints); i++) {
    const json_value *e = io_json_at(endpoints, i);
    if (io_json_bool(io_json_get(e, "in_aperture"), 0)) members.insert(io_json_string(io_json_get(e, "address")));
  }
  EXPECT_EQ(2u, members.size());
  EXPECT_EQ(members, reached);  // every member reached, nothing else
  EXPECT_EQ(0, client.Terminate() >= 0 ? 0 : -1);
}

}  // namespace
