// The fleet's default run end to end (real server and client processes, a
// reduced call count through the usual flags): its summary agrees with the
// report's figures and with what it prints, and its chart's axes are
// shared by every panel and cover the data.
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/interop/fleet_helper.h"

namespace {

constexpr int kServers = 6;

struct FleetOutput {
  Json report;
  std::string summary_line;  // the printed summary line of smooth
  std::string svg;
};

// Runs `fleet` with no --scenario: the default run, shortened.
FleetOutput RunDefault(const std::string &dir) {
  FleetOutput out;
  Child fleet(InteropBinary("fleet"),
              {"--servers", std::to_string(kServers), "--duration-s", "1", "--rate", "150",
               "--out-dir", dir, "--svg", dir + "/chart.svg"},
              dir + "/fleet.log");
  out.summary_line = fleet.WaitLine("smooth: ", 240000);
  int status = fleet.Wait(240000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "fleet failed, see " << dir << "/fleet.log";
  out.report = ReadJson(dir + "/report.json");
  std::ifstream svg(dir + "/chart.svg");
  std::stringstream text;
  text << svg.rdbuf();
  out.svg = text.str();
  return out;
}

std::string Format(const char *fmt, double v) {
  char buf[64];
  snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

// The value of attribute `name` in one SVG element's text; NAN if absent.
double Attr(const std::string &element, const std::string &name) {
  std::smatch m;
  if (!std::regex_search(element, m, std::regex(" " + name + "=\"([-0-9.e+]+)\""))) return NAN;
  return std::stod(m[1]);
}

std::string StrAttr(const std::string &element, const std::string &name) {
  std::smatch m;
  if (!std::regex_search(element, m, std::regex(" " + name + "=\"([^\"]*)\""))) return "";
  return m[1];
}

// Every match of `pattern` in `text`.
std::vector<std::string> All(const std::string &text, const std::string &pattern) {
  std::vector<std::string> out;
  std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back(it->str());
  }
  return out;
}

class FleetDefaultTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(TempDir("fleet_default"));
    out_ = new FleetOutput(RunDefault(*dir_));
  }
  static void TearDownTestSuite() {
    delete out_;
    delete dir_;
  }
  static std::string *dir_;
  static FleetOutput *out_;
};
std::string *FleetDefaultTest::dir_ = nullptr;
FleetOutput *FleetDefaultTest::out_ = nullptr;

TEST_F(FleetDefaultTest, RunsApertureBesideRoundRobinAloneAndWithServicesSharing) {
  ASSERT_TRUE(out_->report);
  const json_value *report = out_->report.get();
  for (const char *mode : {"smooth", "continuous", "round_robin"}) {
    const json_value *r = FindRun(report, "balance", mode);
    ASSERT_NE(nullptr, r) << mode;
    EXPECT_EQ(1, io_json_bool(io_json_get(r, "complete"), 0)) << mode;
    EXPECT_EQ(0, Num(r, "failed")) << mode;
  }
  for (const char *mode : {"smooth", "continuous", "random", "round_robin"}) {
    const json_value *r = FindRun(report, "multi-service", mode);
    ASSERT_NE(nullptr, r) << mode;
    EXPECT_EQ(3, io_json_size(io_json_get(r, "services"))) << mode;
  }
  // aperture's point: each client connects to a few servers, round_robin to all
  const json_value *rr = FindRun(report, "balance", "round_robin");
  EXPECT_EQ(4 * kServers, Num(rr, "connections_total"));
  EXPECT_LT(Num(FindRun(report, "balance", "smooth"), "connections_total"), 4 * kServers);
}

