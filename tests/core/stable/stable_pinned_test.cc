// Pinned stable plans: fixed keys in, exact members and shares out. The
// expected values were generated once from the plan's code; any change to
// a salt, a constant (AP_STABLE_POINTS, the second-cover share, the
// scaling's tolerance, stall rule or share floor) or the hash changes them,
// so such a change has to come with new pins here (and a reason).
// EqualWeightsTenByFour was re-pinned from the independent oracle
// (tests/oracle) when the scaling's stop rule became one-sided (only an
// endpoint above its target counts): 20 rounds instead of 24.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policy/core/ap_error.h"
#include "policy/core/stable/ap_stable.h"
#include "policy/core/stable/ap_stable_testing.h"

namespace {

struct Row {
  std::vector<uint32_t> members;
  std::vector<double> shares;
};

// The keys of "10.0.0.1:8443" .. "10.0.0.10:8443".
const uint64_t kEndpointKeys[10] = {
    0x8356D4C8D2FB1A2Eull, 0x73640E936814D531ull, 0xCA9E50CB35629834ull,
    0x36ED188CB284D01Eull, 0x47460482A47FB6FDull, 0xA2D6A31E5E66F3E0ull,
    0x0E9275A78AABD4CDull, 0x5A8451F5BC0FFF75ull, 0x3674A4C32FBF42BFull,
    0xEC39E9D4CA554557ull};
// ap_stable_ordinal_key(0..3); key 0 is also splitmix64's first output
// for seed 0.
const uint64_t kClientKeys[4] = {0xE220A8397B1DCDAFull, 0xE4D971771B652C20ull,
                                 0x975835DE1C9756CEull, 0x910A2DEC89025CC1ull};

TEST(StablePinned, KeysAndPoints) {
  for (int k = 0; k < 10; ++k) {
    const std::string addr = "10.0.0." + std::to_string(k + 1) + ":8443";
    EXPECT_EQ(ap_stable_key(addr.c_str()), kEndpointKeys[k]) << addr;
  }
  for (uint64_t k = 0; k < 4; ++k)
    EXPECT_EQ(ap_stable_ordinal_key(k), kClientKeys[k]);
  EXPECT_EQ(ap_stable_ordinal_key(0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(ap_stable_client_point(kClientKeys[0], 0), 0x48218226FF3CD4BFull);
  EXPECT_EQ(ap_stable_client_point(kClientKeys[0], 31), 0x6C5085290B1EB02Cull);
  EXPECT_EQ(ap_stable_endpoint_point(kEndpointKeys[0]), 0x8266C5597EB49A91ull);
  const uint32_t covers[10] = {1, 1, 2, 1, 1, 2, 2, 2, 2, 1};
  for (int k = 0; k < 10; ++k)
    EXPECT_EQ(ap_stable_cover_count(kEndpointKeys[k]), covers[k]) << k;
}

void ExpectPlanOf(const uint64_t *ek, const double *weights, size_t n,
                  const uint64_t *ck, size_t c, uint32_t a,
                  const std::vector<Row> &want, uint32_t rounds,
                  double load_max) {
  ap_stable_plan *p = nullptr;
  ap_error err;
  ap_error_clear(&err);
  ASSERT_EQ(ap_stable_plan_create(ek, weights, n, ck, c, a, &p, &err), AP_OK)
      << err.message;
  ASSERT_EQ(want.size(), c);
  for (size_t i = 0; i < c; ++i) {
    const size_t size = ap_stable_plan_row_size(p, i);
    const uint32_t *e = ap_stable_plan_row_endpoints(p, i);
    const double *s = ap_stable_plan_row_shares(p, i);
    EXPECT_EQ(std::vector<uint32_t>(e, e + size), want[i].members)
        << "client " << i;
    ASSERT_EQ(size, want[i].shares.size()) << "client " << i;
    for (size_t k = 0; k < size; ++k)
      EXPECT_NEAR(s[k], want[i].shares[k], 1e-12 * want[i].shares[k])
          << "client " << i << " member " << k;
  }
  EXPECT_EQ(ap_stable_plan_rounds(p), rounds);
  EXPECT_NEAR(ap_stable_plan_load_max(p), load_max, 1e-12 * load_max);
  ap_stable_plan_destroy(p);
}

void ExpectPlan(const double *weights, size_t n, size_t c, uint32_t a,
                const std::vector<Row> &want, uint32_t rounds,
                double load_max) {
  ExpectPlanOf(kEndpointKeys, weights, n, kClientKeys, c, a, want, rounds,
               load_max);
}

TEST(StablePinned, EqualWeightsTenByFour) {
  ExpectPlan(
      nullptr, 10, 4, 3,
      {
          {{1, 2, 3, 7, 8},
           {0.19126452000443273, 0.30967497420250734, 0.15389799289431363,
            0.15389799289431363, 0.19126452000443273}},
          {{0, 1, 2, 8, 9},
           {0.39918328087017302, 0.055713809792787124, 0.09020581867407973,
            0.055713809792787124, 0.39918328087017302}},
          {{1, 3, 4, 5, 6, 7},
           {0.15308849857243725, 0.12318025666734252, 0.20018366269762591,
            0.20018366269762591, 0.20018366269762591, 0.12318025666734252}},
          {{3, 4, 5, 6, 7, 8},
           {0.12318025666734252, 0.20018366269762591, 0.20018366269762591,
            0.20018366269762591, 0.12318025666734252, 0.15308849857243725}},
      },
      20, 1.0009183134881294);
}

TEST(StablePinned, WeightedTenByFour) {
  const double w[10] = {1, 2, 3, 1, 1, 5, 1, 0.5, 1, 2};
  ExpectPlan(
      w, 10, 4, 2,
      {
          {{2, 3, 7, 8},
           {0.4854431040544433, 0.23518625719056255, 0.11759312859528127,
            0.16177751015971284}},
          {{0, 2, 8, 9},
           {0.23532815073421298, 0.22052421852526452, 0.073491329272096534,
            0.47065630146842596}},
          {{1, 3, 5, 6, 7},
           {0.44438943276686727, 5.2562101886176392e-05, 0.46294310340025296,
            0.09258862068005061, 2.6281050943088196e-05}},
          {{3, 4, 5, 6, 7, 8},
           {7.3577308295099658e-05, 0.22219643464503208, 0.64803548982368231,
            0.12960709796473649, 3.6788654147549829e-05,
            5.0611604106570446e-05}},
      },
      96, 1.0295606594621818);
}

// A weight no membership can carry: shares reach the floor (1e-12 of the
// row's largest) and the balance reported is far from 1.
TEST(StablePinned, UnbalanceableWeightsHitTheShareFloor) {
  const double w[6] = {1e9, 1, 1, 1, 1, 1};
  ExpectPlan(
      w, 6, 3, 1,
      {
          {{2, 3, 5},
           {0.49999999996627847, 0.25000000001686079, 0.25000000001686079}},
          {{0, 2, 4},
           {0.99999999899899994, 9.9999999899899996e-13,
            9.9999999899900006e-10}},
          {{1, 3, 5},
           {0.50000000003372158, 0.24999999998313918, 0.24999999998313918}},
      },
      32, 166666667.51124051);
}

// Thirty endpoints and six clients: enough points on the client ring that
// one point fewer per client (AP_STABLE_POINTS) changes the coverage.
TEST(StablePinned, ThirtyBySix) {
  uint64_t ek[30], ck[6];
  for (int k = 0; k < 30; ++k)
    ek[k] =
        ap_stable_key(("10.0.1." + std::to_string(k + 1) + ":8443").c_str());
  for (uint64_t k = 0; k < 6; ++k) ck[k] = ap_stable_ordinal_key(100 + k);
  ExpectPlanOf(
      ek, nullptr, 30, ck, 6, 4,
      {
          {{1, 7, 9, 10, 11, 15, 18, 21, 22, 23, 25, 26, 28, 29},
           {0.090417002529552523, 0.068568231312910566, 0.090417002529552523,
            0.055941219440541458, 0.067229307997943688, 0.021586405659671386,
            0.047771818293096055, 0.021370872488350585, 0.068568231312910566,
            0.068568231312910566, 0.067229307997943688, 0.047771818293096055,
            0.19994048432258221, 0.084620066508938205}},
          {{3, 4, 11, 13, 15, 18, 19, 25, 26, 27},
           {0.055983100202466572, 0.086791336223990892, 0.13272926270182026,
            0.11829797175071889, 0.042617539774144599, 0.094314792295079247,
            0.11829797175071889, 0.13272926270182026, 0.094314792295079247,
            0.12392397030416136}},
          {{2, 3, 14, 15, 20, 21, 24},
           {0.15782720537021402, 0.14414622273303587, 0.15782720537021402,
            0.1097323541997626, 0.20019215122137732, 0.10863671268027805,
            0.12163814842511815}},
          {{0, 2, 4, 5, 8, 10, 12, 13, 14, 16, 19, 21, 24, 29},
           {0.083126228530506691, 0.042322509985889697, 0.059925579957317288,
            0.06070064067229524, 0.083126228530506691, 0.07625631965107281,
            0.10588057860005559, 0.081679518640440082, 0.042322509985889697,
            0.10588057860005559, 0.081679518640440082, 0.029131722547201706,
            0.032618151853550846, 0.11534991380477809}},
          {{1, 4, 5, 6, 9, 10, 12, 15, 16, 18, 26, 27},
           {0.10952032642773851, 0.053249184128106961, 0.053937894204033124,
            0.19993472404858248, 0.10952032642773851, 0.067760492412822018,
            0.094084269680504276, 0.026147186127698462, 0.094084269680504276,
            0.057865058419697475, 0.057865058419697475, 0.076031210022876577}},
          {{0, 5, 7, 8, 17, 21, 22, 23, 24},
           {0.11685481402559983, 0.085330011987644602, 0.13139395671400367,
            0.11685481402559983, 0.19997351602491145, 0.040951960418236948,
            0.13139395671400367, 0.13139395671400367, 0.04585301337599642}},
      },
      16, 1.0009607561068865);
}

// Six endpoints and nine clients: a membership whose error falls slowly,
// so the scaling's stall rule (16 rounds, 1%) decides where it stops.
TEST(StablePinned, SixByNineStopsByTheStallRule) {
  uint64_t ek[6], ck[9];
  for (uint64_t k = 0; k < 6; ++k) ek[k] = ap_stable_ordinal_key(1000 + k);
  for (uint64_t k = 0; k < 9; ++k) ck[k] = ap_stable_ordinal_key(k);
  ExpectPlanOf(
      ek, nullptr, 6, ck, 9, 1,
      {
          {{3, 4, 5},
           {1.9705323519944862e-08, 0.034470393567708611, 0.96552958672696798}},
          {{1, 3, 4},
           {0.51845773437006637, 2.7527799152291355e-07, 0.48154199035194201}},
          {{0, 3}, {0.99999997802971341, 2.1970286523336887e-08}},
          {{1, 3}, {0.99999946904477044, 5.3095522954651433e-07}},
          {{3}, {1}},
          {{0, 3, 5},
           {0.48157744140333181, 1.0580394603260982e-08, 0.51842254801627352}},
          {{4}, {1}},
          {{2, 4}, {0.99999999960524755, 3.9475252764719058e-10}},
          {{3}, {1}},
      },
      48, 1.3333339056594837);
}

}  // namespace
