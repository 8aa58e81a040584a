// ap_health: ejection after a failure run, probation, reinstatement, stuck
// detection, silences and their peers, the bound on members out, config
// validation, on explicit times.
#include "policy/core/pick/ap_health.h"
#include "policy/core/pick/ap_health_group.h"
#include "policy/core/pick/ap_health_group_internal.h"
#include "policy/core/pick/ap_health_testing.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace {

struct HealthDeleter {
  void operator()(ap_health *h) const { ap_health_destroy(h); }
};
using Health = std::unique_ptr<ap_health, HealthDeleter>;

// A fixed stuck threshold (no latency factor) unless a test sets one; the
// ejection cap at 4x the first ejection, as the defaults.
ap_health_config Config(uint32_t failures, uint32_t ejection_ms, uint32_t stuck_ms) {
  ap_health_config c;
  ap_health_config_init(&c);
  c.eject_after_failures = failures;
  c.ejection_ms = ejection_ms;
  c.max_ejection_ms = 4 * ejection_ms;
  c.stuck_call_ms = stuck_ms;
  c.stuck_call_min_ms = stuck_ms < 50 ? stuck_ms : 50;
  c.stuck_latency_factor = 0;
  return c;
}

TEST(Health, BuiltInTheCallersMemoryOnlyWhenItFits) {
  alignas(64) unsigned char memory[AP_HEALTH_FOOTPRINT + 64];
  EXPECT_EQ(ap_health_init_at(nullptr, sizeof memory, nullptr), nullptr);
  EXPECT_EQ(ap_health_init_at(memory, AP_HEALTH_FOOTPRINT - 1, nullptr), nullptr);
  EXPECT_EQ(ap_health_init_at(memory + 8, AP_HEALTH_FOOTPRINT, nullptr), nullptr)
      << "misaligned";
  ap_health_group* group = ap_health_group_create();
  ap_health* health = ap_health_init_at(memory, AP_HEALTH_FOOTPRINT, group);
  ASSERT_EQ(health, static_cast<void*>(memory));
  EXPECT_EQ(ap_health_ejections(health), 0u);
  EXPECT_EQ(ap_health_check(health, 0, nullptr, 0), AP_HEALTH_OK);
  // The member's reference on the group goes with it; the memory stays.
  ap_health_fini(health);
  ap_health_fini(nullptr);
  ap_health_group_unref(group);
}

TEST(Health, DefaultsAndNames) {
  ap_health_config c;
  ap_health_config_init(&c);
  EXPECT_EQ(c.eject_after_failures, 5u);
  EXPECT_EQ(c.ejection_ms, 3000u);
  EXPECT_EQ(c.stuck_call_ms, 1000u);
  EXPECT_EQ(c.max_ejection_ms, 6000u);
  EXPECT_EQ(c.stuck_call_min_ms, 25u);
  EXPECT_EQ(c.stuck_latency_factor, 8u);
  EXPECT_EQ(c.max_ejection_percent, 50u);
  EXPECT_EQ(ap_health_config_validate(&c, nullptr), AP_OK);
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
  c = Config(5, 1000, 1000);
  c.max_ejection_ms = 999;  // below ejectionMs
  EXPECT_EQ(ap_health_config_validate(&c, &err), AP_EINVAL);
  EXPECT_NE(std::string(err.message).find("maxEjectionMs"), std::string::npos);
  c = Config(5, 1000, 100);
  c.stuck_call_min_ms = 101;  // above stuckCallMs
  EXPECT_EQ(ap_health_config_validate(&c, &err), AP_EINVAL);
  EXPECT_NE(std::string(err.message).find("stuckCallMinMs"), std::string::npos);
  c = Config(5, 1000, 1000);
  c.stuck_latency_factor = AP_HEALTH_MAX_LATENCY_FACTOR + 1;
  EXPECT_EQ(ap_health_config_validate(&c, &err), AP_EINVAL);
  EXPECT_NE(std::string(err.message).find("stuckLatencyFactor"), std::string::npos);
  c = Config(5, 1000, 1000);
  c.max_ejection_percent = AP_HEALTH_MAX_EJECTION_PERCENT + 1;
  EXPECT_EQ(ap_health_config_validate(&c, &err), AP_EINVAL);
  EXPECT_STREQ(err.message, "maxEjectionPercent: must be at most 100, got 101");
  c.max_ejection_percent = 0;  // never eject
  EXPECT_EQ(ap_health_config_validate(&c, &err), AP_OK);
  c = Config(0, 1, 0);
  EXPECT_EQ(ap_health_config_validate(&c, &err), AP_OK);
}

