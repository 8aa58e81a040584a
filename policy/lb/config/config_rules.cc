#include "policy/lb/config/config_rules.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "policy/affinity/ap_hash_ring.h"
#include "policy/core/stable/ap_stable.h"

namespace aperture_lb {
namespace {

// peerIndex and peerCount: both or neither, index below count, and stable
// mode's client cap.
void CheckCoordinate(const FieldsRead& read, ApertureSettings* s,
                     ConfigErrors* errors) {
  if (read.Bad("peerIndex") || read.Bad("peerCount")) return;
  const bool has_index = read.Given("peerIndex");
  const bool has_count = read.Given("peerCount");
  if (has_index != has_count) {
    errors->Add(has_index ? "peerCount" : "peerIndex",
                has_index ? "is required when peerIndex is set"
                          : "is required when peerCount is set");
  } else if (!has_index) {
    return;
  } else if (s->peer_index >= s->peer_count) {
    errors->Add("peerIndex", absl::StrCat("must be less than peerCount (",
                                          s->peer_count, "), got ",
                                          s->peer_index));
  } else if (s->mode == AP_MODE_STABLE &&
             s->peer_count > AP_STABLE_MAX_CLIENTS) {
    // Every client plans the whole service: about 1 KiB per client at the
    // peak of a build (ap_stable.h).
    errors->Add("peerCount",
                absl::StrCat("must be at most ", AP_STABLE_MAX_CLIENTS,
                             " in stable mode (every client computes the "
                             "whole service's plan), got ",
                             s->peer_count));
  } else {
    s->has_coordinate = true;
  }
}

// The health fields: the core settles the defaults that follow the given
// fields, then checks every rule (ap_health.h).
void CheckHealth(const FieldsRead& read, ApertureSettings* s,
                 ConfigErrors* errors) {
  unsigned given = 0;
  if (read.Given("maxEjectionMs")) given |= AP_HEALTH_GAVE_MAX_EJECTION_MS;
  if (read.Given("stuckCallMinMs")) given |= AP_HEALTH_GAVE_STUCK_CALL_MIN_MS;
  ap_health_config_fit_defaults(&s->health, given);
  ap_error err;
  if (ap_health_config_validate(&s->health, &err) == AP_OK) return;
  // "<field>: <what is wrong>" entries, separated by "; ".
  for (absl::string_view entry : absl::StrSplit(err.message, "; ")) {
    std::vector<absl::string_view> parts =
        absl::StrSplit(entry, absl::MaxSplits(": ", 1));
    if (parts.size() == 2) {
      errors->Add(parts[0], parts[1]);
    } else {
      errors->Add("aperture", entry);  // never silent
    }
  }
}

// The affinity fields, once each of them read well (ap_affinity.h).
void CheckAffinity(const FieldsRead& read, const ApertureSettings& s,
                   ConfigErrors* errors) {
  if (read.AnyBad(FieldOwner::kAffinity)) return;
  ValidateAffinitySettings(
      s.affinity, [errors](absl::string_view field, absl::string_view message) {
        errors->Add(field, message);
      });
}

// Hash affinity: the configured weights times hashVnodes must fit the
// ring's point cap, member by member and together, or the ring would be
// refused at run time and hash affinity silently switched off. The core
// counts the points (ap_hash_ring_fit_vnodes says how many vnodes fit).
void CheckHashPoints(const ApertureSettings& s, ConfigErrors* errors) {
  if (s.affinity.mode != AP_AFFINITY_HASH || s.weights.empty()) return;
  const uint32_t vnodes = s.affinity.hash_vnodes;
  auto fits = [vnodes](const double* weights, size_t n, uint32_t* fitted) {
    ap_error err;
    int rc = ap_hash_ring_fit_vnodes(weights, n, vnodes, fitted, &err);
    if (rc == AP_ERANGE) *fitted = 0;  // not even 1 point per unit weight
    return rc == AP_ERANGE || (rc == AP_OK && *fitted == vnodes);
  };
  std::vector<double> weights;
  for (const auto& kv : s.weights) {
    weights.push_back(kv.second);
    uint32_t fitted = 0;
    if (!fits(&kv.second, 1, &fitted) || fitted == 0) {
      errors->AddAfterFields(
          WeightsEntryField(kv.first),
          absl::StrCat("weight ", kv.second, " x hashVnodes ", vnodes,
                       " gives more hash points than the ring's cap of ",
                       AP_HASH_RING_MAX_POINTS, " (at most ", fitted,
                       " vnodes fit this weight)"));
    }
  }
  uint32_t fitted = 0;
  if (!fits(weights.data(), weights.size(), &fitted) || fitted == 0) {
    errors->AddAfterFields(
        "hashVnodes",
        absl::StrCat("the configured weights x hashVnodes ", vnodes,
                     " give more hash points than the ring's cap of ",
                     AP_HASH_RING_MAX_POINTS, " (at most ", fitted,
                     " fit them)"));
  }
}

}  // namespace

void CheckCrossFieldRules(const FieldsRead& read, ApertureSettings* settings,
                          ConfigErrors* errors) {
  CheckCoordinate(read, settings, errors);
  CheckHealth(read, settings, errors);
  CheckAffinity(read, *settings, errors);
  CheckHashPoints(*settings, errors);
}

}  // namespace aperture_lb
