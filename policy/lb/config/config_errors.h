// The aperture config's errors in gRPC's format ("field:X error:Y"), listed
// in an order that does not depend on when each check ran: each field's
// errors in the field table's order (config_fields.h: its reader's, then
// those of the rules that name it), then the checks over the whole config.
// (Names that are not fields are warnings, not errors: unknown_fields.h.)
#ifndef APERTURE_LB_CONFIG_CONFIG_ERRORS_H
#define APERTURE_LB_CONFIG_CONFIG_ERRORS_H

#include <stddef.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace aperture_lb {

class ConfigErrors {
 public:
  // An error of `field`: a field of the table, or an entry of one (listed
  // with it: "weights[\"10.0.0.1:80\"]" with weights).
  void Add(absl::string_view field, absl::string_view message);
  // An error of a check over the whole config, listed after every field's.
  void AddAfterFields(absl::string_view field, absl::string_view message);

  // True when nothing was added.
  bool empty() const { return entries_.empty(); }
  // InvalidArgument: "errors validating aperture LB policy config:
  // [field:X error:Y; ...]".
  absl::Status ToStatus() const;

 private:
  struct Entry {
    size_t rank;  // where it is listed: 0 a name outside the table (the
                  // object itself), 1 + table index, then the last
    std::string text;
  };
  std::vector<Entry> entries_;
};

// The name of one entry of "weights" in an error: weights["ADDRESS"], the
// address with \, ", control characters and bytes above 0x7F escaped
// (\\, \", \u00XX, \xNN) and cut after 64 bytes ("..."), so an error
// about a hostile key stays one short printable line.
std::string WeightsEntryField(absl::string_view address);

}  // namespace aperture_lb

#endif  // APERTURE_LB_CONFIG_CONFIG_ERRORS_H