// The cross-field rules in the service config's own words, every
// violation listed (the config parser reports each field it names).
TEST(Health, ValidateListsEveryViolationInTheConfigsWords) {
  ap_error err;
  ap_health_config c = Config(5, 2000, 100);
  c.max_ejection_ms = 1000;
  c.stuck_call_min_ms = 200;
  EXPECT_EQ(ap_health_config_validate(&c, &err), AP_EINVAL);
  EXPECT_STREQ(err.message,
               "maxEjectionMs: must be at least ejectionMs (2000), got 1000; "
               "stuckCallMinMs: must be at most stuckCallMs (100), got 200");
  c = Config(AP_HEALTH_MAX_FAILURES + 1, 0, AP_HEALTH_MAX_MS + 1);
  c.max_ejection_ms = AP_HEALTH_MAX_MS + 1;
  c.stuck_call_min_ms = AP_HEALTH_MAX_MS + 1;
  c.stuck_latency_factor = AP_HEALTH_MAX_LATENCY_FACTOR + 1;
  EXPECT_EQ(ap_health_config_validate(&c, &err), AP_EINVAL);
  // In field order, whole entries only, as many as the message holds (the
  // stuckCallMinMs and stuckLatencyFactor entries do not fit).
  EXPECT_STREQ(err.message,
               "ejectAfterFailures: must be at most 1000000, got 1000001; "
               "ejectionMs: must be in [1, 86400000], got 0; "
               "maxEjectionMs: must be at most 86400000, got 86400001; "
               "stuckCallMs: must be at most 86400000, got 86400001");
  // A stuckCallMs of 0 (never stuck) puts no ceiling on the floor.
  c = Config(5, 1000, 0);
  c.stuck_call_min_ms = 500;
  EXPECT_EQ(ap_health_config_validate(&c, &err), AP_OK);
}

// A field the config leaves out follows the ones it gives; a given one is
// kept as given, so the validator can name it.
TEST(Health, DefaultsFitTheGivenFields) {
  ap_health_config c;
  ap_health_config_init(&c);
  c.ejection_ms = 8000;  // above the default cap of 6000
  c.stuck_call_ms = 20;  // below the default floor of 25
  ap_health_config fitted = c;
  ap_health_config_fit_defaults(&fitted, 0);
  EXPECT_EQ(fitted.max_ejection_ms, 8000u);
  EXPECT_EQ(fitted.stuck_call_min_ms, 20u);
  EXPECT_EQ(ap_health_config_validate(&fitted, nullptr), AP_OK);

  fitted = c;
  ap_health_config_fit_defaults(
      &fitted, AP_HEALTH_GAVE_MAX_EJECTION_MS | AP_HEALTH_GAVE_STUCK_CALL_MIN_MS);
  EXPECT_EQ(fitted.max_ejection_ms, 6000u);
  EXPECT_EQ(fitted.stuck_call_min_ms, 25u);
  EXPECT_EQ(ap_health_config_validate(&fitted, nullptr), AP_EINVAL);

  // Defaults that already fit stay; stuckCallMs 0 keeps the floor.
  ap_health_config_init(&c);
  c.stuck_call_ms = 0;
  fitted = c;
  ap_health_config_fit_defaults(&fitted, 0);
  EXPECT_EQ(fitted.max_ejection_ms, 6000u);
  EXPECT_EQ(fitted.stuck_call_min_ms, 25u);
  ap_health_config_fit_defaults(nullptr, 0);
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
  // The probe fails: ejected again from its end, twice as long.
  ap_health_on_finish(h.get(), 1, &c, 1400);
  EXPECT_EQ(ap_health_ejections(h.get()), 2u);
  EXPECT_STREQ(ap_health_ejection_reason(h.get()), "probe");
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 3399), AP_HEALTH_EJECTED);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 3400), AP_HEALTH_PROBATION);
  // The next probe succeeds: usable, run reset.
  ap_health_on_finish(h.get(), 0, &c, 3450);
  EXPECT_EQ(ap_health_check(h.get(), 3, &c, 3450), AP_HEALTH_OK);
  EXPECT_EQ(ap_health_failure_run(h.get()), 0u);
  EXPECT_EQ(ap_health_ejection_length_ms(h.get()), 0u);
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

