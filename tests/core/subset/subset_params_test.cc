// ap_subset_params_for_client(): the parameters of client c of C, and the
// same refusals (code and field named) as ap_aperture_compute().
#include <string>

#include "gtest/gtest.h"
#include "policy/core/subset/ap_aperture.h"
#include "tests/core/test_util.h"

namespace {

using aptest::MakeRing;

bool Mentions(const ap_error &err, const std::string &what) {
  return std::string(err.message).find(what) != std::string::npos;
}

TEST(SubsetParamsForClient, FillsEveryField) {
  ap_subset_params p;
  ap_error err;
  ASSERT_EQ(ap_subset_params_for_client(AP_MODE_SMOOTH, 3, 7, 5, 42, &p, &err),
            AP_OK)
      << err.message;
  EXPECT_EQ(p.mode, AP_MODE_SMOOTH);
  EXPECT_EQ(p.peer_index, 3u);
  EXPECT_EQ(p.peer_count, 7u);
  EXPECT_EQ(p.min_aperture, 5u);
  EXPECT_EQ(p.random_seed, 42u);
}

TEST(SubsetParamsForClient, SameApertureAsHandFilledParams) {
  aptest::Ring ring = MakeRing(23);
  for (uint32_t c = 0; c < 5; ++c) {
    ap_subset_params mine, hand;
    ap_error err;
    ASSERT_EQ(ap_subset_params_for_client(AP_MODE_RANDOM, c, 5, 4, 99 + c,
                                          &mine, &err),
              AP_OK);
    ap_subset_params_init(&hand);
    hand.mode = AP_MODE_RANDOM;
    hand.peer_index = c;
    hand.peer_count = 5;
    hand.min_aperture = 4;
    hand.random_seed = 99 + c;
    aptest::Aperture a = aptest::Compute(ring.get(), mine);
    aptest::Aperture b = aptest::Compute(ring.get(), hand);
    ASSERT_EQ(ap_aperture_count(a.get()), ap_aperture_count(b.get()));
    for (size_t k = 0; k < ap_aperture_count(a.get()); ++k) {
      EXPECT_EQ(ap_aperture_member(a.get(), k)->index,
                ap_aperture_member(b.get(), k)->index);
    }
  }
}

TEST(SubsetParamsForClient, UnknownCoordinateIsAccepted) {
  ap_subset_params p;
  ap_error err;
  EXPECT_EQ(ap_subset_params_for_client(AP_MODE_CONTINUOUS, 0, 0, 12, 0, &p,
                                        &err),
            AP_OK);
  EXPECT_EQ(p.peer_count, 0u);
}

TEST(SubsetParamsForClient, RefusesBadInputNamingTheField) {
  ap_subset_params p;
  ap_error err;
  EXPECT_EQ(ap_subset_params_for_client(AP_MODE_CONTINUOUS, 0, 1, 1, 0,
                                        nullptr, &err),
            AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "out")) << err.message;

  EXPECT_EQ(ap_subset_params_for_client(AP_MODE_CONTINUOUS, 4, 4, 12, 0, &p,
                                        &err),
            AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "peer_index is 4")) << err.message;
  // On error the output holds the defaults, not half the request.
  EXPECT_EQ(p.peer_count, 0u);
  EXPECT_EQ(p.min_aperture, 12u);

  EXPECT_EQ(ap_subset_params_for_client(AP_MODE_CONTINUOUS, 0,
                                        AP_MAX_PEERS + 1, 12, 0, &p, &err),
            AP_ERANGE);
  EXPECT_TRUE(Mentions(err, "peer_count")) << err.message;

  EXPECT_EQ(ap_subset_params_for_client(AP_MODE_CONTINUOUS, 0, 3, 0, 0, &p,
                                        &err),
            AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "min_aperture must be >= 1")) << err.message;

  EXPECT_EQ(ap_subset_params_for_client(AP_MODE_CONTINUOUS, 0, 3,
                                        AP_MAX_PEERS + 1, 0, &p, &err),
            AP_ERANGE);
  EXPECT_TRUE(Mentions(err, "min_aperture")) << err.message;

  EXPECT_EQ(ap_subset_params_for_client(static_cast<ap_mode>(99), 0, 3, 2, 0,
                                        &p, &err),
            AP_EINVAL);
  EXPECT_TRUE(Mentions(err, "mode is 99")) << err.message;
}

}  // namespace
