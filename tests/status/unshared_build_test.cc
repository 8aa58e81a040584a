// The steps of an answer the status server runs at the idle scheduling
// class (ap_status_handler.h: filling and measuring the messages, packing
// them) allocate nothing, free nothing and take no mutex: a thread that
// may wait long for the CPU must not hold what another thread waits for,
// and malloc's arenas are shared between threads once there are more
// threads than arenas. The test links with malloc, calloc, realloc, free
// and pthread_mutex_lock wrapped (-Wl,--wrap), and counts the calls made
// while an unshared step runs.
#include <pthread.h>
#include <stdlib.h>

#include <string>

#include <gtest/gtest.h>

extern "C" {
#include "aperture/v1/status.pb-c.h"
#include "policy/status/ap_status_handler.h"
}
#include "tests/status/fake_instance.h"

namespace {
thread_local bool t_unshared = false;
int g_calls = 0;  // made by an unshared step (only this thread runs them)
}  // namespace

extern "C" {
void* __real_malloc(size_t);
void* __real_calloc(size_t, size_t);
void* __real_realloc(void*, size_t);
void __real_free(void*);
int __real_pthread_mutex_lock(pthread_mutex_t*);

void* __wrap_malloc(size_t n) {
  if (t_unshared) g_calls++;
  return __real_malloc(n);
}
void* __wrap_calloc(size_t n, size_t size) {
  if (t_unshared) g_calls++;
  return __real_calloc(n, size);
}
void* __wrap_realloc(void* p, size_t n) {
  if (t_unshared) g_calls++;
  return __real_realloc(p, n);
}
void __wrap_free(void* p) {
  if (t_unshared) g_calls++;
  __real_free(p);
}
int __wrap_pthread_mutex_lock(pthread_mutex_t* mu) {
  if (t_unshared) g_calls++;
  return __real_pthread_mutex_lock(mu);
}
}

namespace {

int g_steps = 0;

void RunUnshared(void*, void (*fn)(void*), void* arg) {
  g_steps++;
  t_unshared = true;
  fn(arg);
  t_unshared = false;
}

std::string Request(uint32_t max_endpoints) {
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  req.max_endpoints = max_endpoints;
  std::string bytes(aperture__v1__get_ring_state_request__get_packed_size(&req), '\0');
  aperture__v1__get_ring_state_request__pack(&req, reinterpret_cast<uint8_t*>(&bytes[0]));
  return bytes;
}

TEST(UnsharedBuild, TheIdleClassStepsAllocateAndLockNothing) {
  // Two rings, one with strings that are not UTF-8 (repaired, which
  // allocates: before the unshared steps).
  RegisteredInstance a("dns:///alpha.svc:443", 300), b("dns:///bad\xff.svc:443", 40);
  b.SetText("\xfe status");
  const std::string request = Request(1000);
  ap_status_reply reply;
  ap_status_work* work = ap_status_work_start(reinterpret_cast<const uint8_t*>(request.data()),
                                              request.size(), &reply);
  ASSERT_NE(work, nullptr) << reply.message;
  ASSERT_EQ(ap_status_work_copy(work, &reply), 1) << reply.message;
  const ap_status_answer_hooks hooks = {RunUnshared, nullptr, nullptr};
  size_t need = 0;
  ap_status_work_answer(work, &hooks, &reply, &need);
  EXPECT_EQ(g_steps, 2);
  EXPECT_EQ(g_calls, 0) << "allocator or mutex calls in the unshared steps";
  ASSERT_EQ(reply.code, 0) << reply.message;
  EXPECT_GT(need, reply.body_len);
  Aperture__V1__GetRingStateResponse* msg =
      aperture__v1__get_ring_state_response__unpack(nullptr, reply.body_len, reply.body);
  ASSERT_NE(msg, nullptr);
  EXPECT_EQ(msg->n_rings, 2u);
  EXPECT_EQ(msg->rings[0]->n_endpoints, 300u);
  EXPECT_STREQ(msg->rings[1]->last_status, "\xef\xbf\xbd status");
  aperture__v1__get_ring_state_response__free_unpacked(msg, nullptr);
  ap_status_reply_clear(&reply);
}

// The wrappers see what they should: a step that allocates is counted.
TEST(UnsharedBuild, TheWrappersCountAnAllocation) {
  const int before = g_calls;
  RunUnshared(
      nullptr,
      [](void*) {
        void* volatile p = malloc(16);
        free(p);
      },
      nullptr);
  EXPECT_EQ(g_calls - before, 2);
}

}  // namespace
