// The chart's text metrics: the width table at a font size, the box a
// placed text covers, shortening and wrapping to a width.
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "interop/fleet/chart_text.h"

namespace {

constexpr int kLines = 4;  // lines a wrap may give here

TEST(ChartText, WidthIsTheTableAtTheFontSize) {
  // DejaVu Sans's advances (2048 units an em) rounded up to 1/1000 em
  EXPECT_NEAR(10 * 0.637, io_chart_text_width("0", 10, 0), 1e-9);
  EXPECT_NEAR(0.975, io_chart_text_width("m", 1, 0), 1e-9);
  EXPECT_NEAR(13 * 1.104, io_chart_text_width("W", 13, 1), 1e-9);
  // Arial / Helvetica's where they are wider: 'J' is 0.295 em in DejaVu Sans
  EXPECT_NEAR(0.500, io_chart_text_width("J", 1, 0), 1e-9);
  EXPECT_NEAR(2 * io_chart_text_width("calls per server", 9, 0),
              io_chart_text_width("calls per server", 18, 0), 1e-9);
  EXPECT_NEAR(io_chart_text_width("ab", 9, 0) + io_chart_text_width("cd", 9, 0),
              io_chart_text_width("abcd", 9, 0), 1e-9);
  for (int c = 32; c <= 126; c++) {
    const char s[2] = {static_cast<char>(c), '\0'};
    EXPECT_GE(io_chart_text_width(s, 10, 1), io_chart_text_width(s, 10, 0)) << s;
    EXPECT_LT(io_chart_text_width(s, 10, 1), 12) << s;  // below a byte outside the table
  }
  EXPECT_NEAR(2 * 12.0, io_chart_text_width("\xc3\xa9", 10, 0), 1e-9);  // é: two bytes
  EXPECT_EQ(0, io_chart_text_width(nullptr, 10, 0));
  EXPECT_EQ(0, io_chart_text_width("", 10, 0));
}

TEST(ChartText, BoxFollowsTheAnchor) {
  chart_text t;
  io_chart_text_set(&t, "0123", 100, 50, 10, 0, CHART_ANCHOR_START);
  const double w = 4 * 6.37;
  EXPECT_NEAR(w, t.width, 1e-9);
  chart_box b = io_chart_text_box(&t);
  EXPECT_NEAR(100, b.x, 1e-9);
  EXPECT_NEAR(w, b.w, 1e-9);
  EXPECT_NEAR(50 - 9.3, b.y, 1e-9);
  EXPECT_NEAR(11.7, b.h, 1e-9);
  t.anchor = CHART_ANCHOR_MIDDLE;
  EXPECT_NEAR(100 - w / 2, io_chart_text_box(&t).x, 1e-9);
  t.anchor = CHART_ANCHOR_END;
  EXPECT_NEAR(100 - w, io_chart_text_box(&t).x, 1e-9);
  // touching edges neither overlap nor leave the box
  const chart_box a = {0, 0, 10, 10}, right = {10, 0, 5, 10}, in = {2, 2, 8, 8};
  EXPECT_FALSE(io_chart_box_overlap(a, right));
  EXPECT_TRUE(io_chart_box_overlap(a, in));
  EXPECT_TRUE(io_chart_box_inside(in, a));
  EXPECT_FALSE(io_chart_box_inside(right, a));
}

TEST(ChartText, FitShortensWithDotsOnlyWhatIsTooWide) {
  char out[CHART_TEXT_MAX];
  io_chart_text_fit("round_robin", 10, 0, 200, out, sizeof(out));
  EXPECT_STREQ("round_robin", out);
  io_chart_text_fit("a mode with a very long name indeed", 10, 0, 80, out, sizeof(out));
  EXPECT_LE(io_chart_text_width(out, 10, 0), 80);
  // no more cut than a character and a space
  EXPECT_GT(io_chart_text_width(out, 10, 0), 80 - io_chart_text_width("m ", 10, 0));
  EXPECT_EQ(0u, std::string("a mode with a very long name indeed")
                    .find(std::string(out).substr(0, strlen(out) - 3)));
  EXPECT_EQ("...", std::string(out).substr(strlen(out) - 3));
  io_chart_text_fit("abc", 10, 0, 1, out, sizeof(out));
  EXPECT_STREQ("...", out);
  io_chart_text_fit("caf\xc3\xa9 au lait", 10, 0, 35, out, sizeof(out));
  EXPECT_STREQ("caf...", out);  // never half of é
}

TEST(ChartText, WrapMovesWholePhrasesAndBreaksOnlyTooWideOnes) {
  char lines[kLines][CHART_TEXT_MAX];
  const char *subtitle[] = {"12 connections;", "busiest server +1.3% vs mean",
                            "(fair random +2.8%)"};
  ASSERT_EQ(2, io_chart_text_wrap(subtitle, 3, 10, 0, 288, lines, kLines));
  EXPECT_STREQ("12 connections; busiest server +1.3% vs mean", lines[0]);
  EXPECT_STREQ("(fair random +2.8%)", lines[1]);
  // all on one line when it fits
  ASSERT_EQ(1, io_chart_text_wrap(subtitle, 3, 10, 0, 400, lines, kLines));
  EXPECT_STREQ("12 connections; busiest server +1.3% vs mean (fair random +2.8%)", lines[0]);
  // a phrase wider than a line breaks between its words, continuing the line
  const char *long_phrase[] = {"ab", "one two three four five six"};
  const double w = io_chart_text_width("ab one two", 10, 0);
  ASSERT_EQ(3, io_chart_text_wrap(long_phrase, 2, 10, 0, w, lines, kLines));
  EXPECT_STREQ("ab one two", lines[0]);
  EXPECT_STREQ("three four", lines[1]);
  EXPECT_STREQ("five six", lines[2]);
  // past max_lines, the last line takes the rest, shortened to fit
  ASSERT_EQ(2, io_chart_text_wrap(long_phrase, 2, 10, 0, w, lines, 2));
  EXPECT_STREQ("ab one two", lines[0]);
  EXPECT_EQ(0u, std::string(lines[1]).find("three"));
  EXPECT_EQ("...", std::string(lines[1]).substr(strlen(lines[1]) - 3));
  EXPECT_LE(io_chart_text_width(lines[1], 10, 0), w);
  // a word wider than a line is shortened
  const char *word[] = {"x", "incomprehensibilities"};
  ASSERT_EQ(2, io_chart_text_wrap(word, 2, 10, 0, 50, lines, kLines));
  EXPECT_STREQ("x", lines[0]);
  EXPECT_LE(io_chart_text_width(lines[1], 10, 0), 50);
  EXPECT_EQ(0, io_chart_text_wrap(subtitle, 0, 10, 0, 288, lines, kLines));
}

}  // namespace