namespace {

// The lazy check reads the clock only when the answer depends on it, and
// gives the same answers as the check at that time.
TEST(Health, LazyCheckReadsTheClockOnlyWhenNeeded) {
  Health h(ap_health_create());
  const ap_health_config c = Config(1, 100000, 100000);  // no timing in play
  ap_health_on_start(h.get(), 0, ap_health_now_ms());
  int64_t now = -1;
  EXPECT_EQ(ap_health_check_lazy(h.get(), 0, &c, &now), AP_HEALTH_OK);
  EXPECT_EQ(now, -1);  // idle and not ejected: no clock needed
  EXPECT_EQ(ap_health_check_lazy(h.get(), 3, &c, &now), AP_HEALTH_OK);
  EXPECT_GE(now, 0);  // calls in flight with stuck detection: read once
  const int64_t read = now;
  EXPECT_EQ(ap_health_check_lazy(h.get(), 3, &c, &now), AP_HEALTH_OK);
  EXPECT_EQ(now, read);  // kept
  ap_health_on_finish(h.get(), 1, &c, ap_health_now_ms());  // ejected for 100 s
  int64_t fresh = -1;
  EXPECT_EQ(ap_health_check_lazy(h.get(), 0, &c, &fresh), AP_HEALTH_EJECTED);
  EXPECT_GE(fresh, 0);
  EXPECT_EQ(ap_health_check_lazy(h.get(), 0, &c, nullptr), AP_HEALTH_EJECTED);
  EXPECT_EQ(ap_health_check_lazy(nullptr, 0, &c, &fresh), AP_HEALTH_OK);
}

}  // namespace

namespace {

// Each failed probe doubles the ejection, up to maxEjectionMs; a success
// starts over from ejectionMs.
TEST(Health, FailedProbesDoubleTheEjectionUpToTheCap) {
  Health h(ap_health_create());
  ap_health_config c = Config(1, 100, 0);
  c.max_ejection_ms = 300;
  ap_health_on_finish(h.get(), 1, &c, 0);  // ejected until 100
  EXPECT_STREQ(ap_health_ejection_reason(h.get()), "failures");
  EXPECT_EQ(ap_health_ejection_length_ms(h.get()), 100u);
  ap_health_on_finish(h.get(), 1, &c, 100);  // probe fails: 200
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 299), AP_HEALTH_EJECTED);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 300), AP_HEALTH_PROBATION);
  ap_health_on_finish(h.get(), 1, &c, 300);  // 400, capped at 300
  EXPECT_EQ(ap_health_ejection_length_ms(h.get()), 300u);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 599), AP_HEALTH_EJECTED);
  ap_health_on_finish(h.get(), 1, &c, 600);  // stays at the cap
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 899), AP_HEALTH_EJECTED);
  EXPECT_EQ(ap_health_ejections(h.get()), 4u);
  ap_health_on_finish(h.get(), 0, &c, 900);  // the probe answers
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 900), AP_HEALTH_OK);
  ap_health_on_finish(h.get(), 1, &c, 1000);  // a new run: 100 again
  EXPECT_EQ(ap_health_ejection_length_ms(h.get()), 100u);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 1100), AP_HEALTH_PROBATION);
}

// The stuck threshold follows the member's latency EWMA within
// [stuckCallMinMs, stuckCallMs]; stuckCallMs alone before any sample.
TEST(Health, StuckThresholdFollowsTheLatency) {
  Health h(ap_health_create());
  ap_health_config c = Config(5, 1000, 1000);
  c.stuck_call_min_ms = 50;
  c.stuck_latency_factor = 8;
  EXPECT_DOUBLE_EQ(ap_health_latency_ms(h.get()), -1);
  EXPECT_EQ(ap_health_stuck_threshold_ms(h.get(), &c), 1000u);  // no sample yet
  ap_health_record_latency(h.get(), 3);
  EXPECT_DOUBLE_EQ(ap_health_latency_ms(h.get()), 3);
  EXPECT_EQ(ap_health_stuck_threshold_ms(h.get(), &c), 50u);  // 24: the floor
  for (int k = 0; k < 100; ++k) ap_health_record_latency(h.get(), 40);
  EXPECT_NEAR(ap_health_latency_ms(h.get()), 40, 0.5);
  EXPECT_NEAR(ap_health_stuck_threshold_ms(h.get(), &c), 320, 4);
  for (int k = 0; k < 100; ++k) ap_health_record_latency(h.get(), 500);
  EXPECT_EQ(ap_health_stuck_threshold_ms(h.get(), &c), 1000u);  // the cap
  ap_health_record_latency(h.get(), -5);  // ignored
  EXPECT_NEAR(ap_health_latency_ms(h.get()), 500, 1);
  // The check uses it: 3 ms members are stuck after 50 ms of silence.
  Health fast(ap_health_create());
  ap_health_record_latency(fast.get(), 3);
  ap_health_on_start(fast.get(), 0, 1000);
  EXPECT_EQ(ap_health_check(fast.get(), 2, &c, 1050), AP_HEALTH_OK);
  EXPECT_EQ(ap_health_check(fast.get(), 2, &c, 1051), AP_HEALTH_STUCK);
  c.stuck_latency_factor = 0;  // fixed threshold
  EXPECT_EQ(ap_health_check(fast.get(), 2, &c, 1051), AP_HEALTH_OK);
  c.stuck_call_ms = 0;  // off, whatever the factor
  c.stuck_latency_factor = 8;
  EXPECT_EQ(ap_health_stuck_threshold_ms(fast.get(), &c), 0u);
  EXPECT_EQ(ap_health_check(fast.get(), 2, &c, 99999), AP_HEALTH_OK);
}