TEST_F(FleetDefaultTest, FairNoiseFollowsTheCallCount) {
  ASSERT_TRUE(out_->report);
  const json_value *runs = io_json_get(out_->report.get(), "runs");
  ASSERT_GT(io_json_size(runs), 0u);
  for (size_t i = 0; i < io_json_size(runs); i++) {
    const json_value *r = io_json_at(runs, i);
    double calls = Num(r, "calls", "mean") * kServers;
    double fair = Num(r, "fair_max_mean");
    // normal approximation: the busiest of 6 counts is ~1.27 sd above the
    // mean (sd = sqrt(calls (1/6)(5/6))); the Monte Carlo agrees within 25%
    double m = calls / kServers;
    double approx = 1.267 * std::sqrt(m * (1 - 1.0 / kServers)) / m;
    EXPECT_NEAR(approx, fair - 1, 0.25 * approx) << io_json_string(io_json_get(r, "mode"));
  }
}

TEST_F(FleetDefaultTest, SummaryFiguresAreTheTablesFigures) {
  ASSERT_TRUE(out_->report);
  const json_value *report = out_->report.get();
  const json_value *summary = io_json_get(report, "summary");
  const json_value *entries = io_json_get(summary, "entries");
  ASSERT_EQ(7u, io_json_size(entries));
  std::string text = io_json_string(io_json_get(summary, "text"));
  for (size_t i = 0; i < io_json_size(entries); i++) {
    const json_value *e = io_json_at(entries, i);
    std::string scenario = io_json_string(io_json_get(e, "scenario"));
    std::string mode = io_json_string(io_json_get(e, "mode"));
    const json_value *r = FindRun(report, scenario, mode);
    ASSERT_NE(nullptr, r) << scenario << "/" << mode;
    const json_value *rr = FindRun(report, scenario, "round_robin");
    ASSERT_NE(nullptr, rr);
    EXPECT_EQ(Num(r, "connections_total"), Num(e, "connections"));
    EXPECT_NEAR(Num(r, "connections_total") / Num(rr, "connections_total"),
                Num(e, "connections_vs_round_robin"), 1e-3);
    double busiest = Num(r, "calls", "max") / Num(r, "calls", "mean") - 1;
    EXPECT_NEAR(busiest, Num(e, "busiest_above_mean"), 1e-3) << mode;
    EXPECT_NEAR(Num(r, "fair_max_mean") - 1, Num(e, "fair_above_mean"), 1e-3);
    EXPECT_NEAR(Num(r, "calls", "mean"), Num(e, "calls_per_server"), 0.5);
    // the words carry the same figures: the text rounds the raw figure to
    // 0.1%, the JSON holds it cut to 4 decimals, so either neighbour of the
    // JSON value within that cut may be the one the text shows
    const double above = Num(e, "busiest_above_mean");
    std::vector<std::string> pcts;
    for (double d : {-5e-5, 0.0, 5e-5}) pcts.push_back(Format("%.1f%%", 100 * (above + d)));
    auto text_has_one = [&](const std::string &before, const std::string &after) {
      for (const std::string &pct : pcts) {
        if (text.find(before + pct + after) != std::string::npos) return true;
      }
      return false;
    };
    if (scenario == "balance" && mode != "round_robin") {
      std::string line = mode + ": " + Format("%.0f%%", 100 * Num(e, "connections_vs_round_robin")) +
                         " of round_robin's connections (" + Format("%.0f", Num(e, "connections")) +
                         " vs " + Format("%.0f", Num(rr, "connections_total")) +
                         "), busiest server ";
      EXPECT_TRUE(text_has_one(line, " above the mean")) << line << pcts[1] << "\n" << text;
    } else if (scenario == "multi-service") {
      EXPECT_TRUE(text_has_one(mode + " ", "")) << mode << "\n" << text;
    }
  }
  // what it printed is what it reported
  ASSERT_FALSE(out_->summary_line.empty());
  EXPECT_NE(std::string::npos, text.find("smooth: " + out_->summary_line)) << out_->summary_line;
}

