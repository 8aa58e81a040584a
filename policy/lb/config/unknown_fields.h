// Names in an "aperture" config object that the field table
// (config_fields.h) does not have: the one place they are handled.
#ifndef APERTURE_LB_CONFIG_UNKNOWN_FIELDS_H
#define APERTURE_LB_CONFIG_UNKNOWN_FIELDS_H

#include <stddef.h>

#include <string>
#include <vector>

#include "src/core/lib/json/json.h"

namespace aperture_lb {

// Warnings kept per config at most; past them, one more entry counts the
// rest, so a config of a million names stays a few lines.
constexpr size_t kMaxConfigWarnings = 16;
// Bytes of an unknown name quoted in its warning; longer names are cut.
constexpr size_t kMaxQuotedNameBytes = 64;

// One warning per name of `object` that is not a field of the config, in
// name order: `unknown field "futureField" ignored`, with the closest
// field when it looks like a typo (an edit distance of at most 3, case
// ignored): `unknown field "minApperture" ignored (did you mean
// "minAperture"?)`. Such names are ignored rather than rejected, as gRPC's
// own policies do, so that a config written for a newer release (a new
// field, rolled out through DNS TXT or xDS to clients of mixed versions)
// runs on this one; the warnings make a misspelling visible (the log, the
// status's config_warnings). In a quoted name, `"` and `\` are escaped and
// bytes outside printable ASCII are written as \xNN, so a warning is
// always printable ASCII (and valid UTF-8).
std::vector<std::string> UnknownFieldWarnings(
    const grpc_core::Json::Object& object);

}  // namespace aperture_lb

#endif  // APERTURE_LB_CONFIG_UNKNOWN_FIELDS_H