struct GroupDeleter {
  void operator()(ap_health_group *g) const { ap_health_group_unref(g); }
};
using Group = std::unique_ptr<ap_health_group, GroupDeleter>;

// A silence that ends in a failure: the call started at `start`, nothing
// ended there since, and it failed at `end` (> the threshold later).
void FailAfterSilence(ap_health *h, const ap_health_config &c, int64_t start, int64_t end) {
  ap_health_on_start(h, 0, start);
  ap_health_on_finish(h, 1, &c, end);
}

// A sweep over `members` after each ended `calls` more calls, of which
// `failed[i]` failed (counted by the health itself, as on_finish does).
void Sweep(ap_health_group *g, const std::vector<ap_health *> &members,
           std::vector<uint64_t> *ended, uint64_t calls, const std::vector<int> &failed,
           const ap_health_config &c) {
  for (size_t i = 0; i < members.size(); ++i) {
    for (int k = 0; k < failed[i]; ++k) {  // each failure alone: no run
      ap_health_on_finish(members[i], 1, &c, 1);
      ap_health_on_finish(members[i], 0, &c, 1);
    }
    ap_health_on_finish(members[i], 0, &c, 1);
    (*ended)[i] += calls;
  }
  ASSERT_EQ(ap_health_sweep(g, members.data(), ended->data(), members.size(), nullptr), AP_OK);
}

// Four members in one group whose peers answer: the sweep found no
// failures among their calls.
struct QuietAperture {
  Group group{ap_health_group_create()};
  std::vector<Health> members;
  std::vector<ap_health *> raw;
  std::vector<uint64_t> ended;
  explicit QuietAperture(const ap_health_config &c, int n = 4) {
    ap_health_group_set_members(group.get(), n);
    for (int i = 0; i < n; ++i) {
      members.emplace_back(ap_health_create_in(group.get()));
      raw.push_back(members.back().get());
    }
    ended.assign(n, 0);
    Sweep(group.get(), raw, &ended, 100, std::vector<int>(n, 0), c);
  }
};

// One failure that ends a silence longer than the stuck threshold is no
// evidence by itself (a call in the latency tail, with a deadline inside
// the tail, ends so too): nothing changes but the run. (It used to eject
// at once: AFailureAfterAStuckSpellEjectsAtOnce, which this replaces.)
TEST(Health, AFailureAfterASilenceAloneEjectsNothing) {
  const ap_health_config c = Config(5, 1000, 100);
  QuietAperture a(c);
  ap_health *h = a.raw[0];
  ap_health_on_start(h, 0, 0);
  ap_health_on_finish(h, 0, &c, 10);   // progress at 10
  ap_health_on_finish(h, 1, &c, 60);   // 50 ms after the last end
  ap_health_on_finish(h, 0, &c, 61);
  ap_health_on_finish(h, 1, &c, 361);  // 300 ms of silence
  EXPECT_EQ(ap_health_check(h, 0, &c, 361), AP_HEALTH_OK);
  EXPECT_EQ(ap_health_ejections(h), 0u);
  ap_health_on_finish(h, 0, &c, 362);  // the next call answers: the run is over
  ap_health_on_finish(h, 1, &c, 363);  // a failure after that starts afresh
  EXPECT_EQ(ap_health_check(h, 0, &c, 363), AP_HEALTH_OK);
  EXPECT_EQ(ap_health_failure_run(h), 1u);
  // With ejection off (ejectAfterFailures 0) nothing changes either.
  Health off(ap_health_create());
  const ap_health_config never = Config(0, 1000, 100);
  FailAfterSilence(off.get(), never, 0, 500);
  ap_health_on_finish(off.get(), 1, &never, 501);
  EXPECT_EQ(ap_health_check(off.get(), 0, &never, 501), AP_HEALTH_OK);
}

