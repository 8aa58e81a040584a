// Names in an "aperture" config object that the field table
// (config_fields.h) does not have: the one place they are handled.
#ifndef APERTURE_LB_CONFIG_UNKNOWN_FIELDS_H
#define APERTURE_LB_CONFIG_UNKNOWN_FIELDS_H

#include "policy/lb/config/config_errors.h"
#include "src/core/lib/json/json.h"

namespace aperture_lb {

// Reports each name of `object` that is not a field of the config as an
// error ("is not a field of the aperture config"), with the closest field
// when it looks like a typo (an edit distance of at most 3, case
// ignored): a misspelt "minApperture" would otherwise run on the default
// and nobody would know.
void ReportUnknownFields(const grpc_core::Json::Object& object,
                         ConfigErrors* errors);

}  // namespace aperture_lb

#endif  // APERTURE_LB_CONFIG_UNKNOWN_FIELDS_H