TEST_F(FleetDefaultTest, ChartPanelsShareLabelledAxesCoveringTheData) {
  ASSERT_TRUE(out_->report);
  const json_value *report = out_->report.get();
  std::vector<std::string> heads = All(out_->svg, "<g class=\"panel\"[^>]*>");
  ASSERT_EQ(7u, heads.size());
  // split the chart at panel starts
  std::vector<std::string> bodies;
  for (size_t i = 0; i < heads.size(); i++) {
    size_t at = out_->svg.find(heads[i]);
    size_t end = i + 1 < heads.size() ? out_->svg.find(heads[i + 1]) : out_->svg.size();
    bodies.push_back(out_->svg.substr(at, end - at));
  }
  std::map<std::string, double> axis_max;        // quantity -> its max in the first panel
  std::map<std::string, double> data_max;        // quantity -> largest value in the report
  std::map<std::string, double> axis_px;         // quantity -> this panel's axis height
  const json_value *runs = io_json_get(report, "runs");
  for (size_t i = 0; i < io_json_size(runs); i++) {
    const json_value *servers = io_json_get(io_json_at(runs, i), "servers");
    for (size_t s = 0; s < io_json_size(servers); s++) {
      data_max["calls"] = std::max(data_max["calls"], Num(io_json_at(servers, s), "calls"));
      data_max["connections"] =
          std::max(data_max["connections"], Num(io_json_at(servers, s), "connections_peak"));
    }
  }
  for (size_t p = 0; p < bodies.size(); p++) {
    const std::string &body = bodies[p];
    const json_value *run = FindRun(report, StrAttr(heads[p], "data-scenario"), StrAttr(heads[p], "data-mode"));
    ASSERT_NE(nullptr, run) << heads[p];
    std::vector<std::string> axes = All(body, "<g class=\"axis\"[^>]*>[\\s\\S]*?</g>");
    ASSERT_EQ(2u, axes.size());
    for (const std::string &axis : axes) {
      std::string quantity = StrAttr(axis, "data-quantity");
      double max = Attr(axis, "data-max");
      if (!axis_max.count(quantity)) axis_max[quantity] = max;
      EXPECT_EQ(axis_max[quantity], max) << quantity << " axis differs in panel " << p;
      EXPECT_GE(max, data_max[quantity]) << quantity;
      // numbered ticks: 0 up to the axis maximum, each labelled with its value
      std::vector<std::string> ticks = All(axis, "<text class=\"tick\"[^>]*>[^<]*</text>");
      ASSERT_GE(ticks.size(), 2u);
      double top = 0;
      for (const std::string &t : ticks) {
        double v = Attr(t, "data-value");
        std::string label = t.substr(t.find('>') + 1);
        label = label.substr(0, label.find('<'));
        EXPECT_EQ(v, std::stod(label));
        top = std::max(top, v);
      }
      EXPECT_EQ(max, top);
      std::string line = All(axis, "<line[^>]*>").at(0);  // the vertical axis
      axis_px[quantity] = Attr(line, "y2") - Attr(line, "y1");
    }
    // one bar per server per quantity, its value the report's, one scale for all panels
    const json_value *servers = io_json_get(run, "servers");
    std::vector<std::string> bars = All(body, "<rect class=\"bar\"[^>]*>");
    ASSERT_EQ(2 * io_json_size(servers), bars.size());
    for (const std::string &bar : bars) {
      std::string quantity = StrAttr(bar, "data-quantity");
      std::string name = StrAttr(bar, "data-server");
      double value = Attr(bar, "data-value");
      double expected = -1;
      for (size_t s = 0; s < io_json_size(servers); s++) {
        if (name == io_json_string(io_json_get(io_json_at(servers, s), "name"))) {
          expected = Num(io_json_at(servers, s), quantity == "calls" ? "calls" : "connections_peak");
        }
      }
      EXPECT_EQ(expected, value) << quantity << " " << name;
      // drawn to the axis' scale (coordinates are written to 0.1 px)
      EXPECT_NEAR(axis_px[quantity] * value / axis_max[quantity], Attr(bar, "height"), 0.11)
          << quantity << " " << name;
    }
  }
  EXPECT_EQ(2u, axis_max.size());
}

}  // namespace