// A second failure in a run that began after a silence ejects while the
// peers are quiet (the sweep found their calls answering): a frozen
// member's held calls, or the next call sent there.
TEST(Health, ASecondFailureAfterASilenceEjectsWhileThePeersAnswer) {
  const ap_health_config c = Config(5, 1000, 100);
  QuietAperture a(c);
  ASSERT_EQ(ap_health_group_peer_failure_ppm(a.group.get()), 0);
  ASSERT_TRUE(ap_health_group_peers_quiet(a.group.get()));
  ap_health *h = a.raw[0];
  FailAfterSilence(h, c, 1000, 1300);
  EXPECT_EQ(ap_health_check(h, 0, &c, 1300), AP_HEALTH_OK);
  ap_health_on_start(h, 0, 1301);  // the next call sent there fails too
  ap_health_on_finish(h, 1, &c, 1601);
  EXPECT_EQ(ap_health_check(h, 0, &c, 1601), AP_HEALTH_EJECTED);
  EXPECT_STREQ(ap_health_ejection_reason(h), "stuck");
  EXPECT_EQ(ap_health_ejections(h), 1u);
  EXPECT_TRUE(ap_health_holds_slot(h));
  EXPECT_EQ(ap_health_group_members_out(a.group.get()), 1u);
  // two calls it held fail together: the same evidence, at once
  ap_health *both = a.raw[1];
  ap_health_on_start(both, 0, 1000);
  ap_health_on_finish(both, 1, &c, 1300);
  ap_health_on_finish(both, 1, &c, 1301);
  EXPECT_EQ(ap_health_check(both, 0, &c, 1301), AP_HEALTH_EJECTED);
  EXPECT_EQ(ap_health_group_members_out(a.group.get()), 2u);
  // a success in between ends it: the slow call was the tail
  ap_health *tail = a.raw[2];
  FailAfterSilence(tail, c, 1000, 1300);
  ap_health_on_finish(tail, 0, &c, 1302);
  ap_health_on_finish(tail, 1, &c, 1303);
  EXPECT_EQ(ap_health_check(tail, 0, &c, 1303), AP_HEALTH_OK);
  // failures that began without a silence are the failure run's only
  ap_health *fast = a.raw[3];
  ap_health_on_start(fast, 0, 1999);
  for (int k = 0; k < 4; ++k) ap_health_on_finish(fast, 1, &c, 2000 + k);
  EXPECT_EQ(ap_health_check(fast, 0, &c, 2003), AP_HEALTH_OK);
}

// Until the sweep knows the peers (no sweep yet, or too few calls), or
// when their calls fail too (a service with deadlines inside its latency
// tail), a silence is no evidence and only the failure run ejects.
TEST(Health, WhenThePeersFailTooOnlyTheFailureRunEjects) {
  const ap_health_config c = Config(5, 1000, 100);
  Group g(ap_health_group_create());
  ap_health_group_set_members(g.get(), 4);
  std::vector<Health> m;
  std::vector<ap_health *> raw;
  for (int i = 0; i < 4; ++i) {
    m.emplace_back(ap_health_create_in(g.get()));
    raw.push_back(m.back().get());
  }
  EXPECT_EQ(ap_health_group_peer_failure_ppm(g.get()), -1);  // unknown
  EXPECT_FALSE(ap_health_group_peers_quiet(g.get()));
  FailAfterSilence(raw[0], c, 1000, 1300);
  FailAfterSilence(raw[0], c, 1301, 1601);
  EXPECT_EQ(ap_health_check(raw[0], 0, &c, 1601), AP_HEALTH_OK);
  std::vector<uint64_t> ended(4, 0);
  Sweep(g.get(), raw, &ended, 100, {10, 8, 12, 10}, c);  // 8-12% fail
  EXPECT_EQ(ap_health_group_peer_failure_ppm(g.get()), 100000);  // lower median
  EXPECT_FALSE(ap_health_group_peers_quiet(g.get()));
  ap_health *h = raw[1];
  for (int k = 0; k < 4; ++k) {  // failures 1..4 of a run after a silence
    FailAfterSilence(h, c, 2000 + 300 * k, 2200 + 300 * k);
    EXPECT_EQ(ap_health_check(h, 0, &c, 2200 + 300 * k), AP_HEALTH_OK) << k;
  }
  EXPECT_EQ(ap_health_ejections(h), 0u);
  FailAfterSilence(h, c, 3200, 3400);  // the fifth: the run ejects
  EXPECT_EQ(ap_health_check(h, 0, &c, 3400), AP_HEALTH_EJECTED);
  EXPECT_STREQ(ap_health_ejection_reason(h), "failures");
}

