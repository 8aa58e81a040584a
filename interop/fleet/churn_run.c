/* The measurement shared by churn-grid and xds (see churn_run.h).
 *
 * The runner reads each aperture client's ring from its status server
 * (GetRingState) to know when all of them have the new list and their
 * members are READY, and when the servers' connection counts equal what
 * the clients hold. round_robin has no status server: every client holds
 * every server in the answer. */
#define _GNU_SOURCE
#include "interop/fleet/churn_run.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "aperture/v1/status.pb-c.h"
#include "interop/common/unary_call.h"
#include "interop/fleet/churn_model.h"
#include "interop/fleet/fleet_client.h"
#include "interop/fleet/fleet_clock.h"
#include "interop/fleet/fleet_net.h"

#define MAX_N CHURN_RUN_MAX_SERVERS
#define MAX_C CHURN_RUN_MAX_CLIENTS
#define REMOVED CHURN_RUN_REMOVED
#define SETTLE_TIMEOUT_MS 20000 /* generous: a slow machine settles in ~1 s */
#define POLL_MS 100
#define TRAFFIC_MS 500 /* calls flow this long on a settled fleet before each change */

int io_churn_run_start_servers(churn_run_fleet *f, const char *server_bin, const char *out_dir,
                               const char *scenario, char *err, size_t err_len) {
  if (f == NULL || server_bin == NULL || out_dir == NULL || scenario == NULL || err == NULL) {
    return -1;
  }
  if (f->pt.servers < 1 || f->pt.servers > MAX_N) {
    snprintf(err, err_len, "servers: %d is not in [1, %d]", f->pt.servers, MAX_N);
    return -1;
  }
  f->server_bin = server_bin;
  snprintf(f->dir, sizeof(f->dir), "%s/%s-%d-%d-%d", out_dir, scenario, f->pt.servers,
           f->pt.clients, f->pt.min_aperture);
  mkdir(f->dir, 0755);
  f->port = 0;
  for (int i = 0; i < f->pt.servers; i++) {
    char name[16];
    snprintf(name, sizeof(name), "s%d", i);
    io_fleet_net_server_host(i, 1, f->servers[i].host, sizeof(f->servers[i].host));
    if (io_fleet_server_start(server_bin, f->dir, name, f->port, "", NULL, &f->servers[i]) != 0) {
      snprintf(err, err_len, "server %s did not start (see %.100s)", name, f->dir);
      return -1;
    }
    f->port = f->servers[i].port; /* all share the first one's port */
    snprintf(f->addr[i], sizeof(f->addr[i]), "%s:%d", f->servers[i].host, f->port);
  }
  return 0;
}

void io_churn_run_stop_servers(churn_run_fleet *f) {
  if (f == NULL) return;
  for (int i = 0; i < f->pt.servers && i < MAX_N; i++) {
    if (f->servers[i].p) io_proc_stop(f->servers[i].p, 10000);
    f->servers[i].p = NULL;
  }
}

size_t io_churn_run_addresses(const churn_run_fleet *f, int with_removed, const char **out) {
  if (f == NULL || out == NULL) return 0;
  size_t m = 0;
  for (int i = 0; i < f->pt.servers && i < MAX_N; i++) {
    if (i != REMOVED || with_removed) out[m++] = f->addr[i];
  }
  return m;
}

int io_churn_run_parse_aperture_modes(const char *list, const char *scenario,
                                      churn_run_mode *out, int max, char *err, size_t err_len) {
  if (list == NULL || scenario == NULL || out == NULL || err == NULL) return -1;
  int n = 0;
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    if (len == 0 || len >= sizeof(out[0].name)) {
      snprintf(err, err_len, "--modes: bad item '%.*s'", (int)len, p);
      return -1;
    }
    if (n == max) {
      snprintf(err, err_len, "--modes: at most %d modes for %s", max, scenario);
      return -1;
    }
    memcpy(out[n].name, p, len);
    out[n].name[len] = '\0';
    out[n].aperture = 1;
    if (ap_mode_parse(out[n].name, &out[n].model, NULL) != AP_OK) {
      snprintf(err, err_len, "--modes: '%s' is not an aperture mode (%s runs the aperture policy)",
               out[n].name, scenario);
      return -1;
    }
    n++;
    p += len + (p[len] == ',');
  }
  if (n == 0) snprintf(err, err_len, "--modes: no mode given");
  return n > 0 ? n : -1;
}

