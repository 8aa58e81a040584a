// The rules that tie fields of the "aperture" config together, run after
// every field was read (field_reader.h). Each lives once: the health
// fields' and the affinity fields' in their core validators
// (ap_health_config_validate, ap_affinity_config_validate), called here;
// the coordinate pair's and the hash ring's point cap here.
#ifndef APERTURE_LB_CONFIG_CONFIG_RULES_H
#define APERTURE_LB_CONFIG_CONFIG_RULES_H

#include "policy/lb/config/config.h"
#include "policy/lb/config/config_errors.h"
#include "policy/lb/config/field_reader.h"

namespace aperture_lb {

// Applies every cross-field rule to *settings (some settle a default from
// the fields given, e.g. has_coordinate, or maxEjectionMs following
// ejectionMs) and reports each broken one under the field it names.
void CheckCrossFieldRules(const FieldsRead& read, ApertureSettings* settings,
                          ConfigErrors* errors);

}  // namespace aperture_lb

#endif  // APERTURE_LB_CONFIG_CONFIG_RULES_H