// The sweep: each member's share over a whole window of at least
// AP_HEALTH_MIN_VOLUME ended calls, kept until its next whole window; the
// peers' share is the lower median once half of the members have one.
TEST(Health, TheSweepTakesTheLowerMedianOfWholeWindows) {
  const ap_health_config c = Config(1000, 1000, 100);
  Group g(ap_health_group_create());
  std::vector<Health> m;
  std::vector<ap_health *> raw;
  for (int i = 0; i < 4; ++i) {
    m.emplace_back(ap_health_create_in(g.get()));
    raw.push_back(m.back().get());
  }
  std::vector<uint64_t> ended(4, 0);
  // 49 calls each: no window is whole yet
  Sweep(g.get(), raw, &ended, AP_HEALTH_MIN_VOLUME - 1, {1, 1, 1, 1}, c);
  EXPECT_EQ(ap_health_group_peer_failure_ppm(g.get()), -1);
  EXPECT_EQ(ap_health_failure_share_ppm(raw[0]), -1);
  // one more call each: 50, with 1 and 2 failures: whole windows
  Sweep(g.get(), raw, &ended, 1, {0, 1, 0, 1}, c);
  EXPECT_EQ(ap_health_failure_share_ppm(raw[0]), 20000);  // 1 of 50
  EXPECT_EQ(ap_health_failure_share_ppm(raw[1]), 40000);  // 2 of 50
  EXPECT_EQ(ap_health_group_peer_failure_ppm(g.get()), 20000);
  // a frozen member (all its calls fail) among answering ones: the lower
  // median is the peers'
  Sweep(g.get(), raw, &ended, 100, {100, 0, 0, 0}, c);
  EXPECT_EQ(ap_health_failure_share_ppm(raw[0]), 1000000);
  EXPECT_EQ(ap_health_group_peer_failure_ppm(g.get()), 0);
  EXPECT_TRUE(ap_health_group_peers_quiet(g.get()));
  // two of four failing (a partition): still the answering half's
  Sweep(g.get(), raw, &ended, 100, {100, 100, 0, 0}, c);
  EXPECT_EQ(ap_health_group_peer_failure_ppm(g.get()), 0);
  // a member with too few new calls keeps its last share
  Sweep(g.get(), raw, &ended, 10, {10, 0, 0, 0}, c);
  EXPECT_EQ(ap_health_failure_share_ppm(raw[0]), 1000000);
  // new members without a share: unknown until half of them have one
  Health late1(ap_health_create_in(g.get())), late2(ap_health_create_in(g.get())),
      late3(ap_health_create_in(g.get())), late4(ap_health_create_in(g.get())),
      late5(ap_health_create_in(g.get()));
  std::vector<ap_health *> more = raw;
  for (ap_health *x : {late1.get(), late2.get(), late3.get(), late4.get(), late5.get()})
    more.push_back(x);
  std::vector<uint64_t> more_ended = ended;
  more_ended.resize(9, 0);
  ASSERT_EQ(ap_health_sweep(g.get(), more.data(), more_ended.data(), 9, nullptr), AP_OK);
  EXPECT_EQ(ap_health_group_peer_failure_ppm(g.get()), -1);  // 4 of 9 known
  // NULL members are skipped; bad arguments are refused
  more[8] = nullptr;
  ASSERT_EQ(ap_health_sweep(g.get(), more.data(), more_ended.data(), 9, nullptr), AP_OK);
  EXPECT_EQ(ap_health_group_peer_failure_ppm(g.get()), 0);  // 4 of 8 known
  ap_error err;
  EXPECT_EQ(ap_health_sweep(nullptr, raw.data(), ended.data(), 4, &err), AP_EINVAL);
  EXPECT_EQ(ap_health_sweep(g.get(), nullptr, ended.data(), 4, &err), AP_EINVAL);
  EXPECT_EQ(ap_health_sweep(g.get(), raw.data(), nullptr, 4, &err), AP_EINVAL);
  EXPECT_EQ(ap_health_sweep(g.get(), nullptr, nullptr, 0, &err), AP_OK);
  EXPECT_EQ(ap_health_group_peer_failure_ppm(g.get()), -1);  // no members: unknown
  EXPECT_EQ(ap_health_group_peer_failure_ppm(nullptr), -1);
  EXPECT_TRUE(ap_health_group_peers_quiet(nullptr));  // alone: nothing to compare
  EXPECT_EQ(ap_health_failure_share_ppm(nullptr), -1);
}