/* --- settling --- */

/* Adds to held[] the members of one aperture client's ring; 1 when it has
 * exactly the answer's addresses, no widened member, and every member
 * READY. */
static int client_ring(const churn_run_fleet *f, grpc_channel *ch, const uint8_t *in_answer,
                       long *held) {
  unary_result r;
  const Aperture__V1__RingState *ring = io_fleet_client_ring_state(ch, &r);
  int ok = ring != NULL;
  uint32_t expected = 0;
  for (int i = 0; i < f->pt.servers; i++) expected += in_answer[i] != 0;
  ok = ok && !ring->truncated && ring->endpoint_count == expected && ring->widened == 0 &&
       ring->n_endpoints == expected;
  for (size_t e = 0; ok && e < ring->n_endpoints; e++) {
    const Aperture__V1__EndpointState *ep = ring->endpoints[e];
    int idx = -1;
    for (int i = 0; i < f->pt.servers; i++) {
      if (strcmp(f->addr[i], ep->address) == 0) idx = i;
    }
    if (idx < 0 || !in_answer[idx]) ok = 0;
    else if (ep->in_aperture) {
      if (ep->connectivity != APERTURE__V1__CONNECTIVITY_STATE__CONNECTIVITY_STATE_READY) ok = 0;
      held[idx]++;
    }
  }
  io_unary_result_free(&r);
  return ok;
}

typedef struct settle_check {
  const churn_run_fleet *f;
  const churn_run_mode *m;
  const churn_run_clients *mc;
  const uint8_t *in_answer;
} settle_check;

/* 1 when every client has the current answer with its members READY and
 * each server's open connections equal the number of clients holding it
 * (0 for a server out of the answer). */
static int settled_now(void *ctx) {
  const settle_check *sc = ctx;
  long held[MAX_N];
  memset(held, 0, sizeof(held));
  int ok = 1;
  for (int c = 0; c < sc->mc->n; c++) {
    if (sc->m->aperture) {
      ok = client_ring(sc->f, sc->mc->status[c], sc->in_answer, held) && ok;
    } else {
      for (int i = 0; i < sc->f->pt.servers; i++) held[i] += sc->in_answer[i] != 0;
    }
  }
  return ok && io_fleet_servers_hold(sc->f->servers, sc->f->pt.servers, held);
}

int io_churn_run_settle_on(const churn_run_fleet *f, const churn_run_mode *m,
                           const churn_run_clients *mc, const uint8_t *in_answer) {
  if (f == NULL || m == NULL || mc == NULL || in_answer == NULL || f->pt.servers > MAX_N) return 0;
  settle_check sc = {f, m, mc, in_answer};
  return io_fleet_wait_steady(settled_now, &sc, 2, SETTLE_TIMEOUT_MS, POLL_MS) == 1;
}

/* Settles on every server, or every server but s1. */
static int settle(const churn_run_fleet *f, const churn_run_mode *m, const churn_run_clients *mc,
                  int with_removed) {
  uint8_t in_answer[MAX_N];
  for (int i = 0; i < MAX_N; i++) in_answer[i] = i != REMOVED || with_removed;
  return io_churn_run_settle_on(f, m, mc, in_answer);
}

/* --- the clients --- */

