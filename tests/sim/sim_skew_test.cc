// `sim balance --client-rates`: clients at unequal rates, without and with
// the mechanism that evens their load (interop/sim/sim_skew.h, the core's
// ap_skew). Runs the real simulator; the figures without the mechanism
// are worked out here from the definition (every server's expected load is
// the rates of the clients covering it, split by pick weight), the ones
// with it are held to the targets, and equal clients must see
// exactly what they saw before.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/sim/mini_json.h"
#include "tests/sim/run_sim.h"

namespace {

using run_sim::Result;
using run_sim::RunSim;

mini_json::Value Balance(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"balance"};
  all.insert(all.end(), args.begin(), args.end());
  all.push_back("--json");
  Result r = RunSim(all);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return mini_json::Parse(r.out);
}

// The skew section's object for `mode`.
const mini_json::Value& Mode(const mini_json::Value& v, const std::string& mode) {
  const auto& modes = v["skew"]["modes"];
  for (size_t i = 0; i < modes.size(); i++) {
    if (modes[i]["mode"].str == mode) return modes[i];
  }
  throw std::runtime_error("no mode " + mode);
}

TEST(SimSkew, TheContractCommandNamesTheRatesAndMeetsTheTarget) {
  Result r = RunSim({"balance", "--servers", "100", "--clients", "100",
                     "--min-aperture", "12", "--client-rates", "lognormal:0.5",
                     "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto v = mini_json::Parse(r.out);
  const auto& rates = v["client_rates"];
  EXPECT_EQ(rates["spec"].str, "lognormal:0.5");
  EXPECT_EQ(rates["seed"].num(), 1);
  ASSERT_EQ(rates["rates"].size(), 100u);
  double sum = 0;
  for (size_t i = 0; i < 100; i++) sum += rates["rates"][i].num();
  EXPECT_NEAR(sum / 100, 1, 0.15) << "lognormal of mean 1";
  EXPECT_NEAR(rates["cv"].num(), 0.5, 0.15);
  for (const char* mode : {"smooth", "continuous"}) {
    const auto& m = Mode(v, mode);
    EXPECT_GT(m["without"]["load_max_mean"].num(), 1.2) << mode;
    EXPECT_LE(m["with"]["load_max_mean"].num(), 1.10) << mode;
    EXPECT_EQ(m["without"]["connections_per_client"].num(), 12) << mode;
    EXPECT_GT(m["with"]["connections_per_client"].num(), 12)
        << mode << ": the heavy clients hold more";
    EXPECT_GT(m["with"]["widened_clients"].num(), 0) << mode;
  }
  // The earlier sections are there, unchanged in shape.
  EXPECT_TRUE(v.has("single"));
  EXPECT_TRUE(v.has("multi"));
  EXPECT_TRUE(v.has("sre"));
}

TEST(SimSkew, OneClientAtTenTimesTheOthers) {
  // Smooth at 100 x 100, A 12: every server gets 1 from the clients
  // covering it; client 0's twelve get 9/12 more. Mean (99 + 10) / 100.
  const auto v = Balance({"--servers", "100", "--clients", "100", "--min-aperture",
                      "12", "--client-rates", "one:10"});
  const auto& m = Mode(v, "smooth");
  EXPECT_NEAR(m["without"]["load_max_mean"].num(), (1 + 9.0 / 12) / 1.09, 1e-9);
  EXPECT_LE(m["with"]["load_max_mean"].num(), 1.05);
  EXPECT_EQ(m["with"]["widened_clients"].num(), 1);
}

TEST(SimSkew, TheFleetCaseEightTimesOnTilingWindows) {
  // 8 servers, 4 clients, A 2: client 0's two servers get 8/2 each, the
  // others 1/2; mean 11/8.
  const auto v = Balance({"--servers", "8", "--clients", "4", "--min-aperture", "2",
                      "--client-rates", "8,1,1,1"});
  for (const char* mode : {"smooth", "continuous"}) {
    const auto& m = Mode(v, mode);
    EXPECT_NEAR(m["without"]["load_max_mean"].num(), 4 / (11.0 / 8), 1e-9) << mode;
    EXPECT_LE(m["with"]["load_max_mean"].num(), 1.05) << mode;
    // Client 0 on the whole ring, the others on their two.
    EXPECT_EQ(m["with"]["connections_per_client"].num(), 3.5) << mode;
    EXPECT_EQ(m["with"]["connections_per_client_max"].num(), 8) << mode;
  }
  const auto& rates = v["client_rates"]["rates"];
  ASSERT_EQ(rates.size(), 4u);
  EXPECT_EQ(rates[0].num(), 8);
  EXPECT_EQ(rates[3].num(), 1);
}

TEST(SimSkew, EqualClientsSeeNoChange) {
  for (const std::vector<std::string>& fleet :
       {std::vector<std::string>{"100", "100", "12"}, {"8", "4", "2"},
        {"10", "4", "2"}, {"100", "33", "12"}}) {
    const auto v = Balance({"--servers", fleet[0], "--clients", fleet[1],
                        "--min-aperture", fleet[2], "--client-rates", "1"});
    const std::string at = fleet[0] + "x" + fleet[1];
    // The modes that load equal clients evenly: nothing moves.
    for (const char* mode : {"continuous", "smooth", "mesh"}) {
      const auto& m = Mode(v, mode);
      EXPECT_EQ(m["with"]["load_max_mean"].num(), m["without"]["load_max_mean"].num())
          << mode << " " << at;
      EXPECT_EQ(m["with"]["connections_per_client"].num(),
                m["without"]["connections_per_client"].num())
          << mode << " " << at;
      EXPECT_EQ(m["with"]["widened_clients"].num(), 0) << mode << " " << at;
    }
    // The others are uneven even for equal clients (whole members, random
    // or key-placed subsets); the weights can only help them, and their
    // width never changes.
    for (const char* mode : {"discrete", "vdc", "random", "stable"}) {
      const auto& m = Mode(v, mode);
      EXPECT_LE(m["with"]["load_max_mean"].num(), m["without"]["load_max_mean"].num())
          << mode << " " << at;
      EXPECT_EQ(m["with"]["connections_per_client"].num(),
                m["without"]["connections_per_client"].num())
          << mode << " " << at;
      EXPECT_EQ(m["with"]["widened_clients"].num(), 0) << mode << " " << at;
    }
  }
}

TEST(SimSkew, ListsCycleAndDrawsAreSeeded) {
  const auto v = Balance({"--servers", "20", "--clients", "5", "--min-aperture", "4",
                      "--client-rates", "2,1"});
  const auto& rates = v["client_rates"]["rates"];
  ASSERT_EQ(rates.size(), 5u);
  const double want[5] = {2, 1, 2, 1, 2};
  for (size_t i = 0; i < 5; i++) EXPECT_EQ(rates[i].num(), want[i]);
  // Three draws: seeds 7, 8, 9, a figure per draw, the median and the
  // worst of them.
  const auto d = Balance({"--servers", "50", "--clients", "50", "--min-aperture", "6",
                      "--client-rates", "lognormal:1", "--seed", "7", "--draws", "3"});
  EXPECT_EQ(d["client_rates"]["seed"].num(), 7);
  EXPECT_EQ(d["client_rates"]["draws"].num(), 3);
  const auto& m = Mode(d, "smooth");
  ASSERT_EQ(m["draws"].size(), 3u);
  std::vector<double> without;
  for (size_t i = 0; i < 3; i++) without.push_back(m["draws"][i]["without"].num());
  std::sort(without.begin(), without.end());
  EXPECT_EQ(m["without"]["load_max_mean"].num(), without[1]);
  EXPECT_EQ(m["without"]["load_max_mean_worst"].num(), without[2]);
  // Another seed, other rates; the same seed, the same bytes.
  const auto e = Balance({"--servers", "50", "--clients", "50", "--min-aperture", "6",
                      "--client-rates", "lognormal:1", "--seed", "8"});
  EXPECT_EQ(Mode(e, "smooth")["draws"][0]["without"].num(),
            m["draws"][1]["without"].num());
  Result a = RunSim({"balance", "--client-rates", "lognormal:0.3", "--json"});
  Result b = RunSim({"balance", "--client-rates", "lognormal:0.3", "--json"});
  EXPECT_EQ(a.out, b.out);
}

TEST(SimSkew, TheTableShowsTheJsonFigures) {
  Result t = RunSim({"balance", "--servers", "8", "--clients", "4",
                     "--min-aperture", "2", "--client-rates", "8,1,1,1"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("clients at unequal rates: 8 servers, 4 clients, min "
                       "aperture 2, rates 8,1,1,1"),
            std::string::npos)
      << t.out;
  const auto v = Balance({"--servers", "8", "--clients", "4", "--min-aperture", "2",
                      "--client-rates", "8,1,1,1"});
  const auto& m = Mode(v, "smooth");
  char row[200];
  std::snprintf(row, sizeof row, "  smooth      | %9.3f %8s | %9.3f %8s | %6.2f %6.2f %6.0f",
                m["without"]["load_max_mean"].num(), "", m["with"]["load_max_mean"].num(),
                "", m["without"]["connections_per_client"].num(),
                m["with"]["connections_per_client"].num(),
                m["with"]["connections_per_client_max"].num());
  EXPECT_NE(t.out.find(row), std::string::npos) << row << "\n" << t.out;
}

TEST(SimSkew, WithoutTheFlagTheOutputHasNoSkewSection) {
  const auto v = Balance({});
  EXPECT_FALSE(v.has("client_rates"));
  EXPECT_FALSE(v.has("skew"));
}

TEST(SimSkew, BadRatesExitTwoNamingTheFlag) {
  for (const char* bad : {"lognormal:0", "lognormal:11", "lognormal:", "lognormal:x",
                          "x", "1,0", "1,-2", "1,,2", "one:0", "one:", ""}) {
    Result r = RunSim({"balance", "--client-rates", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--client-rates"), std::string::npos) << bad << ": " << r.err;
  }
  Result seed = RunSim({"balance", "--seed", "3"});
  EXPECT_EQ(seed.exit_code, 2);
  EXPECT_NE(seed.err.find("need --client-rates"), std::string::npos) << seed.err;
  for (const char* draws : {"0", "101"}) {
    Result r = RunSim({"balance", "--client-rates", "1", "--draws", draws});
    EXPECT_EQ(r.exit_code, 2) << draws;
    EXPECT_NE(r.err.find("--draws"), std::string::npos) << r.err;
  }
  Result big = RunSim({"balance", "--servers", "1000", "--clients", "1000",
                       "--client-rates", "1"});
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("exceeds 250000"), std::string::npos) << big.err;
}

}  // namespace
