#include "policy/lb/config/field_reader.h"

#include <string>

#include "absl/strings/str_cat.h"

#include "policy/core/ap_number.h"

namespace aperture_lb {
namespace {

using grpc_core::Json;

// The one integer reader: a JSON number, digits only, in the field's range.
bool ReadInteger(const ConfigField& f, const Json& value, uint64_t* out,
                 ConfigErrors* errors) {
  const FieldReader& r = f.reader;
  const uint64_t lo = r.zero_means != nullptr ? 0 : r.min;
  const std::string range = absl::StrCat("an integer in [", lo, ", ", r.max, "]");
  if (value.type() != Json::Type::NUMBER) {
    errors->Add(f.name, absl::StrCat("is not a number (must be ", range, ")"));
    return false;
  }
  const std::string& text = value.string_value();
  uint64_t v = 0;
  if (ap_parse_uint(text.c_str(), lo, r.max, &v, nullptr) != AP_OK) {
    errors->Add(f.name, absl::StrCat("must be ", range, ", got ", text));
    return false;
  }
  if (r.zero_means != nullptr && v != 0 && v < r.min) {
    errors->Add(f.name, absl::StrCat("must be 0 (", r.zero_means,
                                     ") or at least ", r.min, ", got ", v));
    return false;
  }
  *out = v;
  return true;
}

bool ReadBoolean(const ConfigField& f, const Json& value, uint64_t* out,
                 ConfigErrors* errors) {
  if (value.type() == Json::Type::JSON_TRUE) {
    *out = 1;
  } else if (value.type() == Json::Type::JSON_FALSE) {
    *out = 0;
  } else {
    errors->Add(f.name, absl::StrCat("is not a boolean", f.reader.hint));
    return false;
  }
  return true;
}

// The one string reader: the JSON type, no NUL byte, then the field's own
// parse.
bool ReadString(const ConfigField& f, const Json& value, ApertureSettings* s,
                ConfigErrors* errors) {
  if (value.type() != Json::Type::STRING) {
    errors->Add(f.name, absl::StrCat("is not a string", f.reader.hint));
    return false;
  }
  const std::string& text = value.string_value();
  // JSON's \u0000 reaches here as a NUL byte: the parsers below read C
  // strings, which would silently cut the value at it ("smooth\u0000junk"
  // would run as smooth).
  if (text.find('\0') != std::string::npos) {
    errors->Add(f.name, absl::StrCat("contains a NUL byte", f.reader.hint));
    return false;
  }
  std::string error;
  if (!f.reader.parse(text, s, &error)) {
    errors->Add(f.name, error);
    return false;
  }
  return true;
}

bool ReadObject(const ConfigField& f, const Json& value, ApertureSettings* s,
                ConfigErrors* errors) {
  if (value.type() != Json::Type::OBJECT) {
    errors->Add(f.name, absl::StrCat("is not a JSON object", f.reader.hint));
    return false;
  }
  return f.reader.read_object(value.object_value(), s, errors);
}

bool ReadField(const ConfigField& f, const Json& value, ApertureSettings* s,
               ConfigErrors* errors) {
  uint64_t v = 0;
  switch (f.reader.type) {
    case FieldType::kInteger:
      if (!ReadInteger(f, value, &v, errors)) return false;
      f.access.store(s, v);
      return true;
    case FieldType::kBoolean:
      if (!ReadBoolean(f, value, &v, errors)) return false;
      f.access.store(s, v);
      return true;
    case FieldType::kString:
      return ReadString(f, value, s, errors);
    case FieldType::kObject:
      return ReadObject(f, value, s, errors);
  }
  return false;
}

}  // namespace

FieldsRead::State FieldsRead::StateOf(absl::string_view name) const {
  const ConfigField* f = FindConfigField(name);
  if (f == nullptr) return State::kAbsent;
  return state_[static_cast<size_t>(f - ConfigFields().data())];
}

bool FieldsRead::Given(absl::string_view name) const {
  return StateOf(name) == State::kGiven;
}

bool FieldsRead::Bad(absl::string_view name) const {
  return StateOf(name) == State::kBad;
}

bool FieldsRead::AnyBad(FieldOwner owner) const {
  const absl::Span<const ConfigField> fields = ConfigFields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].owner == owner && state_[i] == State::kBad) return true;
  }
  return false;
}

FieldsRead ReadConfigFields(const Json::Object& object,
                            ApertureSettings* settings, ConfigErrors* errors) {
  const absl::Span<const ConfigField> fields = ConfigFields();
  FieldsRead read;
  read.state_.assign(fields.size(), FieldsRead::State::kAbsent);
  for (size_t i = 0; i < fields.size(); ++i) {
    auto it = object.find(fields[i].name);
    if (it == object.end()) continue;
    read.state_[i] = ReadField(fields[i], it->second, settings, errors)
                         ? FieldsRead::State::kGiven
                         : FieldsRead::State::kBad;
  }
  return read;
}

}  // namespace aperture_lb