int io_churn_run_start_clients(const churn_answer *a, churn_run_fleet *f,
                               const churn_run_mode *m, churn_run_clients *mc, char *err,
                               size_t err_len) {
  if (a == NULL || a->start_clients == NULL || f == NULL || m == NULL || mc == NULL ||
      err == NULL) {
    return -1;
  }
  if (a->start_clients(a->ctx, f, m, mc, err, err_len) != 0) return -1;
  for (int c = 0; m->aperture && c < mc->n; c++) {
    const char *why = "";
    mc->status[c] = io_fleet_client_status_channel(mc->p[c], &why);
    if (mc->status[c] == NULL) {
      snprintf(err, err_len, "client %d %s (see %.100s)", c, why, f->dir);
      return -1;
    }
  }
  return 0;
}

int io_churn_run_stop_clients(churn_run_clients *mc, long *ok, long *failed, char *err,
                              size_t err_len) {
  if (mc == NULL || ok == NULL || failed == NULL || err == NULL) return -1;
  for (int c = 0; c < mc->n; c++) {
    if (mc->status[c]) grpc_channel_destroy(mc->status[c]);
    mc->status[c] = NULL;
  }
  for (int c = 0; c < mc->n; c++) {
    if (mc->p[c]) io_proc_stop(mc->p[c], 10000);
    mc->p[c] = NULL;
  }
  int rc = 0;
  for (int c = 0; c < mc->n; c++) {
    if (io_fleet_client_read_summary(mc->summary[c], ok, failed) != 0) {
      if (rc == 0) snprintf(err, err_len, "client %d wrote no summary", c);
      rc = -1;
    }
  }
  return rc;
}

/* Stops the clients and adds their calls to the row. */
static void stop_clients(churn_run_clients *mc, fleet_churn_row *row) {
  char err[64] = "";
  if (io_churn_run_stop_clients(mc, &row->ok, &row->failed, err, sizeof(err)) != 0) {
    if (row->error[0] == '\0') snprintf(row->error, sizeof(row->error), "%s", err);
    row->complete = 0;
  }
}

/* Marks the row failed (keeping an earlier error) and stops the clients. */
static void fail_row(fleet_churn_row *row, churn_run_clients *mc, const char *why, const char *dir) {
  if (row->error[0] == '\0') snprintf(row->error, sizeof(row->error), "%s (see %.100s)", why, dir);
  row->complete = 0;
  stop_clients(mc, row);
}

/* --- the figures --- */

typedef churn_run_counts counts;

void io_churn_run_snapshot(const churn_run_fleet *f, churn_run_counts *out) {
  if (f == NULL || out == NULL) return;
  memset(out, 0, sizeof(*out));
  for (int i = 0; i < f->pt.servers && i < MAX_N; i++) {
    io_fleet_server_counts(f->servers[i].stats, &out->opened[i], &out->current[i]);
  }
}

static void snapshot(const churn_run_fleet *f, counts *out) { io_churn_run_snapshot(f, out); }

/* Connections opened + closed on server i between two snapshots. */
static long moved(const counts *a, const counts *b, int i) {
  return io_fleet_server_moved(a->opened[i], a->current[i], b->opened[i], b->current[i]);
}

long io_churn_run_stopped_moved(const churn_run_counts *a, const churn_run_counts *b, int i) {
  if (a == NULL || b == NULL || i < 0 || i >= MAX_N) return 0;
  long opened = b->opened[i] - a->opened[i];
  return opened + a->current[i] + opened; /* every one closed */
}

static long total_current(const churn_run_fleet *f, const counts *c) {
  long sum = 0;
  for (int i = 0; i < f->pt.servers; i++) sum += c->current[i];
  return sum;
}

