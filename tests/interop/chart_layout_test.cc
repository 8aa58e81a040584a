// The fleet chart's layout, without processes (the text metrics it uses:
// chart_text_test.cc): every text's estimated width fits its box (its panel, or the chart's header), no text covers a
// bar, a plot area or another text, and the SVG draws exactly the texts the
// layout placed. The runs are the default fleet run's figures (the copy in
// docs/fleet-default.svg before its text was fitted: its subtitles ran past
// the panels, and round_robin's connection bars reached its label) and
// harder cases: 64 servers, seven-digit call counts, a lone panel.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "interop/fleet/chart_text.h"
#include "interop/fleet/fleet_chart_layout.h"
#include "interop/fleet/fleet_chart_svg.h"

namespace {

fleet_run MakeRun(const std::string &scenario, const std::string &mode,
                  const std::vector<long> &calls, const std::vector<long> &conns,
                  double fair_max_mean, const std::string &name_prefix = "s") {
  fleet_run r{};
  snprintf(r.scenario, sizeof(r.scenario), "%s", scenario.c_str());
  snprintf(r.mode, sizeof(r.mode), "%s", mode.c_str());
  r.complete = 1;
  r.n_servers = static_cast<int>(calls.size());
  std::vector<double> c(calls.begin(), calls.end()), k(conns.begin(), conns.end());
  for (int s = 0; s < r.n_servers; s++) {
    snprintf(r.servers[s].name, sizeof(r.servers[s].name), "%s%d", name_prefix.c_str(), s);
    r.servers[s].calls = calls[s];
    r.servers[s].connections_peak = conns[s];
  }
  r.calls = io_fleet_spread_of(c.data(), r.n_servers);
  r.connections = io_fleet_spread_of(k.data(), r.n_servers);
  r.connections_total = std::accumulate(conns.begin(), conns.end(), 0L);
  r.fair_max_mean = fair_max_mean;
  return r;
}

// The default run's figures (bazel run //interop:fleet; README's summary).
std::vector<fleet_run> DefaultRuns() {
  return {
      MakeRun("balance", "smooth", {2994, 2960, 2998, 3023, 3039, 2983, 2985, 2976, 3001, 3040},
              {1, 1, 1, 1, 1, 2, 2, 1, 1, 1}, 1.028),
      MakeRun("balance", "continuous", {2946, 2986, 3033, 2985, 2981, 2968, 3091, 3048, 2952, 2982},
              {2, 1, 1, 1, 1, 1, 2, 1, 1, 1}, 1.028),
      MakeRun("balance", "round_robin",
              {3018, 3000, 3000, 3000, 3000, 2998, 2998, 2996, 2994, 2994},
              {4, 4, 4, 4, 4, 4, 4, 4, 4, 4}, 1.028),
      MakeRun("multi-service", "smooth",
              {2962, 2997, 2978, 2954, 3040, 3020, 3025, 2987, 3012, 3023},
              {3, 3, 3, 3, 4, 3, 3, 3, 3, 4}, 1.028),
      MakeRun("multi-service", "continuous",
              {3030, 3069, 2988, 2942, 3043, 2987, 3018, 2903, 3000, 3020},
              {3, 3, 3, 3, 3, 4, 3, 4, 3, 3}, 1.028),
      MakeRun("multi-service", "random", {1487, 4540, 7455, 2925, 0, 1512, 3012, 1503, 4498, 3066},
              {1, 3, 5, 2, 0, 1, 2, 1, 3, 2}, 1.028),
      MakeRun("multi-service", "round_robin",
              {3008, 2991, 3002, 2994, 2997, 3006, 3009, 2995, 2998, 2999},
              {10, 10, 10, 10, 10, 10, 10, 10, 10, 10}, 1.028),
  };
}

// 64 servers with long names, call counts of seven digits, five modes of a
// long-named scenario (two rows), a failed run that gets no panel.
std::vector<fleet_run> CrowdedRuns() {
  std::vector<fleet_run> runs;
  for (const char *mode : {"continuous", "smooth", "discrete", "random", "round_robin"}) {
    std::vector<long> calls, conns;
    for (int s = 0; s < FLEET_MAX_SERVERS; s++) {
      calls.push_back(1234567 - 9876L * s);
      conns.push_back(1 + s % 7);
    }
    runs.push_back(MakeRun("slow-backend", mode, calls, conns, 1.0012, "backend-"));
  }
  runs[2].servers[0].slow = 1;
  runs[3].servers[5].killed = 1;
  fleet_run failed = MakeRun("slow-backend", "mesh", {1}, {1}, 0);
  failed.complete = 0;
  runs.insert(runs.begin() + 1, failed);
  return runs;
}

struct Layout {
  explicit Layout(const std::vector<fleet_run> &runs) {
    ok = io_fleet_chart_layout(runs.data(), static_cast<int>(runs.size()), &l) == 0;
  }
  ~Layout() { io_fleet_chart_layout_free(&l); }
  fleet_chart_layout l{};
  bool ok = false;
};

std::string Describe(const chart_text &t) {
  std::ostringstream o;
  o << "\"" << t.text << "\" at (" << t.x << ", " << t.y << ") size " << t.size << " width "
    << t.width;
  return o.str();
}

std::string Describe(const chart_box &b) {
  std::ostringstream o;
  o << "[" << b.x << ", " << b.y << " + " << b.w << " x " << b.h << "]";
  return o.str();
}

std::vector<const chart_text *> PanelTexts(const chart_panel &p) {
  int n = io_fleet_chart_panel_texts(&p, nullptr, 0);
  std::vector<const chart_text *> out(n);
  EXPECT_EQ(n, io_fleet_chart_panel_texts(&p, out.data(), n));
  return out;
}

// Each text carries the width the table gives, lies in `box`, and shares
// no area with another.
void ExpectTextsFitApart(const std::vector<const chart_text *> &texts, const chart_box &box) {
  for (size_t i = 0; i < texts.size(); i++) {
    const chart_text &t = *texts[i];
    EXPECT_DOUBLE_EQ(io_chart_text_width(t.text, t.size, t.bold), t.width) << Describe(t);
    EXPECT_GT(t.width, 0) << Describe(t);
    EXPECT_TRUE(io_chart_box_inside(io_chart_text_box(&t), box))
        << Describe(t) << " outside " << Describe(box);
    for (size_t j = i + 1; j < texts.size(); j++) {
      EXPECT_FALSE(io_chart_box_overlap(io_chart_text_box(&t), io_chart_text_box(texts[j])))
          << Describe(t) << " overlaps " << Describe(*texts[j]);
    }
  }
}

void ExpectLayoutFits(const fleet_chart_layout &l) {
  const chart_box chart = {0, 0, l.width, l.height};
  EXPECT_TRUE(io_chart_box_inside(l.header, chart)) << Describe(l.header);
  std::vector<const chart_text *> header;
  for (int i = 0; i < l.n_header; i++) header.push_back(&l.header_lines[i]);
  ExpectTextsFitApart(header, l.header);
  for (int k = 0; k < l.n_panels; k++) {
    const chart_panel &p = l.panels[k];
    SCOPED_TRACE(std::string(p.run->scenario) + " / " + p.run->mode);
    EXPECT_TRUE(io_chart_box_inside(p.frame, chart)) << Describe(p.frame);
    EXPECT_GE(p.frame.y, l.header.y + l.header.h) << "panel over the header";
    for (int j = k + 1; j < l.n_panels; j++) {
      EXPECT_FALSE(io_chart_box_overlap(p.frame, l.panels[j].frame)) << "panels " << k << ", " << j;
    }
    const chart_box own = {0, 0, p.frame.w, p.frame.h};
    EXPECT_TRUE(io_chart_box_inside(p.inner, own)) << Describe(p.inner);
    const std::vector<const chart_text *> texts = PanelTexts(p);
    ExpectTextsFitApart(texts, p.inner);
    for (const chart_plot &plot : p.plots) {
      EXPECT_TRUE(io_chart_box_inside(plot.area, p.inner)) << plot.quantity;
      // the label sits above the plot area, where no bar reaches
      const chart_box label = io_chart_text_box(&plot.label);
      EXPECT_LE(label.y + label.h, plot.area.y) << plot.quantity;
      for (const chart_text *t : texts) {
        EXPECT_FALSE(io_chart_box_overlap(io_chart_text_box(t), plot.area))
            << Describe(*t) << " on the " << plot.quantity << " plot " << Describe(plot.area);
      }
      ASSERT_EQ(p.run->n_servers, plot.n_bars);
      for (int s = 0; s < plot.n_bars; s++) {
        const chart_bar &b = plot.bars[s];
        // drawn to the shared scale, standing on the axis, inside the plot
        EXPECT_NEAR(plot.area.h * b.value / plot.axis_max, b.rect.h, 1e-9) << b.server;
        EXPECT_NEAR(plot.area.y + plot.area.h, b.rect.y + b.rect.h, 1e-9) << b.server;
        EXPECT_TRUE(io_chart_box_inside(b.rect, plot.area)) << b.server << Describe(b.rect);
        for (const chart_text *t : texts) {
          EXPECT_FALSE(io_chart_box_overlap(io_chart_text_box(t), b.rect))
              << Describe(*t) << " on bar " << b.server;
        }
      }
    }
  }
}

// The panels' plots are the same size at the same place, so that a value
// is as tall in every panel; the axes are shared.
void ExpectPlotsAlike(const fleet_chart_layout &l) {
  for (int k = 1; k < l.n_panels; k++) {
    EXPECT_EQ(l.panels[0].frame.h, l.panels[k].frame.h);
    for (int q = 0; q < 2; q++) {
      const chart_plot &a = l.panels[0].plots[q], &b = l.panels[k].plots[q];
      EXPECT_EQ(a.axis_max, b.axis_max) << a.quantity;
      EXPECT_EQ(std::make_tuple(a.area.x, a.area.y, a.area.w, a.area.h),
                std::make_tuple(b.area.x, b.area.y, b.area.w, b.area.h))
          << a.quantity << " in panel " << k;
    }
  }
}

std::string Joined(const chart_text *lines, int n) {
  std::string out;
  for (int i = 0; i < n; i++) out += (i ? " " : "") + std::string(lines[i].text);
  return out;
}

TEST(ChartLayout, DefaultRunsTextFitsItsPanelAndLeavesTheBarsClear) {
  const std::vector<fleet_run> runs = DefaultRuns();
  Layout layout(runs);
  ASSERT_TRUE(layout.ok);
  const fleet_chart_layout &l = layout.l;
  ASSERT_EQ(7, l.n_panels);
  EXPECT_EQ(4 * 300 + 5 * 10, l.width);  // four panels a row, one row per scenario
  EXPECT_EQ(l.panels[0].frame.y, l.panels[2].frame.y);
  EXPECT_LT(l.panels[2].frame.y, l.panels[3].frame.y);
  ExpectLayoutFits(l);
  ExpectPlotsAlike(l);
  EXPECT_EQ(8000, l.panels[0].plots[0].axis_max);
  EXPECT_EQ(10, l.panels[0].plots[1].axis_max);
  // round_robin's 10 connections reach the top of the scale, under no label
  const chart_plot &rr = l.panels[6].plots[1];
  EXPECT_NEAR(rr.area.y, rr.bars[0].rect.y, 1e-9);
  // wrapped, nothing left out
  for (int k = 0; k < l.n_panels; k++) {
    const chart_panel &p = l.panels[k];
    EXPECT_EQ(std::string(p.run->scenario) + " / " + p.run->mode, Joined(p.title, p.n_title));
    EXPECT_EQ(2, p.n_subtitle) << p.run->mode;
    char want[128];
    snprintf(want, sizeof(want),
             "%ld connections; busiest server %+.1f%% vs mean (fair random +2.8%%)",
             p.run->connections_total, 100 * (p.run->calls.max_mean - 1));
    EXPECT_EQ(want, Joined(p.subtitle, p.n_subtitle));
    EXPECT_EQ(10, p.n_names);
  }
  // the header fits the chart on one line each
  ASSERT_EQ(3, l.n_header);
  EXPECT_STREQ("red = slow server, grey = killed/removed", l.header_lines[2].text);
}

TEST(ChartLayout, CrowdedRunsStillFit) {
  const std::vector<fleet_run> runs = CrowdedRuns();
  Layout layout(runs);
  ASSERT_TRUE(layout.ok);
  const fleet_chart_layout &l = layout.l;
  ASSERT_EQ(5, l.n_panels);  // the failed run has none
  EXPECT_STREQ("smooth", l.panels[1].run->mode);
  EXPECT_EQ(l.panels[0].frame.y, l.panels[3].frame.y);
  EXPECT_LT(l.panels[3].frame.y, l.panels[4].frame.y);  // a fifth panel starts a row
  ExpectLayoutFits(l);
  ExpectPlotsAlike(l);
  EXPECT_EQ(1500000, l.panels[0].plots[0].axis_max);
  EXPECT_STREQ("1.5e+06", l.panels[0].plots[0].ticks[2].text);
  // names too wide for a slot of their own label every k-th bar, evenly
  const chart_panel &p = l.panels[0];
  ASSERT_GT(p.n_names, 1);
  EXPECT_LT(p.n_names, FLEET_MAX_SERVERS);
  const int every = std::atoi(p.names[1].text + strlen("backend-"));
  ASSERT_GT(every, 1);
  EXPECT_EQ((FLEET_MAX_SERVERS + every - 1) / every, p.n_names);
  for (int i = 0; i < p.n_names; i++) {
    EXPECT_EQ("backend-" + std::to_string(i * every), std::string(p.names[i].text));
  }
  // the slow server's bar is red, the killed one's grey
  EXPECT_STREQ("#c0392b", l.panels[2].plots[0].bars[0].color);
  EXPECT_STREQ("#7f8c8d", l.panels[3].plots[0].bars[5].color);
  EXPECT_STREQ("#e67e22", l.panels[2].plots[1].bars[0].color);
}

TEST(ChartLayout, ALonePanelWrapsTheHeaderToTheNarrowChart) {
  const std::vector<fleet_run> runs = {DefaultRuns()[5]};
  Layout layout(runs);
  ASSERT_TRUE(layout.ok);
  const fleet_chart_layout &l = layout.l;
  ASSERT_EQ(1, l.n_panels);
  EXPECT_EQ(760, l.width);
  EXPECT_GT(l.n_header, 3);
  ExpectLayoutFits(l);
}

TEST(ChartLayout, NoCompleteRunGivesTheHeaderAlone) {
  fleet_run failed = DefaultRuns()[0];
  failed.complete = 0;
  Layout layout({failed});
  ASSERT_TRUE(layout.ok);
  EXPECT_EQ(0, layout.l.n_panels);
  EXPECT_GE(layout.l.height, layout.l.header.y + layout.l.header.h);
  ExpectLayoutFits(layout.l);
  fleet_chart_layout l;
  EXPECT_EQ(0, io_fleet_chart_layout(nullptr, 0, &l));
  io_fleet_chart_layout_free(&l);
  EXPECT_EQ(-1, io_fleet_chart_layout(nullptr, 1, &l));
  EXPECT_EQ(-1, io_fleet_chart_layout(&failed, 1, nullptr));
}

std::string Fmt(const char *fmt, double v) {
  char buf[32];
  snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

// (x, y, font-size, weight, text) of a text as the SVG writes it
using Drawn = std::tuple<std::string, std::string, std::string, bool, std::string>;

Drawn DrawnOf(const chart_text &t) {
  return {Fmt("%.1f", t.x), Fmt("%.1f", t.y), Fmt("%g", t.size), t.bold != 0, t.text};
}

// Writes the chart of `runs` to a file named `name` and reads it back.
std::string WriteSvg(const std::vector<fleet_run> &runs, const std::string &name) {
  const char *tmp = getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/" + name;
  EXPECT_EQ(0, io_fleet_report_svg(path.c_str(), runs.data(), static_cast<int>(runs.size())));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ChartSvg, DrawsExactlyTheTextsTheLayoutPlaced) {
  const std::vector<std::pair<std::string, std::vector<fleet_run>>> charts = {
      {"default.svg", DefaultRuns()},
      {"crowded.svg", CrowdedRuns()},
      {"alone.svg", {DefaultRuns()[5]}}};
  for (const auto &[name, runs] : charts) {
    SCOPED_TRACE(name);
    const std::string svg = WriteSvg(runs, name);
    EXPECT_NE(std::string::npos,
              svg.find(std::string("font-family=\"") + CHART_FONT_FAMILY + "\">"));
    std::multiset<Drawn> drawn, placed;
    std::regex text_re("<text([^>]*)>([^<]*)</text>");
    std::regex attr_re(" ([a-z-]+)=\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text_re);
         it != std::sregex_iterator(); ++it) {
      std::map<std::string, std::string> attrs;
      const std::string a = (*it)[1];
      for (auto at = std::sregex_iterator(a.begin(), a.end(), attr_re);
           at != std::sregex_iterator(); ++at) {
        attrs[(*at)[1]] = (*at)[2];
      }
      drawn.insert(
          {attrs["x"], attrs["y"], attrs["font-size"], attrs["font-weight"] == "bold", (*it)[2]});
    }
    Layout layout(runs);
    ASSERT_TRUE(layout.ok);
    for (int i = 0; i < layout.l.n_header; i++) placed.insert(DrawnOf(layout.l.header_lines[i]));
    for (int k = 0; k < layout.l.n_panels; k++) {
      for (const chart_text *t : PanelTexts(layout.l.panels[k])) placed.insert(DrawnOf(*t));
      // each panel is drawn at its corner, its texts in its own coordinates
      EXPECT_NE(std::string::npos,
                svg.find("transform=\"translate(" + Fmt("%.1f", layout.l.panels[k].frame.x) + "," +
                         Fmt("%.1f", layout.l.panels[k].frame.y) + ")\""));
    }
    EXPECT_EQ(placed, drawn);
  }
}

TEST(ChartSvg, UnwritablePathFails) {
  const std::vector<fleet_run> runs = DefaultRuns();
  EXPECT_EQ(-1, io_fleet_report_svg("/nonexistent-dir/chart.svg", runs.data(), 1));
}

}  // namespace
