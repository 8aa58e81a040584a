// The wall around policy/lb/grpc_seam: no other room of policy/lb includes a
// gRPC internal header off grpc_seam.h's "api:" list or names what the seam
// keeps. The sources come from the build (room_sources.bzl): ROOM_SOURCES
// lists every .cc and .h linked into //policy/lb outside the seam;
// SEAM_HEADER and SEAM_SOURCE are grpc_seam.h and grpc_seam.cc.
#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/lb/grpc_seam/seam_wall.h"

namespace {

using seam_wall::ApiHeaders;
using seam_wall::Breach;
using seam_wall::FindBreaches;
using seam_wall::WithoutComments;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Env(const char* name) {
  const char* v = getenv(name);
  EXPECT_NE(v, nullptr) << name << " is not set (run it with bazel test)";
  return v != nullptr ? v : "";
}

std::vector<std::string> RoomSources() {
  std::vector<std::string> out;
  std::istringstream in(Env("ROOM_SOURCES"));
  for (std::string path; in >> path;) out.push_back(path);
  return out;
}

std::set<std::string> Api() {
  const std::vector<std::string> list = ApiHeaders(ReadFile(Env("SEAM_HEADER")));
  return std::set<std::string>(list.begin(), list.end());
}

// "file:line: what" for each breach, one a line.
std::string Describe(const std::string& file, const std::vector<Breach>& b) {
  std::string out;
  for (const Breach& x : b) {
    out += file + ":" + std::to_string(x.line) + ": " + x.what + "\n";
  }
  return out;
}

bool AnyMentions(const std::vector<Breach>& breaches, const std::string& s) {
  return std::any_of(breaches.begin(), breaches.end(), [&](const Breach& b) {
    return b.what.find(s) != std::string::npos;
  });
}

TEST(SeamWall, NoRoomReachesPastTheLbPolicyApi) {
  const std::set<std::string> api = Api();
  std::string report;
  for (const std::string& path : RoomSources()) {
    report += Describe(path, FindBreaches(ReadFile(path), api));
  }
  EXPECT_EQ(report, "") << "Only policy/lb/grpc_seam may use gRPC beyond the "
                           "LB-policy API (grpc_seam.h lists it); move these "
                           "behind the seam:\n"
                        << report;
}

TEST(SeamWall, RoomSourcesAreThoseOfPolicyLbButTheSeam) {
  const std::vector<std::string> sources = RoomSources();
  for (const std::string& path : sources) {
    EXPECT_EQ(path.rfind("policy/lb/", 0), 0u) << path;
    EXPECT_EQ(path.rfind("policy/lb/grpc_seam/", 0), std::string::npos)
        << path;
  }
  // The files that once reached past the API are among them.
  for (const char* path : {"policy/lb/policy/aperture_policy.cc",
                           "policy/lb/policy/aperture_policy.h",
                           "policy/lb/api/registration.cc",
                           "policy/lb/coordinate/peer_watcher.cc",
                           "policy/lb/coordinate/process_coordinate.cc",
                           "policy/lb/coordinate/process_coordinate.h"}) {
    EXPECT_NE(std::find(sources.begin(), sources.end(), path), sources.end())
        << path << " is not in ROOM_SOURCES";
  }
}

TEST(SeamWall, ApiListComesFromTheSeamHeader) {
  const std::vector<std::string> list =
      ApiHeaders(ReadFile(Env("SEAM_HEADER")));
  ASSERT_FALSE(list.empty());
  EXPECT_EQ(std::set<std::string>(list.begin(), list.end()).size(),
            list.size())
      << "a header is listed twice";
  for (const std::string& h : list) {
    EXPECT_EQ(h.rfind("src/core/", 0), 0u) << h;
    EXPECT_EQ(h.substr(h.size() - 2), ".h") << h;
  }
  EXPECT_NE(std::find(list.begin(), list.end(),
                      "src/core/lib/load_balancing/lb_policy.h"),
            list.end());
}

// The check recognises the real uses the seam holds: run on the seam's own
// files, it names them.
TEST(SeamWall, TheSeamItselfWouldBreachIt) {
  const std::set<std::string> api = Api();
  std::vector<Breach> found = FindBreaches(ReadFile(Env("SEAM_SOURCE")), api);
  const std::vector<Breach> header =
      FindBreaches(ReadFile(Env("SEAM_HEADER")), api);
  found.insert(found.end(), header.begin(), header.end());
  for (const char* what :
       {"\"src/core/lib/iomgr/exec_ctx.h\"", "names ExecCtx",
        "names grpc_timer_init", "names GRPC_CLOSURE_INIT",
        "names ConnectivityStateName", "names CoreConfiguration",
        "names TraceFlag", "names Resolver", "names grpc_pollset_set_create",
        "names grpc_sockaddr_to_string", "names Timestamp",
        "names ServerAddressWeightAttribute",
        "\"src/core/ext/filters/client_channel/client_channel.h\""}) {
    EXPECT_TRUE(AnyMentions(found, what)) << what;
  }
}

// ---- The check itself, on text made for it --------------------------------

const std::set<std::string> kApi = {"src/core/lib/load_balancing/lb_policy.h"};

TEST(SeamWallScan, FlagsAnInternalIncludeOffTheList) {
  const std::vector<Breach> b = FindBreaches(
      "#include \"policy/lb/grpc_seam/grpc_seam.h\"\n"
      "#include \"src/core/lib/load_balancing/lb_policy.h\"\n"
      "#  include <src/core/lib/iomgr/timer.h>\n"
      "#include \"src/core/lib/iomgr/exec_ctx.h\"\n",
      kApi);
  ASSERT_EQ(b.size(), 2u) << Describe("text", b);
  EXPECT_EQ(b[0].line, 3);
  EXPECT_NE(b[0].what.find("src/core/lib/iomgr/timer.h"), std::string::npos);
  EXPECT_EQ(b[1].line, 4);
  EXPECT_NE(b[1].what.find("src/core/lib/iomgr/exec_ctx.h"),
            std::string::npos);
}

TEST(SeamWallScan, AcceptsPublicHeadersAbslAndOurOwn) {
  EXPECT_TRUE(FindBreaches("#include <grpc/support/log.h>\n"
                           "#include <grpc/impl/codegen/connectivity_state.h>\n"
                           "#include \"absl/status/status.h\"\n"
                           "#include \"policy/core/ap_error.h\"\n"
                           "#include <map>\n",
                           kApi)
                  .empty());
}

TEST(SeamWallScan, FlagsWhatOnlyTheSeamMayName) {
  const std::vector<Breach> b = FindBreaches(
      "void f() {\n"
      "  grpc_core::ApplicationCallbackExecCtx exec_ctx;\n"
      "  grpc_timer_cancel(&t);\n"
      "  gpr_log(GPR_INFO, \"%s\", grpc_core::ConnectivityStateName(s));\n"
      "  auto& c = grpc_core::CoreConfiguration::Get();\n"
      "  auto uri = args.GetString(\"grpc.server_uri\");\n"
      "  auto now = grpc_core::Timestamp::Now();\n"
      "  grpc_pollset_set_destroy(p);\n"
      "}\n",
      kApi);
  ASSERT_EQ(b.size(), 7u) << Describe("text", b);
  for (int k = 0; k < 7; ++k) EXPECT_EQ(b[k].line, k + 2) << b[k].what;
  EXPECT_NE(b[0].what.find("names ApplicationCallbackExecCtx"),
            std::string::npos);
  EXPECT_NE(b[0].what.find("RunInGrpcContext()"), std::string::npos);
  EXPECT_NE(b[4].what.find("\"grpc.server_uri\""), std::string::npos);
}

TEST(SeamWallScan, AcceptsTheApisOwnNamesAndLookalikes) {
  EXPECT_TRUE(FindBreaches(
                  "grpc_pollset_set* interested_parties() override;\n"
                  "if (CoreConfigurationBuilt()) return;\n"
                  "std::unique_ptr<TargetResolver> resolver_;\n"
                  "RunInGrpcContext([&]() { watcher->Start(); });\n"
                  "const char* s = StateText(GRPC_CHANNEL_READY);\n"
                  "int Timestamp = 0;  // not gRPC's\n"
                  "const char* host = \"grpcio.example\";\n",
                  kApi)
                  .empty());
}

TEST(SeamWallScan, CommentsDoNotCountAndKeepTheLineNumbers) {
  const std::vector<Breach> b = FindBreaches(
      "// grpc_core::ExecCtx exec_ctx;\n"
      "/* #include \"src/core/lib/iomgr/timer.h\"\n"
      "   grpc_timer_init(...) */ int x = 1;\n"
      "const char* url = \"http://host\"; ExecCtx e;  // ExecCtx\n"
      "#include \"src/core/lib/iomgr/closure.h\"  // after a comment\n",
      kApi);
  ASSERT_EQ(b.size(), 2u) << Describe("text", b);
  EXPECT_EQ(b[0].line, 4);
  EXPECT_NE(b[0].what.find("names ExecCtx"), std::string::npos);
  EXPECT_EQ(b[1].line, 5);
}

TEST(SeamWallScan, WithoutCommentsBlanksCommentsOnly) {
  const std::string source =
      "int a = 1'000;  // one\n"
      "char q = '\"';  /* \"not\n"
      "a string */ const char* s = \"// kept\";\n"
      "auto r = R\"x(/* kept */)x\";\n";
  const std::string out = WithoutComments(source);
  EXPECT_EQ(out.size(), source.size());
  EXPECT_EQ(out,
            "int a = 1'000;        \n"
            "char q = '\"';         \n"
            "            const char* s = \"// kept\";\n"
            "auto r = R\"x(/* kept */)x\";\n");
}

}  // namespace
