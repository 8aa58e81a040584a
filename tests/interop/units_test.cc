// Unit tests of the interop helper modules (no processes).
#include <cstdlib>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "interop/common/delay_queue.h"
#include "interop/common/json_read.h"
#include "interop/common/json_write.h"
#include "interop/common/latency_hist.h"
#include "interop/testing/call_options.h"
#include "interop/testing/channelz_json.h"
#include "interop/testing/rpc_behavior.h"

namespace {

int Parse(rpc_behavior *b, const char *s, const char *host = "s1") {
  return io_rpc_behavior_parse(b, s, strlen(s), host);
}

TEST(RpcBehavior, ParsesSleepAndErrorCodeCommaSeparated) {
  rpc_behavior b;
  io_rpc_behavior_init(&b);
  EXPECT_EQ(0, b.sleep_ms);
  EXPECT_EQ(-1, b.error_code);
  ASSERT_EQ(0, Parse(&b, "sleep-20, error-code-14,sleep-5"));
  EXPECT_EQ(25, b.sleep_ms);
  EXPECT_EQ(14, b.error_code);
}

TEST(RpcBehavior, IgnoresUnknownDirectivesAndRejectsBadNumbers) {
  rpc_behavior b;
  io_rpc_behavior_init(&b);
  ASSERT_EQ(0, Parse(&b, "keep-open,success-on-retry-attempt-1,,"));
  EXPECT_EQ(0, b.sleep_ms);
  EXPECT_EQ(-1, b.error_code);
  EXPECT_EQ(-1, Parse(&b, "error-code-17"));
  EXPECT_EQ(-1, Parse(&b, "sleep-"));
  EXPECT_EQ(-1, Parse(&b, "sleep-12a"));
  EXPECT_EQ(-1, Parse(&b, "sleep-99999999"));
  EXPECT_EQ(-1, io_rpc_behavior_parse(nullptr, "sleep-1", 7, "s1"));
  EXPECT_EQ(-1, io_rpc_behavior_parse(&b, nullptr, 3, "s1"));
  EXPECT_EQ(0, io_rpc_behavior_parse(&b, nullptr, 0, "s1"));
}

TEST(RpcBehavior, HostnameDirectivesApplyOnlyOnThatServer) {
  rpc_behavior b;
  io_rpc_behavior_init(&b);
  ASSERT_EQ(0, Parse(&b, "hostname=s2 error-code-14, hostname=s1 sleep-7,sleep-3", "s1"));
  EXPECT_EQ(10, b.sleep_ms);
  EXPECT_EQ(-1, b.error_code);
  io_rpc_behavior_init(&b);
  ASSERT_EQ(0, Parse(&b, "hostname=s2 error-code-14, hostname=s1 sleep-7", "s2"));
  EXPECT_EQ(0, b.sleep_ms);
  EXPECT_EQ(14, b.error_code);
  // a prefix of the name is not the name
  io_rpc_behavior_init(&b);
  ASSERT_EQ(0, Parse(&b, "hostname=s error-code-3,hostname=s12 error-code-4", "s1"));
  EXPECT_EQ(-1, b.error_code);
  // no hostname: conditional directives never apply
  io_rpc_behavior_init(&b);
  ASSERT_EQ(0, Parse(&b, "hostname=s1 error-code-5", nullptr));
  EXPECT_EQ(-1, b.error_code);
  // malformed, even for another host
  EXPECT_EQ(-1, Parse(&b, "hostname=s1"));
  EXPECT_EQ(-1, Parse(&b, "hostname= sleep-1"));
  EXPECT_EQ(-1, Parse(&b, "hostname=s2 sleep-x"));
}

TEST(RpcBehavior, SleepIsCappedAtTheMaximum) {
  rpc_behavior b;
  io_rpc_behavior_init(&b);
  ASSERT_EQ(0, Parse(&b, "sleep-60000,sleep-60000"));
  EXPECT_EQ(RPC_BEHAVIOR_MAX_SLEEP_MS, b.sleep_ms);
}

TEST(DelayQueue, PopsInDueOrderAndOnlyWhenDue) {
  delay_queue *q = io_delay_queue_create(8);
  ASSERT_NE(nullptr, q);
  int items[6];
  const int64_t due[6] = {50, 10, 40, 20, 60, 30};
  for (int i = 0; i < 6; i++) ASSERT_EQ(0, io_delay_queue_push(q, due[i], &items[i]));
  EXPECT_EQ(10, io_delay_queue_next_due(q));
  EXPECT_EQ(nullptr, io_delay_queue_pop_due(q, 9));
  int64_t last = 0;
  int n = 0;
  void *it;
  while ((it = io_delay_queue_pop_due(q, 45)) != nullptr) {
    int idx = static_cast<int>(static_cast<int *>(it) - items);
    EXPECT_GE(due[idx], last);
    last = due[idx];
    n++;
  }
  EXPECT_EQ(4, n);
  EXPECT_EQ(2u, io_delay_queue_size(q));
  EXPECT_EQ(&items[0], io_delay_queue_pop_any(q));
  EXPECT_EQ(&items[4], io_delay_queue_pop_any(q));
  EXPECT_EQ(INT64_MAX, io_delay_queue_next_due(q));
  io_delay_queue_destroy(q);
}

TEST(DelayQueue, IsBounded) {
  EXPECT_EQ(nullptr, io_delay_queue_create(0));
  delay_queue *q = io_delay_queue_create(2);
  int x;
  EXPECT_EQ(0, io_delay_queue_push(q, 1, &x));
  EXPECT_EQ(0, io_delay_queue_push(q, 2, &x));
  EXPECT_EQ(-1, io_delay_queue_push(q, 3, &x));
  EXPECT_EQ(-1, io_delay_queue_push(nullptr, 3, &x));
  io_delay_queue_destroy(q);
}

TEST(LatencyHist, QuantilesOfAUniformSpreadAreWithinBucketError) {
  static latency_hist h;
  io_latency_hist_reset(&h);
  for (uint64_t v = 1; v <= 100000; v++) io_latency_hist_record(&h, v);
  EXPECT_NEAR(50000.0, static_cast<double>(io_latency_hist_quantile(&h, 0.5)), 50000 * 0.016);
  EXPECT_NEAR(99000.0, static_cast<double>(io_latency_hist_quantile(&h, 0.99)), 99000 * 0.016);
  EXPECT_EQ(100000u, io_latency_hist_quantile(&h, 1.0));
  EXPECT_EQ(1u, io_latency_hist_quantile(&h, 0.0));
  EXPECT_NEAR(50000.5, io_latency_hist_mean(&h), 1e-6);
  EXPECT_EQ(0u, io_latency_hist_quantile(&h, 1.5));
}

TEST(LatencyHist, SmallValuesAreExact) {
  static latency_hist h;
  io_latency_hist_reset(&h);
  for (int i = 0; i < 99; i++) io_latency_hist_record(&h, 7);
  io_latency_hist_record(&h, 100);
  EXPECT_EQ(7u, io_latency_hist_quantile(&h, 0.5));
  EXPECT_EQ(7u, io_latency_hist_quantile(&h, 0.99));
  EXPECT_EQ(100u, io_latency_hist_quantile(&h, 0.999));
}

// Documents as gRPC 1.51's channelz renders them (int64 as strings; "end"
// only on the last page; listen sockets inside the server object).
const char kServers[] =
    "{\"server\":[{\"ref\":{\"serverId\":\"4\"},\"data\":{\"calls"
    "Started\":\"12\",\"callsSucceeded\":\"12\",\"lastCallStartedTimestamp\":"
    "\"2026-12-01T03:00:00.000000000Z\"},\"listenSocket\":[{\"socketId\":\"5\","
    "\"name\":\"chttp2 listener 127.0.0.1:40001\"}]},{\"ref\":{\"serverId\":"
    "\"9\"}}],\"end\":true}";
const char kSocketsPage[] =
    "{\"socketRef\":[{\"socketId\":\"17\",\"name\":\"127.0.0.1:40001 -> "
    "127.0.0.1:51234\"},{\"socketId\":\"12\",\"name\":\"ipv4:127.0.0.1:5\"},"
    "{\"socketId\":\"30\"}]}";
const char kSocketsLast[] = "{\"socketRef\":[{\"socketId\":\"31\"}],\"end\":true}";

TEST(ChannelzJson, ReadsTheFirstServersId) {
  int64_t id = -1;
  ASSERT_EQ(0, io_channelz_server_id(kServers, &id));
  EXPECT_EQ(4, id);
  EXPECT_EQ(-1, io_channelz_server_id("{}", &id));
  EXPECT_EQ(-1, io_channelz_server_id("{\"server\":[{\"ref\":{}}]}", &id));
  EXPECT_EQ(-1, io_channelz_server_id("{\"server\":", &id));
  EXPECT_EQ(-1, io_channelz_server_id(nullptr, &id));
}

TEST(ChannelzJson, AppendsSocketIdsInPageOrderAndSeesTheLastPage) {
  int64_t *ids = nullptr;
  size_t n = 0, cap = 0;
  int end = 1;
  ASSERT_EQ(0, io_channelz_socket_ids(kSocketsPage, &ids, &n, &cap, &end));
  EXPECT_EQ(0, end);
  ASSERT_EQ(3u, n);
  EXPECT_EQ(17, ids[0]);
  EXPECT_EQ(12, ids[1]);
  EXPECT_EQ(30, ids[2]);
  ASSERT_EQ(0, io_channelz_socket_ids(kSocketsLast, &ids, &n, &cap, &end));
  EXPECT_EQ(1, end);
  ASSERT_EQ(4u, n);
  EXPECT_EQ(31, ids[3]);
  ASSERT_EQ(0, io_channelz_socket_ids("{\"end\":true}", &ids, &n, &cap, &end));
  EXPECT_EQ(4u, n);
  EXPECT_EQ(-1, io_channelz_socket_ids("{\"socketRef\":[{\"socketId\":\"x\"}]}", &ids, &n, &cap,
                                       &end));
  EXPECT_EQ(-1, io_channelz_socket_ids("not json", &ids, &n, &cap, &end));
  free(ids);
}

TEST(JsonWrite, EscapesQuotesBackslashesAndControlCharactersAndReadsBack) {
  char *text = nullptr;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  ASSERT_NE(nullptr, f);
  ap_json_write_string(f, "a\"b\\c\nd\re\tf\x01g");
  fputc(' ', f);
  ap_json_write_string(f, nullptr);
  ASSERT_EQ(0, fclose(f));
  EXPECT_STREQ("\"a\\\"b\\\\c\\nd\\re\\tf\\u0001g\" \"\"", text);
  text[strcspn(text, " ")] = '\0';
  json_value *v = io_json_parse(text, nullptr, 0);
  ASSERT_NE(nullptr, v);
  EXPECT_STREQ("a\"b\\c\nd\re\tf\x01g", io_json_string(v));
  io_json_free(v);
  free(text);
}

TEST(JsonRead, ParsesNestedObjectsArraysAndEscapes) {
  char err[128];
  json_value *v = io_json_parse(
      "{\"a\": 1.5, \"s\": \"x\\\"y\\u0041\", \"m\": {\"k\": [1, 2, true, null]}, \"b\": false}",
      err, sizeof(err));
  ASSERT_NE(nullptr, v) << err;
  EXPECT_EQ(1.5, io_json_get_number(v, "a", 0));
  EXPECT_STREQ("x\"yA", io_json_string(io_json_get(v, "s")));
  const json_value *k = io_json_get(io_json_get(v, "m"), "k");
  ASSERT_EQ(4u, io_json_size(k));
  EXPECT_EQ(2, io_json_number(io_json_at(k, 1), 0));
  EXPECT_EQ(1, io_json_bool(io_json_at(k, 2), 0));
  EXPECT_EQ(JSON_NULL, io_json_type_of(io_json_at(k, 3)));
  EXPECT_EQ(0, io_json_bool(io_json_get(v, "b"), 1));
  EXPECT_STREQ("m", io_json_key_at(v, 2));
  EXPECT_EQ(nullptr, io_json_get(v, "missing"));
  EXPECT_EQ(-1, io_json_get_number(v, "s", -1));
  io_json_free(v);
}

TEST(JsonRead, RejectsMalformedInputWithAMessage) {
  char err[128];
  for (const char *bad : {"{", "{\"a\" 1}", "[1,]", "{\"a\":1} x", "\"abc", "tru"}) {
    err[0] = '\0';
    EXPECT_EQ(nullptr, io_json_parse(bad, err, sizeof(err))) << bad;
    EXPECT_NE('\0', err[0]) << bad;
  }
  EXPECT_EQ(nullptr, io_json_parse(nullptr, err, sizeof(err)));
  std::string deep(100, '[');
  EXPECT_EQ(nullptr, io_json_parse(deep.c_str(), err, sizeof(err)));
}

}  // namespace