static int predict(const churn_run_fleet *f, const churn_answer *a, const churn_run_mode *m,
                   fleet_churn_row *row) {
  uint64_t seeds[MAX_C];
  for (int c = 0; c < f->pt.clients; c++) seeds[c] = a->seed(c);
  churn_model_fleet fleet = {m->model, (uint32_t)f->pt.clients, (uint32_t)f->pt.min_aperture,
                             seeds};
  const char *all[MAX_N], *rest[MAX_N];
  size_t n_all = io_churn_run_addresses(f, 1, all), n_rest = io_churn_run_addresses(f, 0, rest);
  churn_model_change rem, add;
  ap_error err;
  if (io_churn_model_diff(&fleet, all, n_all, rest, n_rest, &rem, &err) != AP_OK ||
      io_churn_model_diff(&fleet, rest, n_rest, all, n_all, &add, &err) != AP_OK) {
    snprintf(row->error, sizeof(row->error), "model: %.140s", err.message);
    return -1;
  }
  row->removal.predicted_before = rem.sessions_before;
  row->removal.predicted_changed = rem.changed;
  row->removal.predicted_optimum = rem.optimum;
  row->addition.predicted_before = add.sessions_before;
  row->addition.predicted_changed = add.changed;
  row->addition.predicted_optimum = add.optimum;
  return 0;
}

static void label_row(fleet_churn_row *row, const fleet_churn_point *pt, const char *mode) {
  memset(row, 0, sizeof(*row));
  row->servers = pt->servers;
  row->clients = pt->clients;
  row->min_aperture = pt->min_aperture;
  snprintf(row->mode, sizeof(row->mode), "%.31s", mode);
}

/* --- one mode at one point --- */

static void run_mode(churn_run_fleet *f, const churn_answer *a, const churn_run_mode *m,
                     fleet_churn_row *row) {
  label_row(row, &f->pt, m->name);
  if (predict(f, a, m, row) != 0) return;
  if (a->prepare(a->ctx, f, m, row->error, sizeof(row->error)) != 0) return;
  row->complete = 1;
  churn_run_clients mc;
  memset(&mc, 0, sizeof(mc));
  fleet_server *s1 = &f->servers[REMOVED];
  counts c0, c1, c2;
  char why[200] = "";
  f->restarts++; /* names this mode's files apart */
  if (io_churn_run_start_clients(a, f, m, &mc, row->error, sizeof(row->error)) != 0) {
    fail_row(row, &mc, "the clients did not start", f->dir);
    return;
  }
  if (!settle(f, m, &mc, 1)) {
    if (a->explain_unsettled != NULL) a->explain_unsettled(a->ctx, row->error, sizeof(row->error));
    fail_row(row, &mc, "the clients did not settle before the change", f->dir);
    return;
  }

  io_fleet_sleep_ms(TRAFFIC_MS);
  /* Removal: s1 leaves the answer first; aperture clients drop it, then it
   * stops holding no connection. round_robin: stopping it is what makes
   * its clients re-resolve. */
  snapshot(f, &c0);
  row->removal.sessions_before = total_current(f, &c0);
  row->removal.optimum = c0.current[REMOVED];
  if (a->set(a->ctx, f, 0, why, sizeof(why)) != 0) {
    fail_row(row, &mc, why, f->dir);
    return;
  }
  int settled = 1;
  if (m->aperture) settled = settle(f, m, &mc, 0);
  io_proc_stop(s1->p, 10000);
  s1->p = NULL;
  if (!m->aperture || (!settled && a->settle_again_after_stop)) {
    settled = settle(f, m, &mc, 0) && settled;
  }
  snapshot(f, &c1); /* s1's figures are from its last write, at exit */
  row->removal.measured = 1;
  row->removal.settled = settled;
  for (int i = 0; i < f->pt.servers; i++) {
    if (i == REMOVED) {
      row->removal.changed += io_churn_run_stopped_moved(&c0, &c1, i);
    } else {
      row->removal.changed += moved(&c0, &c1, i);
    }
  }
  if (!m->aperture) {
    snprintf(row->note, sizeof(row->note),
             "s1 stopped right after it left the answer (round_robin re-resolves only when a "
             "connection closes); addition not measured: nothing makes round_robin re-resolve");
  }

  io_fleet_sleep_ms(TRAFFIC_MS);
  /* Addition: s1 starts again at its address, then rejoins the answer. */
  snapshot(f, &c1);
  c1.opened[REMOVED] = 0;
  c1.current[REMOVED] = 0;
  row->addition.sessions_before = total_current(f, &c1);
  char suffix[32];
  snprintf(suffix, sizeof(suffix), ".%d", f->restarts);
  if (io_fleet_server_start(f->server_bin, f->dir, "s1", f->port, suffix, NULL, s1) != 0) {
    snprintf(why, sizeof(why), "s1 did not restart on port %d", f->port);
    fail_row(row, &mc, why, f->dir);
    return;
  }
  if (a->set(a->ctx, f, 1, why, sizeof(why)) != 0) {
    fail_row(row, &mc, why, f->dir);
    return;
  }
  if (m->aperture) {
    row->addition.settled = settle(f, m, &mc, 1);
    snapshot(f, &c2);
    row->addition.measured = 1;
    for (int i = 0; i < f->pt.servers; i++) row->addition.changed += moved(&c1, &c2, i);
    row->addition.optimum = c2.current[REMOVED];
  }
  io_fleet_sleep_ms(TRAFFIC_MS);
  stop_clients(&mc, row);

  /* Every connection closed before the next mode starts. */
  if (io_churn_run_drain(f) != 0) {
    snprintf(row->error, sizeof(row->error), "connections stayed open after the clients stopped");
    row->complete = 0;
  }
}

