// Reads the fields of an "aperture" config object through the field table
// (config_fields.h): one reader per JSON type, so every integer field is
// checked by the same code and every string field by the same type check.
#ifndef APERTURE_LB_CONFIG_FIELD_READER_H
#define APERTURE_LB_CONFIG_FIELD_READER_H

#include <stdint.h>

#include <vector>

#include "absl/strings/string_view.h"

#include "policy/lb/config/config_errors.h"
#include "policy/lb/config/config_fields.h"
#include "src/core/lib/json/json.h"

namespace aperture_lb {

// What reading found, field by field, for the rules that tie fields
// together (config_rules.h). A name the table does not have is neither
// given nor bad.
class FieldsRead {
 public:
  // The config gave `name` and its value was good (and stored).
  bool Given(absl::string_view name) const;
  // The config gave `name` with a bad value (reported; the default stays).
  bool Bad(absl::string_view name) const;
  // Some field `owner` owns had a bad value.
  bool AnyBad(FieldOwner owner) const;

 private:
  friend FieldsRead ReadConfigFields(const grpc_core::Json::Object& object,
                                     ApertureSettings* settings,
                                     ConfigErrors* errors);
  enum class State : uint8_t { kAbsent, kGiven, kBad };
  State StateOf(absl::string_view name) const;
  std::vector<State> state_;  // by table index
};

// Reads every field of the table that `object` gives into *settings;
// reports each bad value in `errors` (naming its field) and leaves that
// field's default. Names the table does not have are not read here
// (unknown_fields.h).
FieldsRead ReadConfigFields(const grpc_core::Json::Object& object,
                            ApertureSettings* settings, ConfigErrors* errors);

}  // namespace aperture_lb

#endif  // APERTURE_LB_CONFIG_FIELD_READER_H