// What maxEjectionPercent means at 4, 12 and 100 members: the default half
// is 2, 6 and 50; Envoy's and gRPC's 10% would be 1, 1 and 10 (at least
// one member whenever the percent is above 0).
TEST(Health, MaxMembersOutAtTheAnchorsSizes) {
  EXPECT_EQ(ap_health_max_members_out(4, 50), 2u);
  EXPECT_EQ(ap_health_max_members_out(12, 50), 6u);
  EXPECT_EQ(ap_health_max_members_out(100, 50), 50u);
  EXPECT_EQ(ap_health_max_members_out(4, 10), 1u);
  EXPECT_EQ(ap_health_max_members_out(12, 10), 1u);
  EXPECT_EQ(ap_health_max_members_out(100, 10), 10u);
  EXPECT_EQ(ap_health_max_members_out(3, 50), 1u);
  EXPECT_EQ(ap_health_max_members_out(4, 100), 4u);
  EXPECT_EQ(ap_health_max_members_out(4, 1000), 4u);  // clamped
  EXPECT_EQ(ap_health_max_members_out(0, 50), 1u);    // no members yet: one
  EXPECT_EQ(ap_health_max_members_out(100, 0), 0u);   // never
}

// Ejections take the group's slots: at the bound a member that would be
// ejected stays in on probation (one call at a time, no slot), and takes
// a slot at its next failure once one is free. First come, first served.
TEST(Health, TheBoundKeepsMembersInFirstComeFirstServed) {
  Group g(ap_health_group_create());
  ap_health_group_set_members(g.get(), 4);  // at most 2 out (50%)
  const ap_health_config c = Config(2, 1000, 0);
  std::vector<Health> m;
  for (int i = 0; i < 4; ++i) m.emplace_back(ap_health_create_in(g.get()));
  auto fail_twice = [&](int i, int64_t t) {
    ap_health_on_finish(m[i].get(), 1, &c, t);
    ap_health_on_finish(m[i].get(), 1, &c, t + 1);
  };
  fail_twice(0, 10);
  fail_twice(1, 20);
  EXPECT_EQ(ap_health_group_members_out(g.get()), 2u);
  fail_twice(2, 30);  // the third: no slot
  EXPECT_EQ(ap_health_check(m[2].get(), 0, &c, 31), AP_HEALTH_PROBATION);
  EXPECT_EQ(ap_health_ejections(m[2].get()), 0u);
  EXPECT_FALSE(ap_health_holds_slot(m[2].get()));
  EXPECT_EQ(ap_health_group_members_out(g.get()), 2u);
  ap_health_on_finish(m[2].get(), 1, &c, 40);  // its probe fails: still none free
  EXPECT_EQ(ap_health_check(m[2].get(), 0, &c, 40), AP_HEALTH_PROBATION);
  // member 0 answers (a call it held): back in, its slot free
  ap_health_on_finish(m[0].get(), 0, &c, 50);
  EXPECT_EQ(ap_health_check(m[0].get(), 0, &c, 50), AP_HEALTH_OK);
  EXPECT_EQ(ap_health_group_members_out(g.get()), 1u);
  ap_health_on_finish(m[2].get(), 1, &c, 60);  // its next failure takes it
  EXPECT_EQ(ap_health_check(m[2].get(), 0, &c, 60), AP_HEALTH_EJECTED);
  EXPECT_STREQ(ap_health_ejection_reason(m[2].get()), "failures");
  EXPECT_EQ(ap_health_group_members_out(g.get()), 2u);
  // a failed probe keeps its own slot (no second one)
  ap_health_on_finish(m[1].get(), 1, &c, 2000);
  EXPECT_EQ(ap_health_check(m[1].get(), 0, &c, 2000), AP_HEALTH_EJECTED);
  EXPECT_STREQ(ap_health_ejection_reason(m[1].get()), "probe");
  EXPECT_EQ(ap_health_group_members_out(g.get()), 2u);
  // a new connection gives it back, and so does a member's end
  ap_health_reset(m[1].get(), 2100);
  EXPECT_EQ(ap_health_group_members_out(g.get()), 1u);
  m[2].reset();
  EXPECT_EQ(ap_health_group_members_out(g.get()), 0u);
  // the aperture grows: more slots
  ap_health_group_set_members(g.get(), 12);
  EXPECT_EQ(ap_health_group_members(g.get()), 12u);
  for (int k = 0; k < 7; ++k) EXPECT_EQ(ap_health_group_take_slot(g.get(), 50), k < 6 ? 1 : 0);
  for (int k = 0; k < 8; ++k) ap_health_group_give_slot(g.get());  // never below 0
  EXPECT_EQ(ap_health_group_members_out(g.get()), 0u);
}