int io_churn_run_drain(const churn_run_fleet *f) {
  if (f == NULL) return -1;
  double deadline = io_fleet_now_ms() + SETTLE_TIMEOUT_MS;
  for (;;) {
    counts c;
    snapshot(f, &c);
    if (total_current(f, &c) == 0) return 0;
    if (io_fleet_now_ms() > deadline) return -1;
    io_fleet_sleep_ms(POLL_MS);
  }
}

int io_churn_run_point(churn_run_fleet *f, const churn_answer *a, const char *scenario,
                       const churn_run_mode *modes, int n_modes, const char *start_err,
                       fleet_churn_row *rows, int max_rows, int *n_rows) {
  if (f == NULL || a == NULL || a->prepare == NULL || a->set == NULL ||
      a->start_clients == NULL || a->seed == NULL || scenario == NULL ||
      (modes == NULL && n_modes > 0) || rows == NULL || n_rows == NULL) {
    return -1;
  }
  if (f->pt.clients > MAX_C) return -1;
  char err[200] = "";
  if (start_err != NULL) snprintf(err, sizeof(err), "%s", start_err);
  int started = start_err == NULL;
  int failures = 0;
  for (int k = 0; k < n_modes && *n_rows < max_rows; k++) {
    fleet_churn_row *row = &rows[(*n_rows)++];
    fprintf(stderr, "fleet: %s %d:%d:%d / %s ...\n", scenario, f->pt.servers, f->pt.clients,
            f->pt.min_aperture, modes[k].name);
    if (!started) {
      label_row(row, &f->pt, modes[k].name);
      snprintf(row->error, sizeof(row->error), "%.159s", err);
    } else {
      run_mode(f, a, &modes[k], row);
    }
    if (started && f->servers[REMOVED].p == NULL) { /* a failed run left s1 stopped */
      char suffix[32];
      snprintf(suffix, sizeof(suffix), ".r%d", ++f->restarts);
      started = io_fleet_server_start(f->server_bin, f->dir, "s1", f->port, suffix, NULL,
                                      &f->servers[REMOVED]) == 0;
      if (!started) snprintf(err, sizeof(err), "s1 did not restart");
    }
    if (!row->complete) {
      fprintf(stderr, "fleet: %s %d:%d:%d / %s failed: %s\n", scenario, f->pt.servers,
              f->pt.clients, f->pt.min_aperture, modes[k].name, row->error);
      failures++;
    }
  }
  return failures;
}
