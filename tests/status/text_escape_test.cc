// ap_text_escape: UTF-8 well-formedness and the terminal / JSON escapes.
#include <stdlib.h>

#include <string>

#include <gtest/gtest.h>

extern "C" {
#include "policy/status/ap_json_string.h"
#include "policy/status/ap_text_escape.h"
}

namespace {

size_t SeqLen(const std::string &s) {
  return ap_utf8_sequence_length(reinterpret_cast<const unsigned char *>(s.data()), s.size());
}

TEST(Utf8, SequenceLengths) {
  EXPECT_EQ(SeqLen("a"), 1u);
  EXPECT_EQ(SeqLen("\xc3\xa9"), 2u);          // é
  EXPECT_EQ(SeqLen("\xe2\x82\xac"), 3u);      // €
  EXPECT_EQ(SeqLen("\xf0\x9f\x98\x80"), 4u);  // emoji
  EXPECT_EQ(SeqLen("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(SeqLen("\xe0\x80\xaf"), 0u);      // overlong
  EXPECT_EQ(SeqLen("\xed\xa0\x80"), 0u);      // surrogate
  EXPECT_EQ(SeqLen("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(SeqLen("\xff"), 0u);
  EXPECT_EQ(SeqLen("\xe2\x82"), 0u);          // cut short
  EXPECT_EQ(SeqLen(""), 0u);
  EXPECT_EQ(ap_utf8_sequence_length(nullptr, 3), 0u);
}

std::string Term(const std::string &s, size_t cap = 256) {
  std::string out(cap, '?');
  return ap_escape_for_terminal(s.c_str(), &out[0], cap);
}

// What ap_json_write_string writes between the quotes.
std::string Json(const std::string &s) {
  char *buf = nullptr;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ap_json_write_string(f, s.c_str());
  fclose(f);
  std::string out(buf, len);
  free(buf);
  EXPECT_GE(out.size(), 2u);
  EXPECT_EQ(out.front(), '"');
  EXPECT_EQ(out.back(), '"');
  return out.substr(1, out.size() - 2);
}

TEST(Escape, TerminalShowsControlsAndBadBytesAsHex) {
  EXPECT_EQ(Term("10.0.0.1:443"), "10.0.0.1:443");
  EXPECT_EQ(Term("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(Term("\x07\x7f"), "\\x07\\x7f");
  EXPECT_EQ(Term("c1:\xc2\x9b"), "c1:\\xc2\\x9b");  // C1 CSI
  EXPECT_EQ(Term("\xff" "x"), "\\xffx");
  EXPECT_EQ(Term("back\\slash"), "back\\\\slash");
  EXPECT_EQ(Term("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 text passes
  EXPECT_EQ(Term(""), "");
  char buf[4];
  EXPECT_STREQ(ap_escape_for_terminal(nullptr, buf, sizeof buf), "");
  EXPECT_STREQ(ap_escape_for_terminal("x", nullptr, 5), "");
}

TEST(Escape, TerminalCutsWithAnEllipsis) {
  EXPECT_EQ(Term("abcdefghij", 8), "abcd...");
  EXPECT_EQ(Term("\x1b\x1b\x1b", 8), "\\x1b...");
  EXPECT_EQ(Term("\x1b\x1b\x1b", 6), "...");
  EXPECT_EQ(Term("abc", 4), "abc");
}

// What the status server does to the strings it sends: valid UTF-8 is
// kept as it is, each bad byte becomes U+FFFD.
TEST(Utf8, ValidityAndRepair) {
  EXPECT_TRUE(ap_utf8_valid("caf\xc3\xa9 \xf0\x9f\x98\x80"));
  EXPECT_TRUE(ap_utf8_valid("\x1b[2J\xc2\x9b"));  // controls are valid UTF-8
  EXPECT_TRUE(ap_utf8_valid(""));
  EXPECT_TRUE(ap_utf8_valid(nullptr));
  EXPECT_FALSE(ap_utf8_valid("a\xff"));
  EXPECT_FALSE(ap_utf8_valid("\xed\xa0\x80"));  // surrogate
  EXPECT_FALSE(ap_utf8_valid("\xc0\xaf"));      // overlong
  EXPECT_FALSE(ap_utf8_valid("\xe2\x82"));      // cut short
  auto repaired = [](const char *s) {
    char *r = ap_utf8_repaired(s);
    std::string out = r != nullptr ? r : "(null)";
    free(r);
    return out;
  };
  EXPECT_EQ(repaired("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(repaired("a\xff" "b"), "a\xef\xbf\xbd" "b");
  EXPECT_EQ(repaired("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(repaired("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(repaired("\xff\xfe\xfd"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(repaired(""), "");
  EXPECT_EQ(ap_utf8_repaired(nullptr), nullptr);
  EXPECT_TRUE(ap_utf8_valid(repaired("\x80\xc3(\xf5\xbf").c_str()));
}

TEST(Escape, JsonIsValidUtf8) {
  EXPECT_EQ(Json("a\"b\\c"), "a\\\"b\\\\c");
  EXPECT_EQ(Json("c1:\xc2\x9b\xc2\x80"), "c1:\\u009b\\u0080");  // C1 CSI, PAD
  EXPECT_EQ(Json("\xc2\xa0"), "\xc2\xa0");  // U+00A0 is not a control
  EXPECT_EQ(Json("\n\x1b\x7f"), "\\n\\u001b\\u007f");
  EXPECT_EQ(Json("x\xffy"), "x\xef\xbf\xbdy");
  EXPECT_EQ(Json("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(Json("caf\xc3\xa9"), "caf\xc3\xa9");
}

}  // namespace
