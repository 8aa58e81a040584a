#include "policy/lb/config/unknown_fields.h"

#include <stdint.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "policy/lb/config/config_fields.h"

namespace aperture_lb {
namespace {

// Edit distance, for "did you mean"; names are short, so the O(n*m) table
// is a few hundred cells.
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

}  // namespace

void ReportUnknownFields(const grpc_core::Json::Object& object,
                         ConfigErrors* errors) {
  for (const auto& kv : object) {
    if (FindConfigField(kv.first) != nullptr) continue;
    absl::string_view closest;
    size_t best = SIZE_MAX;
    for (const ConfigField& known : ConfigFields()) {
      const size_t d = EditDistance(kv.first, known.name);
      if (d < best) {
        best = d;
        closest = known.name;
      }
    }
    std::string message = "is not a field of the aperture config";
    if (best <= 3) {
      absl::StrAppend(&message, " (did you mean \"", closest, "\"?)");
    }
    errors->AddUnknown(kv.first, message);
  }
}

}  // namespace aperture_lb
