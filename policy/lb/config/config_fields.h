// The fields of the "aperture" service config, one entry each: its name,
// JSON type and range, default, the module that owns it, how it reaches
// the ring, a one-line meaning, and where its value goes. Derived from the
// table: the parser reads the fields in its order (field_reader.h), the
// known-field list and its "did you mean" are its names
// (unknown_fields.h), RingInputKey() hashes the fields that shape the ring
// (ring/ring_snapshot.cc), and //tests/lb:config_fields_test checks the
// README's service-config table against it.
//
// A new field is one entry in kFields (config_fields.cc) plus its logic: a
// member of ApertureSettings (or of its owner's settings), a parse function
// when it is a string or an object, and any rule that ties it to another
// field in its owner's core validator (config_rules.h).
#ifndef APERTURE_LB_CONFIG_CONFIG_FIELDS_H
#define APERTURE_LB_CONFIG_CONFIG_FIELDS_H

#include <stdint.h>

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

#include "src/core/lib/json/json.h"

namespace aperture_lb {

struct ApertureSettings;  // config.h
class ConfigErrors;       // config_errors.h

// The JSON type a field takes: which of the readers (field_reader.cc)
// reads it.
enum class FieldType { kString, kInteger, kBoolean, kObject };

// The module that gives a field its meaning, and its cross-field rules.
enum class FieldOwner {
  kRing,         // the ring and the aperture (ring/; core ring/, subset/)
  kCoordinate,   // where this client is (coordinate/)
  kMembership,   // debounced membership, re-resolution (ring/membership)
  kPicker,       // the pick (picker/; core pick/)
  kHealth,       // gray failures (core pick/ap_health)
  kSubchannels,  // the policy's connections (endpoints/, SubchannelArgs)
  kAffinity,     // request affinity (affinity/; policy/affinity)
};

// How a field reaches the ring snapshot (ring/ring_snapshot.h).
enum class RingRole {
  kNone,        // it does not
  kSetting,     // BuildRingSnapshot() reads it: RingInputKey() hashes it
  kMembers,     // through the members it gives the ring (their weights,
                // the draining ones)
  kCoordinate,  // through the coordinate
};

// How a field's JSON value is read. The reader of each type checks what
// every field of that type shares (the JSON type, an integer's range);
// parse and read_object hold what is the field's own.
struct FieldReader {
  FieldType type;
  uint64_t min;            // kInteger: accepted range [min, max]
  uint64_t max;
  const char* zero_means;  // kInteger: when set, 0 is accepted too and
                           // means this ("off"); other values from min
  const char* hint;        // said after "is not a <type>", e.g.
                           // " (accepted: outstanding, peakEwma, orca)"
  // kString: parses `text` (never holding a NUL byte: the reader refuses
  // those for every string field) into *s; false with *error saying what
  // is wrong (the message after the field's name).
  bool (*parse)(const std::string& text, ApertureSettings* s,
                std::string* error);
  // kObject: reads each entry into *s, reporting every bad one; false when
  // any was bad.
  bool (*read_object)(const grpc_core::Json::Object& object,
                      ApertureSettings* s, ConfigErrors* errors);
};

// Where a field's number lives in the settings: integers, booleans (0, 1)
// and named values (an enum).
struct FieldAccess {
  // Stores a value the reader accepted; nullptr when parse stores it.
  void (*store)(ApertureSettings* s, uint64_t value);
  // The value in `s`, nullopt when the config left it unset and it has no
  // default; nullptr for a field that is not a number (free text, an
  // object). Every RingRole::kSetting field has one.
  std::optional<uint64_t> (*load)(const ApertureSettings& s);
};

struct ConfigField {
  const char* name;  // as the service config spells it
  FieldReader reader;
  FieldAccess access;
  // The default as the README states it (backquotes left out); nullptr
  // when it is the number the settings start with (DefaultText()).
  const char* default_text;
  FieldOwner owner;
  RingRole ring;
  const char* meaning;  // one line
};

// Every field, in the order the parser reads them.
absl::Span<const ConfigField> ConfigFields();

// The field named `name` (exactly, case included); nullptr when the
// config has none.
const ConfigField* FindConfigField(absl::string_view name);

// The field's default as the README states it: its default_text, or the
// number ApertureSettings starts with ("false"/"true" for a boolean).
std::string DefaultText(const ConfigField& field);

}  // namespace aperture_lb

#endif  // APERTURE_LB_CONFIG_CONFIG_FIELDS_H
