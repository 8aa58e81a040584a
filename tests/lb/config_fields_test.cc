// The config's field table against what derives from it and what it
// describes: README's service-config table lists every field with the
// table's default; the defaults the table states are the ones the parser
// starts from; every integer field is read in the table's range, with the
// messages of the one integer reader; every field of the table is known.
#include <stdlib.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"
#include "policy/lb/config/config.h"
#include "policy/lb/config/config_fields.h"
#include "policy/lb/config/unknown_fields.h"
#include "src/core/lib/json/json.h"

namespace aperture_lb {
namespace {

std::string ReadReadme() {
  const char* dir = getenv("TEST_SRCDIR");
  const char* workspace = getenv("TEST_WORKSPACE");
  const std::string path = absl::StrCat(dir != nullptr ? dir : ".", "/",
                                        workspace != nullptr ? workspace : "",
                                        "/README.md");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string WithoutBackquotes(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c != '`') out += c;
  }
  return out;
}

// README's "Service config" table: field -> default as the README gives
// it. A row names one or more fields (`a`, `b`) and gives either one
// default each ("5, 3000, 6000") or one for all ("0").
std::map<std::string, std::string> ReadmeDefaults(const std::string& readme) {
  std::map<std::string, std::string> out;
  const size_t section = readme.find("\n## Service config\n");
  if (section == std::string::npos) return out;
  const size_t end = readme.find("\n## ", section + 1);
  const std::string body = readme.substr(section, end - section);
  bool in_table = false;
  for (absl::string_view line : absl::StrSplit(body, '\n')) {
    if (!absl::ConsumePrefix(&line, "|")) {
      if (in_table) break;  // the table ended
      continue;
    }
    in_table = true;
    std::vector<absl::string_view> cells = absl::StrSplit(line, " | ");
    if (cells.size() < 3) continue;  // the |---| line
    cells[0] = absl::StripAsciiWhitespace(cells[0]);
    if (cells[0] == "field") continue;  // the header
    std::vector<std::string> names;
    for (absl::string_view name : absl::StrSplit(cells[0], ", ")) {
      names.push_back(WithoutBackquotes(name));
    }
    const std::string defaults = WithoutBackquotes(cells[1]);
    std::vector<std::string> each = absl::StrSplit(defaults, ", ");
    if (names.size() == 1 || each.size() != names.size()) {
      each.assign(names.size(), defaults);
    }
    for (size_t i = 0; i < names.size(); ++i) out[names[i]] = each[i];
  }
  return out;
}

TEST(ConfigFields, ReadmeListsEveryFieldWithItsDefault) {
  const std::string readme = ReadReadme();
  ASSERT_FALSE(readme.empty()) << "README.md not found in the runfiles";
  const std::map<std::string, std::string> listed = ReadmeDefaults(readme);
  ASSERT_FALSE(listed.empty()) << "no table under \"## Service config\"";
  for (const ConfigField& field : ConfigFields()) {
    auto it = listed.find(field.name);
    ASSERT_NE(it, listed.end()) << field.name << " is not in README's table";
    EXPECT_EQ(it->second, DefaultText(field)) << field.name;
  }
  for (const auto& kv : listed) {
    EXPECT_NE(FindConfigField(kv.first), nullptr)
        << "README lists " << kv.first << ", which is no field";
  }
  EXPECT_EQ(listed.size(), ConfigFields().size());
}

absl::StatusOr<ApertureSettings> Parse(const std::string& json) {
  auto parsed = grpc_core::Json::Parse(json);
  if (!parsed.ok()) return parsed.status();
  return ParseApertureSettings(*parsed);
}

// A default written as a name ("smooth") is the value the settings start
// with; one derived from the settings is the number they start with.
TEST(ConfigFields, StatedDefaultsAreTheParsersDefaults) {
  const ApertureSettings defaults;
  size_t named = 0;
  for (const ConfigField& field : ConfigFields()) {
    if (field.access.load == nullptr) continue;
    if (field.reader.type == FieldType::kString) {
      ++named;
      const std::string json =
          absl::StrCat("{\"", field.name, "\":\"", DefaultText(field), "\"}");
      auto s = Parse(json);
      ASSERT_TRUE(s.ok()) << json << " -> " << s.status();
      EXPECT_EQ(field.access.load(*s), field.access.load(defaults)) << json;
    } else if (field.default_text == nullptr) {
      ASSERT_TRUE(field.access.load(defaults).has_value()) << field.name;
      const std::string json =
          absl::StrCat("{\"", field.name, "\":", DefaultText(field), "}");
      auto s = Parse(json);
      ASSERT_TRUE(s.ok()) << json << " -> " << s.status();
      EXPECT_EQ(field.access.load(*s), field.access.load(defaults)) << json;
    }
  }
  EXPECT_EQ(named, 3u);  // mode, pickMetric, affinity
}

std::string ErrorsOf(const std::string& json) {
  auto s = Parse(json);
  return s.ok() ? "" : std::string(s.status().message());
}

// Every integer field goes through the one integer reader with its own
// range: both bounds accepted, one past either refused, a string refused,
// each with the reader's message naming the field.
TEST(ConfigFields, EveryIntegerFieldIsReadInItsRange) {
  size_t integers = 0;
  for (const ConfigField& field : ConfigFields()) {
    if (field.reader.type != FieldType::kInteger) continue;
    ++integers;
    const FieldReader& r = field.reader;
    const uint64_t lo = r.zero_means != nullptr ? 0 : r.min;
    const std::string range = absl::StrCat("an integer in [", lo, ", ", r.max, "]");
    const std::string name = absl::StrCat("field:", field.name, " error:");
    auto with = [&field](const std::string& value) {
      return absl::StrCat("{\"", field.name, "\":", value, "}");
    };
    for (uint64_t bound : {lo, r.max}) {
      // (A rule between fields may still refuse it: maxEjectionMs 1 is
      // below the default ejectionMs.)
      const std::string errors = ErrorsOf(with(absl::StrCat(bound)));
      EXPECT_EQ(errors.find(name + "must be an integer"), std::string::npos) << errors;
      EXPECT_EQ(errors.find(name + "must be 0 ("), std::string::npos) << errors;
    }
    const std::string above =
        r.max == UINT64_MAX ? "18446744073709551616" : absl::StrCat(r.max + 1);
    EXPECT_NE(ErrorsOf(with(above)).find(
                  absl::StrCat(name, "must be ", range, ", got ", above)),
              std::string::npos)
        << field.name;
    if (lo > 0) {
      EXPECT_NE(ErrorsOf(with(absl::StrCat(lo - 1))).find(
                    absl::StrCat(name, "must be ", range, ", got ", lo - 1)),
                std::string::npos)
          << field.name;
    }
    if (r.zero_means != nullptr) {
      EXPECT_NE(ErrorsOf(with(absl::StrCat(r.min - 1)))
                    .find(absl::StrCat(name, "must be 0 (", r.zero_means,
                                       ") or at least ", r.min, ", got ", r.min - 1)),
                std::string::npos)
          << field.name;
    }
    EXPECT_NE(ErrorsOf(with("\"1\"")).find(
                  absl::StrCat(name, "is not a number (must be ", range, ")")),
              std::string::npos)
        << field.name;
    EXPECT_NE(ErrorsOf(with("1.5")).find(name + "must be "), std::string::npos)
        << field.name;
  }
  EXPECT_GE(integers, 20u);
}

// The known-field list is the table: none of its names is unknown, and a
// name one letter off is ignored with a warning naming the field it misses.
TEST(ConfigFields, TheKnownFieldsAreTheTables) {
  for (const ConfigField& field : ConfigFields()) {
    const std::string errors = ErrorsOf(absl::StrCat("{\"", field.name, "\":null}"));
    EXPECT_NE(errors.find(absl::StrCat("field:", field.name, " error:is not a")),
              std::string::npos)
        << errors;  // null is no value of any field: read, so known
    EXPECT_TRUE(UnknownFieldWarnings(grpc_core::Json::Object{{field.name, grpc_core::Json(1)}}).empty())
        << field.name;
    const std::string typo = absl::StrCat(field.name, "x");
    auto parsed = Parse(absl::StrCat("{\"", typo, "\":1}"));
    ASSERT_TRUE(parsed.ok()) << typo << ": " << parsed.status();
    EXPECT_EQ(parsed->config_warnings,
              std::vector<std::string>{absl::StrCat("unknown field \"", typo,
                                                    "\" ignored (did you mean \"",
                                                    field.name, "\"?)")})
        << typo;
  }
}

}  // namespace
}  // namespace aperture_lb
