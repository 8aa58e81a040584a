// ap_health: ejection after a failure run, probation, reinstatement, stuck
// detection, config validation, on explicit times.
#include "policy/core/ap_health.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace {

struct HealthDeleter {
  void operator()(ap_health *h) const { ap_health_destroy(h); }
};
using Health = std::unique_ptr<ap_health, HealthDeleter>;

ap_health_config Config(uint32_t failures, uint32_t ejection_ms, uint32_t stuck_ms) {
  ap_health_config c;
  ap_health_config_init(&c);
  c.eject_after_failures = failures;
  c.ejection_ms = ejection_ms;
  c.stuck_call_ms = stuck_ms;
  return c;
}

TEST(Health, DefaultsAndNames) {
  ap_health_config c;
  ap_health_config_init(&c);
  EXPECT_EQ(c.eject_after_failures, 5u);
  EXPECT_EQ(c.ejection_ms, 1000u);
  EXPECT_EQ(c.stuck_call_ms, 1000u);
  EXPECT_STREQ(ap_health_state_name(AP_HEALTH_OK), "ok");
  EXPECT_STREQ(ap_health_state_name(AP_HEALTH_EJECTED), "ejected");
  EXPECT_STREQ(ap_health_state_name(AP_HEALTH_PROBATION), "probation");
  EXPECT_STREQ(ap_health_state_name(AP_HEALTH_STUCK), "stuck");
  EXPECT_STREQ(ap_health_state_name(static_cast<ap_health_state>(9)), "unknown");
}

TEST(Health, BadConfigNamesTheField) {
  ap_error err;
  ap_health_config c = Config(AP_HEALTH_MAX_FAILURES + 1, 1000, 1000);
  EXPECT_EQ(ap_health_config_validate(&c, &err), AP_EINVAL);
  EXPECT_NE(std::string(err.message).find("ejectAfterFailures"), std::string::npos);
  c = Config(5, 0, 1000);
  EXPECT_EQ(ap_health_config_validate(&c, &err), AP_EINVAL);
  EXPECT_NE(std::string(err.message).find("ejectionMs"), std::string::npos);
  c = Config(5, 1000, AP_HEALTH_MAX_MS + 1);
  EXPECT_EQ(ap_health_config_validate(&c, &err), AP_EINVAL);
  EXPECT_NE(std::string(err.message).find("stuckCallMs"), std::string::npos);
  EXPECT_EQ(ap_health_config_validate(nullptr, &err), AP_EINVAL);
  c = Config(0, 1, 0);
  EXPECT_EQ(ap_health_config_validate(&c, &err), AP_OK);
}

TEST(Health, FailureRunEjectsThenProbationThenReinstates) {
  Health h(ap_health_create());
  const ap_health_config c = Config(3, 1000, 0);
  for (int k = 0; k < 2; ++k) ap_health_on_finish(h.get(), 1, &c, 100);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 100), AP_HEALTH_OK);
  EXPECT_EQ(ap_health_failure_run(h.get()), 2u);
  ap_health_on_finish(h.get(), 1, &c, 110);  // the third in a row
  EXPECT_EQ(ap_health_ejections(h.get()), 1u);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 110), AP_HEALTH_EJECTED);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 1109), AP_HEALTH_EJECTED);
  // Calls sent before the ejection fail during it: no new ejection.
  ap_health_on_finish(h.get(), 1, &c, 500);
  EXPECT_EQ(ap_health_ejections(h.get()), 1u);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 1110), AP_HEALTH_PROBATION);
  EXPECT_TRUE(ap_health_usable(AP_HEALTH_PROBATION, 0));
  EXPECT_FALSE(ap_health_usable(AP_HEALTH_PROBATION, 1));
  EXPECT_FALSE(ap_health_usable(AP_HEALTH_EJECTED, 0));
  EXPECT_FALSE(ap_health_usable(AP_HEALTH_STUCK, 1));
  // The probe fails: ejected again from its end.
  ap_health_on_finish(h.get(), 1, &c, 1400);
  EXPECT_EQ(ap_health_ejections(h.get()), 2u);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 2399), AP_HEALTH_EJECTED);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 2400), AP_HEALTH_PROBATION);
  // The next probe succeeds: usable, run reset.
  ap_health_on_finish(h.get(), 0, &c, 2450);
  EXPECT_EQ(ap_health_check(h.get(), 3, &c, 2450), AP_HEALTH_OK);
  EXPECT_EQ(ap_health_failure_run(h.get()), 0u);
}

