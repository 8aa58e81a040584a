#include "policy/lb/config/unknown_fields.h"

#include <stdint.h>
#include <stdio.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "policy/lb/config/config_fields.h"

namespace aperture_lb {
namespace {

// The longest distance still taken for a typo.
constexpr size_t kTypoDistance = 3;

// Edit distance, for "did you mean"; names are short, so the O(n*m) table
// is a few hundred cells (longer names never get here: see Closest()).
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); j++) row[j] = j;
  for (size_t i = 1; i <= a.size(); i++) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); j++) {
      const size_t above = row[j];
      const bool same = absl::ascii_tolower(a[i - 1]) ==
                        absl::ascii_tolower(b[j - 1]);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The field `name` is a near miss of, or "" when none is close.
absl::string_view Closest(absl::string_view name) {
  absl::string_view closest;
  size_t best = SIZE_MAX;
  for (const ConfigField& known : ConfigFields()) {
    const absl::string_view field = known.name;
    // The distance is at least the difference in length: skip the table.
    const size_t longer = std::max(name.size(), field.size());
    if (longer - std::min(name.size(), field.size()) > kTypoDistance) continue;
    const size_t d = EditDistance(name, field);
    if (d < best) {
      best = d;
      closest = field;
    }
  }
  return best <= kTypoDistance ? closest : absl::string_view();
}

// `name` quoted for a warning: printable ASCII only, cut after
// kMaxQuotedNameBytes bytes.
std::string Quoted(absl::string_view name) {
  std::string out = "\"";
  for (size_t i = 0; i < name.size() && i < kMaxQuotedNameBytes; i++) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  if (name.size() > kMaxQuotedNameBytes) out += "...";
  return out + "\"";
}

}  // namespace

std::vector<std::string> UnknownFieldWarnings(
    const grpc_core::Json::Object& object) {
  std::vector<std::string> warnings;
  size_t unknown = 0;
  for (const auto& kv : object) {
    if (FindConfigField(kv.first) != nullptr) continue;
    if (++unknown > kMaxConfigWarnings) continue;
    std::string warning =
        absl::StrCat("unknown field ", Quoted(kv.first), " ignored");
    const absl::string_view closest = Closest(kv.first);
    if (!closest.empty()) {
      absl::StrAppend(&warning, " (did you mean \"", closest, "\"?)");
    }
    warnings.push_back(std::move(warning));
  }
  if (unknown > kMaxConfigWarnings) {
    warnings.push_back(absl::StrCat(unknown - kMaxConfigWarnings,
                                    " more unknown fields ignored"));
  }
  return warnings;
}

}  // namespace aperture_lb