// The group knows when every member is plainly in (none ejected, none on
// probation), so a pick may take an idle member as usable without reading
// its health: every way out and back in keeps that count.
TEST(Health, TheGroupKnowsWhenEveryMemberIsIn) {
  Group g(ap_health_group_create());
  ap_health_group_set_members(g.get(), 2);  // at most 1 out (50%)
  const ap_health_config c = Config(2, 1000, 0);
  Health a(ap_health_create_in(g.get())), b(ap_health_create_in(g.get()));
  EXPECT_TRUE(ap_health_group_all_in(g.get()));
  ap_health_on_finish(a.get(), 1, &c, 10);
  ap_health_on_finish(a.get(), 1, &c, 11);  // ejected
  EXPECT_FALSE(ap_health_group_all_in(g.get()));
  ap_health_on_finish(b.get(), 1, &c, 20);
  ap_health_on_finish(b.get(), 1, &c, 21);  // at the bound: probation
  EXPECT_EQ(ap_health_check(b.get(), 0, &c, 21), AP_HEALTH_PROBATION);
  ap_health_on_finish(a.get(), 1, &c, 2000);  // a failed probe: still out
  ap_health_on_finish(a.get(), 0, &c, 2001);  // back
  EXPECT_FALSE(ap_health_group_all_in(g.get()));  // b is still on probation
  ap_health_reset(b.get(), 2002);                 // b reconnects
  EXPECT_TRUE(ap_health_group_all_in(g.get()));
  ap_health_on_finish(a.get(), 1, &c, 3000);
  ap_health_on_finish(a.get(), 1, &c, 3001);  // out again
  EXPECT_FALSE(ap_health_group_all_in(g.get()));
  a.reset();  // leaves while out
  EXPECT_TRUE(ap_health_group_all_in(g.get()));
  EXPECT_EQ(ap_health_group_members_out(g.get()), 0u);
  EXPECT_FALSE(ap_health_group_all_in(nullptr));  // unknown: look at each
}

// maxEjectionPercent 0: never ejected; a member that would be is kept on
// probation instead. Without a group there is no bound.
TEST(Health, ZeroPercentNeverEjectsAndNoGroupHasNoBound) {
  Group g(ap_health_group_create());
  ap_health_group_set_members(g.get(), 4);
  ap_health_config c = Config(1, 1000, 0);
  c.max_ejection_percent = 0;
  Health h(ap_health_create_in(g.get()));
  for (int k = 0; k < 5; ++k) ap_health_on_finish(h.get(), 1, &c, 10 + k);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 20), AP_HEALTH_PROBATION);
  EXPECT_EQ(ap_health_ejections(h.get()), 0u);
  c.max_ejection_percent = 10;
  std::vector<Health> alone;
  for (int i = 0; i < 10; ++i) {
    alone.emplace_back(ap_health_create());
    ap_health_on_finish(alone.back().get(), 1, &c, 10);
    EXPECT_EQ(ap_health_check(alone.back().get(), 0, &c, 10), AP_HEALTH_EJECTED);
  }
  ap_health_group_ref(nullptr);
  ap_health_group_unref(nullptr);
  ap_health_group_set_members(nullptr, 3);
  EXPECT_EQ(ap_health_group_members_out(nullptr), 0u);
  EXPECT_EQ(ap_health_group_take_slot(nullptr, 0), 0);
  ap_health_group_give_slot(nullptr);
}

// A new connection (the subchannel READY again) ends the ejection and the
// doubling at once.
TEST(Health, ResetEndsTheEjection) {
  Health h(ap_health_create());
  const ap_health_config c = Config(1, 1000, 0);
  ap_health_on_finish(h.get(), 1, &c, 0);
  ap_health_on_finish(h.get(), 1, &c, 1000);  // failed probe: 2000 ms
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 1500), AP_HEALTH_EJECTED);
  ap_health_reset(h.get(), 1500);
  EXPECT_EQ(ap_health_check(h.get(), 0, &c, 1500), AP_HEALTH_OK);
  EXPECT_EQ(ap_health_failure_run(h.get()), 0u);
  EXPECT_STREQ(ap_health_ejection_reason(h.get()), "none");
  EXPECT_EQ(ap_health_ejections(h.get()), 2u);  // counted, not forgotten
  ap_health_on_finish(h.get(), 1, &c, 1600);  // a new run: 1000 ms again
  EXPECT_EQ(ap_health_ejection_length_ms(h.get()), 1000u);
  ap_health_reset(nullptr, 0);
  EXPECT_STREQ(ap_health_ejection_reason(nullptr), "none");
  EXPECT_DOUBLE_EQ(ap_health_latency_ms(nullptr), -1);
}

}  // namespace
