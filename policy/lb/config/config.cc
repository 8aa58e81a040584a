#include "policy/lb/config/config.h"

#include <algorithm>

#include <grpc/impl/codegen/grpc_types.h>

#include "policy/lb/config/config_errors.h"
#include "policy/lb/config/config_rules.h"
#include "policy/lb/config/field_reader.h"
#include "policy/lb/config/unknown_fields.h"

namespace aperture_lb {

absl::StatusOr<ApertureSettings> ParseApertureSettings(
    const grpc_core::Json& json) {
  ApertureSettings s;
  ConfigErrors errors;
  if (json.type() == grpc_core::Json::Type::JSON_NULL) return s;
  if (json.type() != grpc_core::Json::Type::OBJECT) {
    errors.Add("aperture", "is not a JSON object");
    return errors.ToStatus();
  }
  const grpc_core::Json::Object& object = json.object_value();
  s.config_warnings = UnknownFieldWarnings(object);
  const FieldsRead read = ReadConfigFields(object, &s, &errors);
  CheckCrossFieldRules(read, &s, &errors);
  if (!errors.empty()) return errors.ToStatus();
  return s;
}

grpc_core::ChannelArgs SubchannelArgs(const ApertureSettings& settings,
                                      const grpc_core::ChannelArgs& args) {
  grpc_core::ChannelArgs out = args;
  if (settings.keepalive_ms != 0 &&
      !args.GetInt(GRPC_ARG_KEEPALIVE_TIME_MS).has_value()) {
    out = out.Set(GRPC_ARG_KEEPALIVE_TIME_MS,
                  static_cast<int>(settings.keepalive_ms));
    if (!args.GetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS).has_value()) {
      out = out.Set(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                    static_cast<int>(settings.keepalive_timeout_ms));
    }
  }
  if (settings.reconnect_backoff_max_ms != 0 &&
      !args.GetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS).has_value()) {
    const int cap = static_cast<int>(settings.reconnect_backoff_max_ms);
    out = out.Set(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, cap);
    const auto initial = args.GetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS);
    if (!initial.has_value() || *initial > cap) {
      out = out.Set(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, std::min(cap, 1000));
    }
  }
  return out;
}

}  // namespace aperture_lb
