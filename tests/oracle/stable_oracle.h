// An independent oracle for the stable mode's plan: computed from the
// definition written in policy/core/stable/ap_stable.h and policy/core/ap_hash.h,
// with no core code included or linked (its own hash, its own sort, its
// own scaling). The core's tests compare ap_stable_plan_create against it.
#ifndef APERTURE_TESTS_ORACLE_STABLE_ORACLE_H
#define APERTURE_TESTS_ORACLE_STABLE_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

namespace stable_oracle {

// The splitmix64 finalizer (ap_hash.h's ap_mix64).
uint64_t Mix64(uint64_t x);
// Output `k` (1-based) of the splitmix64 generator seeded with `seed`.
uint64_t SplitMix64Output(uint64_t seed, uint64_t k);
// ap_hash.h's byte hash, from its written algorithm.
uint64_t Hash64(const std::string& bytes, uint64_t seed);

// The stable keys and placement (ap_stable.h's definitions).
uint64_t Key(const std::string& identity);
uint64_t OrdinalKey(uint64_t k);
uint64_t ClientPoint(uint64_t key, uint32_t v);
uint64_t EndpointPoint(uint64_t key);
uint32_t CoverCount(uint64_t key);

struct Plan {
  // Per client (caller's order): member endpoint indices (caller's order,
  // ascending) and their shares.
  std::vector<std::vector<uint32_t>> members;
  std::vector<std::vector<double>> shares;
  double load_max = 0;
  uint32_t rounds = 0;
};

// The plan of endpoints `endpoint_keys` (weights: empty for equal, else one
// each) and clients `client_keys`. False on input the definition does not
// cover (empty sides, duplicate keys, min_aperture 0, a weight <= 0).
bool ComputePlan(const std::vector<uint64_t>& endpoint_keys,
                 const std::vector<double>& weights,
                 const std::vector<uint64_t>& client_keys,
                 uint32_t min_aperture, Plan* out);

}  // namespace stable_oracle

#endif  // APERTURE_TESTS_ORACLE_STABLE_ORACLE_H