TEST(Health, AnySuccessReinstatesAndBreaksTheRun) {
  Health h(ap_health_create());
  const ap_health_config c = Config(2, 5000, 0);
  ap_health_on_finish(h.get(), 1, &c, 10);
  ap_health_on_finish(h.get(), 0, &c, 11);  // breaks the run
  ap_health_on_finish(h.get(), 1, &c, 12);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 12), AP_HEALTH_OK);
  ap_health_on_finish(h.get(), 1, &c, 13);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 13), AP_HEALTH_EJECTED);
  // A call it was holding answers (the server thawed): back at once.
  ap_health_on_finish(h.get(), 0, &c, 20);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 20), AP_HEALTH_OK);
}

TEST(Health, ZeroFailuresNeverEjects) {
  Health h(ap_health_create());
  const ap_health_config c = Config(0, 1000, 0);
  for (int k = 0; k < 100; ++k) ap_health_on_finish(h.get(), 1, &c, k);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 100), AP_HEALTH_OK);
  EXPECT_EQ(ap_health_ejections(h.get()), 0u);
  EXPECT_EQ(ap_health_failure_run(h.get()), 100u);
}

TEST(Health, StuckWhenCallsWaitAndNothingEnds) {
  Health h(ap_health_create());
  const ap_health_config c = Config(5, 1000, 200);
  ap_health_on_start(h.get(), 0, 1000);  // idle -> busy starts the clock
  ap_health_on_start(h.get(), 1, 1100);  // busy already: no reset
  EXPECT_EQ(ap_health_check(h.get(), 2, &c, 1200), AP_HEALTH_OK);
  EXPECT_EQ(ap_health_check(h.get(), 2, &c, 1201), AP_HEALTH_STUCK);
  // Nothing in flight: not stuck, however long ago the last call ended.
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 99999), AP_HEALTH_OK);
  // A call ends: progress.
  ap_health_on_finish(h.get(), 0, &c, 1300);
  EXPECT_EQ(ap_health_check(h.get(), 1, &c, 1500), AP_HEALTH_OK);
  EXPECT_EQ(ap_health_check(h.get(), 1, &c, 1501), AP_HEALTH_STUCK);
  const ap_health_config off = Config(5, 1000, 0);
  EXPECT_EQ(ap_health_check(h.get(), 1, &off, 99999), AP_HEALTH_OK);
}

TEST(Health, NullIsHarmless) {
  const ap_health_config c = Config(1, 1, 1);
  ap_health_on_start(nullptr, 0, 0);
  ap_health_on_finish(nullptr, 1, &c, 0);
  Health h(ap_health_create());
  ap_health_on_finish(h.get(), 1, nullptr, 0);
  EXPECT_EQ(ap_health_check(nullptr, 5, &c, 0), AP_HEALTH_OK);
  EXPECT_EQ(ap_health_check(h.get(), 5, nullptr, 0), AP_HEALTH_OK);
  EXPECT_EQ(ap_health_ejections(nullptr), 0u);
  EXPECT_EQ(ap_health_failure_run(nullptr), 0u);
  ap_health_destroy(nullptr);
  const int64_t a = ap_health_now_ms(), b = ap_health_now_ms();
  EXPECT_GE(b, a);
}

}  // namespace
