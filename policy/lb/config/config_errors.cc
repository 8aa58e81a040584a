#include "policy/lb/config/config_errors.h"

#include <algorithm>

#include <stdio.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "policy/lb/config/config_fields.h"

namespace aperture_lb {

void ConfigErrors::Add(absl::string_view field, absl::string_view message) {
  const ConfigField* known = FindConfigField(field);
  // An entry of a map field ("weights[...]") is listed with the field.
  if (known == nullptr) known = FindConfigField(field.substr(0, field.find('[')));
  const size_t rank =
      known == nullptr ? 0 : 1 + static_cast<size_t>(known - ConfigFields().data());
  entries_.push_back({rank, absl::StrCat("field:", field, " error:", message)});
}

void ConfigErrors::AddAfterFields(absl::string_view field,
                                  absl::string_view message) {
  entries_.push_back({1 + ConfigFields().size(),
                      absl::StrCat("field:", field, " error:", message)});
}

absl::Status ConfigErrors::ToStatus() const {
  std::vector<Entry> listed = entries_;
  std::stable_sort(listed.begin(), listed.end(),
                   [](const Entry& a, const Entry& b) { return a.rank < b.rank; });
  std::vector<absl::string_view> texts;
  for (const Entry& e : listed) texts.push_back(e.text);
  return absl::InvalidArgumentError(
      absl::StrCat("errors validating aperture LB policy config: [",
                   absl::StrJoin(texts, "; "), "]"));
}

std::string WeightsEntryField(absl::string_view address) {
  constexpr size_t kShown = 64;
  std::string out = "weights[\"";
  for (size_t i = 0; i < address.size() && i < kShown; ++i) {
    const unsigned char c = static_cast<unsigned char>(address[i]);
    char escaped[8];
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F) {
      snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else if (c >= 0x80) {
      snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (address.size() > kShown) out += "...";
  return out + "\"]";
}

}  // namespace aperture_lb