namespace {

TEST(CallOptions, UniqueMetadataGivesEveryCallANewValue) {
  call_options o;
  io_call_options_init(&o);
  char value[CALL_OPTIONS_UNIQUE_VALUE_MAX + 1];
  EXPECT_EQ(0, io_call_options_unique_value(&o, 7, value, sizeof value));  // not set
  ASSERT_EQ(0, io_call_options_set_unique_metadata(&o, "x-session-key:c1-"));
  EXPECT_STREQ("x-session-key", o.unique_key);
  ASSERT_EQ(1, io_call_options_unique_value(&o, 0, value, sizeof value));
  EXPECT_STREQ("c1-0", value);
  ASSERT_EQ(1, io_call_options_unique_value(&o, 123456789, value, sizeof value));
  EXPECT_STREQ("c1-123456789", value);
  ASSERT_EQ(0, io_call_options_set_unique_metadata(&o, "k:"));  // empty prefix
  ASSERT_EQ(1, io_call_options_unique_value(&o, 5, value, sizeof value));
  EXPECT_STREQ("5", value);
}

TEST(CallOptions, UniqueMetadataRejectsBadKeysAndLongPrefixes) {
  call_options o;
  io_call_options_init(&o);
  EXPECT_EQ(-1, io_call_options_set_unique_metadata(&o, "no-colon"));
  EXPECT_EQ(-1, io_call_options_set_unique_metadata(&o, "Upper:x"));
  EXPECT_EQ(-1, io_call_options_set_unique_metadata(&o, "grpc-x:x"));
  EXPECT_EQ(-1, io_call_options_set_unique_metadata(&o, ":x"));
  EXPECT_EQ(-1, io_call_options_set_unique_metadata(&o, nullptr));
  EXPECT_EQ(-1, io_call_options_set_unique_metadata(&o, ("k:" + std::string(160, 'p')).c_str()));
  EXPECT_EQ('\0', o.unique_key[0]);  // nothing taken from a bad value
}

}  // namespace
