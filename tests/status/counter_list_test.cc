// The status counters are declared once (policy/registry/ap_ring_counters.def
// and ap_endpoint_counters.def); this test keeps a counter from being half
// added. An instance registered through a real snapshot callback sets every
// listed counter to a value of its own; a real status server answers, and
// each value must be found under the counter's name in the decoded proto
// (looked up by name in the message descriptor), in aperturectl's JSON, in
// its table and in its Prometheus text (run as a real process), and each
// metric family must be in docs/metrics.md. A uint64 field of the proto
// that is not in a list, and not one of the few laid out by hand, fails too.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "aperture/v1/status.pb-c.h"
#include "policy/include/aperture.h"
#include "policy/registry/ap_registry.h"
#include "policy/status/ap_status_client.h"
}

namespace {

struct RingCounter {
  const char *name, *kind, *metric, *help, *text;
};
const RingCounter kRingCounters[] = {
#define AP_RING_COUNTER(name, kind, metric, help, text) {#name, #kind, metric, help, text},
#include "policy/registry/ap_ring_counters.def"
#undef AP_RING_COUNTER
};

struct EndpointCounter {
  const char *name, *kind, *metric, *help, *column;
};
const EndpointCounter kEndpointCounters[] = {
#define AP_ENDPOINT_COUNTER(name, kind, metric, help, column, width) \
  {#name, #kind, metric, help, column},
#include "policy/registry/ap_endpoint_counters.def"
#undef AP_ENDPOINT_COUNTER
};

constexpr size_t kRingCounterCount = sizeof kRingCounters / sizeof kRingCounters[0];
constexpr size_t kEndpointCounterCount = sizeof kEndpointCounters / sizeof kEndpointCounters[0];

// uint64 fields of the proto that are laid out by hand on purpose: a gauge
// of the published state shown only when non-zero, a peer-discovery count
// shown on the peers line, and the health group's ejections.
const std::set<std::string> kRingByHand = {"affinity_sessions", "coordinate_changes"};
const std::set<std::string> kEndpointByHand = {"ejections"};

constexpr char kTarget[] = "dns:///counters.svc:443";
constexpr size_t kEndpoints = 3;

// Distinct values no other field of the instance has: ring counter k, and
// endpoint counter k of endpoint i.
uint64_t RingValue(size_t k) { return 100000 * (k + 1) + 4321; }
uint64_t EndpointValue(size_t k, size_t i) { return 7000 * (k + 1) + 37 * (i + 1); }

std::string Address(size_t i) { return "10.9.0." + std::to_string(i + 1) + ":443"; }

// Every endpoint is a READY member, so every table column holds a word.
int Snapshot(void *, ap_ring_state *out) {
  if (!ap_snapshot_query_matches(out->query, kTarget)) return AP_SNAPSHOT_SKIP;
  out->target = strdup(kTarget);
  out->mode = strdup("continuous");
  out->last_status = strdup("");
  out->peer_target = strdup("");
  out->coordinate_source = AP_COORDINATE_CONFIG;
  out->peer_index = 0;
  out->peer_count = 1;
  out->width = 1;
  snprintf(out->fingerprint, sizeof out->fingerprint, "%016x", 0xfeed);
  size_t k = 0;
#define AP_RING_COUNTER(name, kind, metric, help, text) out->name = RingValue(k++);
#include "policy/registry/ap_ring_counters.def"
#undef AP_RING_COUNTER
  out->endpoint_count = kEndpoints;
  size_t first = 0, count = 0;
  ap_snapshot_query_page(out->query, kEndpoints, &first, &count);
  out->first_endpoint = first;
  if (count == 0) return AP_OK;
  out->endpoints = ap_endpoint_states_alloc(count);
  if (out->endpoints == nullptr) return AP_ENOMEM;
  out->copied_endpoints = count;
  for (size_t i = first; i < first + count; i++) {
    ap_endpoint_state *e = &out->endpoints[i - first];
    e->address = strdup(Address(i).c_str());
    e->ring_index = static_cast<uint32_t>(i);
    e->endpoint_weight = 1;
    e->intersection = e->pick_weight = 1.0 / kEndpoints;
    e->in_aperture = 1;
    e->connectivity = AP_CONN_READY;
    e->utilization = e->latency_ewma_ms = -1;
    size_t c = 0;
#define AP_ENDPOINT_COUNTER(name, kind, metric, help, column, width) \
  e->name = EndpointValue(c++, i);
#include "policy/registry/ap_endpoint_counters.def"
#undef AP_ENDPOINT_COUNTER
  }
  return AP_OK;
}

std::string Runfile(const std::string &path) {
  const char *srcdir = getenv("TEST_SRCDIR");
  EXPECT_NE(srcdir, nullptr);
  return std::string(srcdir ? srcdir : ".") + "/aperture/" + path;
}

std::string ReadFile(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// aperturectl's stdout for `args`; its exit code must be 0.
std::string Ctl(const std::string &args) {
  const char *rel = getenv("APERTURECTL");
  EXPECT_NE(rel, nullptr);
  std::string cmd = Runfile(rel ? rel : "") + " " + args;
  std::string out;
  FILE *p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << cmd;
  return out;
}

// True when `what` occurs in `text` followed by one of `ends`: a value is
// found whole, never as the prefix of a longer number.
bool HasWhole(const std::string &text, const std::string &what, const char *ends) {
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) {
    const size_t after = pos + what.size();
    if (after < text.size() && strchr(ends, text[after]) != nullptr) return true;
  }
  return false;
}

std::vector<std::string> Words(const std::string &line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The line of `text` that contains `what` ("" when none).
std::string LineWith(const std::string &text, const std::string &what) {
  const size_t pos = text.find(what);
  if (pos == std::string::npos) return "";
  size_t start = text.rfind('\n', pos);
  start = start == std::string::npos ? 0 : start + 1;
  const size_t end = text.find('\n', pos);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::string Sample(const char *metric, const char *kind) {
  return std::string(metric) + (strcmp(kind, "counter") == 0 ? "_total" : "");
}

class CounterList : public ::testing::Test {
 protected:
  void SetUp() override {
    ap_error err;
    ASSERT_EQ(ap_registry_add(Snapshot, nullptr, &entry_, &err), AP_OK) << err.message;
    aperture_error aerr;
    ASSERT_EQ(aperture_status_server_start(nullptr, &server_, &aerr), APERTURE_OK) << aerr.message;
    addr_ = "127.0.0.1:" + std::to_string(aperture_status_server_port(server_));
  }
  void TearDown() override {
    aperture_status_server_stop(server_);
    ap_registry_remove(entry_);
  }
  ap_registry_entry *entry_ = nullptr;
  aperture_status_server *server_ = nullptr;
  std::string addr_;
};

// Reads the uint64 field `name` of a protobuf-c message through its
// descriptor, so the proto's own field names are what is checked.
bool ProtoU64(const ProtobufCMessage *msg, const char *name, uint64_t *out) {
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, name);
  if (f == nullptr || f->type != PROTOBUF_C_TYPE_UINT64 || f->label != PROTOBUF_C_LABEL_NONE)
    return false;
  memcpy(out, reinterpret_cast<const char *>(msg) + f->offset, sizeof *out);
  return true;
}

TEST_F(CounterList, EveryCounterReachesTheProto) {
  Aperture__V1__GetRingStateRequest req = APERTURE__V1__GET_RING_STATE_REQUEST__INIT;
  req.target_filter = const_cast<char *>("counters.svc");
  std::vector<uint8_t> bytes(aperture__v1__get_ring_state_request__get_packed_size(&req) + 1);
  const size_t len = aperture__v1__get_ring_state_request__pack(&req, bytes.data());
  ap_status_call_result r;
  ASSERT_EQ(ap_status_call(addr_.c_str(), "/aperture.v1.ApertureStatus/GetRingState", bytes.data(),
                           len, 5000, &r),
            0)
      << r.details;
  ASSERT_EQ(r.status, 0) << r.details;
  Aperture__V1__GetRingStateResponse *resp =
      aperture__v1__get_ring_state_response__unpack(nullptr, r.body_len, r.body);
  ap_status_call_result_clear(&r);
  ASSERT_NE(resp, nullptr);
  ASSERT_EQ(resp->n_rings, 1u);
  const Aperture__V1__RingState *ring = resp->rings[0];
  ASSERT_GE(kRingCounterCount, 6u);
  ASSERT_GE(kEndpointCounterCount, 3u);
  for (size_t k = 0; k < kRingCounterCount; k++) {
    uint64_t v = 0;
    EXPECT_TRUE(ProtoU64(&ring->base, kRingCounters[k].name, &v))
        << "RingState has no uint64 field " << kRingCounters[k].name;
    EXPECT_EQ(v, RingValue(k)) << kRingCounters[k].name;
  }
  ASSERT_EQ(ring->n_endpoints, kEndpoints);
  for (size_t i = 0; i < kEndpoints; i++) {
    for (size_t k = 0; k < kEndpointCounterCount; k++) {
      uint64_t v = 0;
      EXPECT_TRUE(ProtoU64(&ring->endpoints[i]->base, kEndpointCounters[k].name, &v))
          << "EndpointState has no uint64 field " << kEndpointCounters[k].name;
      EXPECT_EQ(v, EndpointValue(k, i)) << kEndpointCounters[k].name << " of endpoint " << i;
    }
  }
  aperture__v1__get_ring_state_response__free_unpacked(resp, nullptr);
}

// A uint64 field added to the proto by hand, beside the lists, fails here.
void ExpectEveryU64Listed(const ProtobufCMessageDescriptor &d, const std::set<std::string> &listed,
                          const std::set<std::string> &by_hand) {
  size_t u64 = 0;
  for (unsigned i = 0; i < d.n_fields; i++) {
    const ProtobufCFieldDescriptor &f = d.fields[i];
    if (f.type != PROTOBUF_C_TYPE_UINT64) continue;
    u64++;
    EXPECT_TRUE(listed.count(f.name) + by_hand.count(f.name) == 1)
        << d.name << "." << f.name
        << " is a uint64 outside the counter lists (docs/status.md, Adding a counter)";
  }
  EXPECT_EQ(u64, listed.size() + by_hand.size()) << d.name;
}

TEST_F(CounterList, EveryUint64FieldOfTheProtoIsListed) {
  std::set<std::string> ring, endpoint;
  for (const RingCounter &c : kRingCounters) ring.insert(c.name);
  for (const EndpointCounter &c : kEndpointCounters) endpoint.insert(c.name);
  ExpectEveryU64Listed(aperture__v1__ring_state__descriptor, ring, kRingByHand);
  ExpectEveryU64Listed(aperture__v1__endpoint_state__descriptor, endpoint, kEndpointByHand);
}

TEST_F(CounterList, EveryCounterReachesAperturectlJson) {
  const std::string json = Ctl("status " + addr_ + " --json");
  ASSERT_TRUE(HasWhole(json, std::string("\"target\":\"") + kTarget + "\"", ",")) << json;
  for (size_t k = 0; k < kRingCounterCount; k++) {
    EXPECT_TRUE(HasWhole(json,
                         "\"" + std::string(kRingCounters[k].name) + "\":" +
                             std::to_string(RingValue(k)),
                         ",}"))
        << kRingCounters[k].name << "\n" << json;
  }
  for (size_t i = 0; i < kEndpoints; i++) {
    // The endpoint's own object: from its address to the object's end.
    const size_t start = json.find("{\"address\":\"" + Address(i) + "\"");
    ASSERT_NE(start, std::string::npos) << json;
    const std::string object = json.substr(start, json.find('}', start) - start + 1);
    for (size_t k = 0; k < kEndpointCounterCount; k++) {
      EXPECT_TRUE(HasWhole(object,
                           "\"" + std::string(kEndpointCounters[k].name) + "\":" +
                               std::to_string(EndpointValue(k, i)),
                           ",}"))
          << kEndpointCounters[k].name << "\n" << object;
    }
  }
}

TEST_F(CounterList, EveryCounterReachesAperturectlTable) {
  const std::string table = Ctl("status " + addr_);
  ASSERT_NE(table.find(std::string("channel ") + kTarget + "\n"), std::string::npos) << table;
  for (size_t k = 0; k < kRingCounterCount; k++) {
    EXPECT_TRUE(HasWhole(table, std::string(kRingCounters[k].text) + " " + std::to_string(RingValue(k)),
                         " \n"))
        << kRingCounters[k].name << "\n" << table;
  }
  // Each endpoint counter's value stands in its own column: the word under
  // its header (every column of these rows holds one word).
  const std::vector<std::string> header = Words(LineWith(table, "INDEX "));
  ASSERT_FALSE(header.empty()) << table;
  for (size_t i = 0; i < kEndpoints; i++) {
    const std::vector<std::string> row = Words(LineWith(table, " " + Address(i) + " "));
    ASSERT_EQ(row.size(), header.size()) << Address(i) << "\n" << table;
    for (size_t k = 0; k < kEndpointCounterCount; k++) {
      size_t column = 0;
      while (column < header.size() && header[column] != kEndpointCounters[k].column) column++;
      ASSERT_LT(column, header.size()) << "no column " << kEndpointCounters[k].column << "\n" << table;
      EXPECT_EQ(row[column], std::to_string(EndpointValue(k, i)))
          << kEndpointCounters[k].name << " of endpoint " << i << "\n" << table;
    }
  }
}

TEST_F(CounterList, EveryCounterReachesTheMetrics) {
  const std::string text = Ctl("metrics " + addr_);
  ASSERT_TRUE(HasWhole(text, "# EOF", "\n")) << text;
  const std::string ring_labels = std::string("{target=\"") + kTarget + "\"}";
  for (size_t k = 0; k < kRingCounterCount; k++) {
    const RingCounter &c = kRingCounters[k];
    EXPECT_TRUE(HasWhole(text, std::string("# HELP ") + c.metric + " " + c.help, "\n")) << c.name;
    EXPECT_TRUE(HasWhole(text, std::string("# TYPE ") + c.metric + " " + c.kind, "\n")) << c.name;
    EXPECT_TRUE(HasWhole(text, Sample(c.metric, c.kind) + ring_labels + " " + std::to_string(RingValue(k)),
                         "\n"))
        << c.name << "\n" << text;
  }
  for (size_t k = 0; k < kEndpointCounterCount; k++) {
    const EndpointCounter &c = kEndpointCounters[k];
    EXPECT_TRUE(HasWhole(text, std::string("# HELP ") + c.metric + " " + c.help, "\n")) << c.name;
    EXPECT_TRUE(HasWhole(text, std::string("# TYPE ") + c.metric + " " + c.kind, "\n")) << c.name;
    for (size_t i = 0; i < kEndpoints; i++) {
      const std::string labels =
          std::string("{target=\"") + kTarget + "\",address=\"" + Address(i) + "\"}";
      EXPECT_TRUE(HasWhole(text, Sample(c.metric, c.kind) + labels + " " +
                                     std::to_string(EndpointValue(k, i)),
                           "\n"))
          << c.name << " of endpoint " << i << "\n" << text;
    }
  }
}

// docs/metrics.md names each family as it is sampled (alone or with its
// labels), in a table row of its type.
void ExpectDocumented(const std::string &doc, const char *metric, const char *kind) {
  const std::string name = "`" + Sample(metric, kind);
  ASSERT_TRUE(HasWhole(doc, name, "`{")) << metric << " is not in docs/metrics.md";
  const std::string line = LineWith(doc, name);
  EXPECT_NE(line.find(std::string("| ") + kind + " |"), std::string::npos)
      << metric << " is not a " << kind << " in docs/metrics.md: " << line;
}

TEST(CounterListDocs, EveryMetricIsInDocsMetrics) {
  const std::string doc = ReadFile(Runfile("docs/metrics.md"));
  ASSERT_NE(doc.find("| metric | type | meaning |"), std::string::npos) << "docs/metrics.md unread";
  for (const RingCounter &c : kRingCounters) ExpectDocumented(doc, c.metric, c.kind);
  for (const EndpointCounter &c : kEndpointCounters) ExpectDocumented(doc, c.metric, c.kind);
}

}  // namespace
