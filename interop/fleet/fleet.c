/* Fleet runner: starts N interop servers and S client services of M
 * clients as separate processes (fleet_net.h: on loopback today), runs a
 * scenario once per LB mode, collects the servers' stats files and the
 * clients' summaries, and prints a report (table, or JSON with --json)
 * plus an SVG chart.
 *
 *   fleet [--scenario balance|multi-service|slow-backend|kill|churn|restart|remove|throughput|churn-grid|peers|xds|deploy|affinity|soak|unequal|skew|gray|tail|all]
 *         [--modes m1,m2,...] [--servers N] [--clients M] [--rate QPS]
 *         [--duration-s S] [--concurrency K] [--min-aperture A] [--grace-ms G] [--json]
 *         [--points N:C:A,...] [--affinity sticky,hash] [--svg PATH] [--out-dir DIR]
 *         [--network loopback|netns]
 *         [--faults f1,f2,...] [--calls N] [--fault-s S] [--client-rates R1,R2,...]
 *         [--tail-share F] [--tail-ms N] [--deadline-ms N] [--tail-seed S]
 *
 * --network (fleet_net.h): loopback (default), every process in the
 * runner's namespace; netns (fleet_netns.h, root only), every server and
 * client a network namespace of its own on a bridge, torn down at exit.
 * Either way the DNS scenarios' server is dnsmasq (fleet_dnsmasq.h), and
 * the JSON report starts with the network, the DNS server and its query
 * count, and the hosts (name and address of every server and client).
 * This file holds the scenario table (kScenarios, one row per scenario:
 * fleet_scenario.h) and the shared run loop; the flags are read in
 * fleet_flags.c; each scenario lives in its own file. The timeline scenarios (balance, multi-service,
 * slow-backend, kill, churn, restart, remove, throughput: fleet_<name>.h)
 * run one fleet per mode through fleet_timeline.h and share one report
 * with churn-grid (fleet_churn_grid.h), which measures one removal and one
 * addition per (N, C, A) point of --points and mode beside the core's
 * prediction; `all` runs these in turn. With no --scenario: the default
 * run (kDefaultRun): balance and multi-service for smooth, continuous
 * (random too in multi-service) and round_robin, at enough calls per
 * server that sampling noise is ~2%, with a closing summary; without the
 * aperture policy linked, round_robin only.
 * The others have reports of their own and need the aperture policy: xds
 * (fleet_xds.h) is churn-grid with the endpoints from EDS; deploy
 * (fleet_deploy.h) replaces every server in turn by one at a new address
 * (--servers, --clients, --min-aperture, --rate); affinity
 * (fleet_affinity.h) reports which servers served each key; peers
 * (fleet_peers.h) lets clients find each other; soak (fleet_soak.h) is a
 * bounded run with kills, flaps, a status loop and a sticky-key flood;
 * --duration-s sets its length (default 300 s) and --rss-bound-kib its
 * memory bound; it is not part of `all`. unequal (fleet_unequal.h) runs
 * ten servers of unequal capacity (CPU work per call, ORCA trailers) for
 * round_robin and each aperture pickMetric, with the fleet report's
 * runs[] rows plus pick_metric and the servers' utilization; not in `all`.
 * skew (fleet_skew.h) runs clients at unequal rates (--client-rates) on
 * eight servers that report their rate (ORCA), for round_robin and each
 * aperture pickMetric, orca also with the mechanism that evens the load
 * turned off; not in `all`.
 * gray (fleet_gray.h) makes one of
 * four servers fail without closing its connections (--faults: freeze,
 * link-down, partition, no-answer, slow) for --fault-s and measures, per
 * fault and mode, failures, latency and how soon the server loses and
 * regains its traffic (--calls per run); it is not part of `all`.
 * tail (fleet_tail.h) runs healthy servers with a seeded latency tail and
 * deadlines inside it, and measures per mode what the gray-failure
 * defenses cost there: ejections, load per server and in the busiest
 * second, failed calls beside round_robin's; it is not part of `all`.
 * The JSON report is also written to <out-dir>/report.json.
 * Every child runs in its own process group and dies with the runner;
 * SIGINT/SIGTERM and every exit path stop them all.
 * Exit status: 0 when every run completed, 1 when one failed, 2 on a usage
 * error (a bad flag or value, an unknown scenario or mode, --network netns
 * where it cannot be had: not root, no ip command or namespaces), found
 * before any process starts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "interop/common/flags.h"
#include "interop/common/proc.h"
#include "interop/fleet/fleet_affinity.h"
#include "interop/fleet/fleet_balance.h"
#include "interop/fleet/fleet_chart_svg.h"
#include "interop/fleet/fleet_churn.h"
#include "interop/fleet/fleet_churn_grid.h"
#include "interop/fleet/fleet_deploy.h"
#include "interop/fleet/fleet_dnsmasq.h"
#include "interop/fleet/fleet_flags.h"
#include "interop/fleet/fleet_gray.h"
#include "interop/fleet/fleet_tail.h"
#include "interop/fleet/fleet_kill.h"
#include "interop/fleet/fleet_modes.h"
#include "interop/fleet/fleet_multi_service.h"
#include "interop/fleet/fleet_net.h"
#include "interop/fleet/fleet_netns.h"
#include "interop/fleet/fleet_peers.h"
#include "interop/fleet/fleet_remove.h"
#include "interop/fleet/fleet_report.h"
#include "interop/fleet/fleet_restart.h"
#include "interop/fleet/fleet_scenario.h"
#include "interop/fleet/fleet_skew.h"
#include "interop/fleet/fleet_slow_backend.h"
#include "interop/fleet/fleet_soak.h"
#include "interop/fleet/fleet_summary.h"
#include "interop/fleet/fleet_throughput.h"
#include "interop/fleet/fleet_timeline.h"
#include "interop/fleet/fleet_unequal.h"
#include "interop/fleet/fleet_xds.h"

#define MAX_RUNS 64
#define MAX_CHURN_ROWS (FLEET_CHURN_MAX_POINTS * 16)

typedef struct runner {
  char server_bin[4096];
  char client_bin[4096];
  char out_dir[4096];
  fleet_cli cli; /* the flags; cli.a is what the scenarios read */
} runner;

static void on_signal(int sig) {
  io_proc_kill_all();
  io_fleet_net_close(); /* async-signal-safe */
  signal(sig, SIG_DFL);
  raise(sig);
}

/* --- the shared run loop --- */

/* A timeline scenario (fleet_timeline.h) for each requested, available
 * mode, appended to out->runs. */
static int run_timeline(const void *def, const fleet_args *a, fleet_output *out) {
  const fleet_timeline *sc = def;
  const char *list = a->modes ? a->modes : sc->default_modes;
  int failures = 0, more;
  const fleet_mode *m;
  while ((more = io_fleet_modes_next(&list, a->have_aperture, a->modes != NULL, &m)) > 0) {
    if (out->n_runs >= out->max_runs) break;
    fleet_run *r = &out->runs[out->n_runs++];
    fprintf(stderr, "fleet: %s / %s ...\n", sc->name, m->name);
    if (io_fleet_timeline_run_mode(sc, a, m, r) != 0) {
      fprintf(stderr, "fleet: %s / %s failed: %s\n", sc->name, m->name, r->error);
      failures++;
    }
  }
  return more < 0 || failures ? -1 : 0;
}

/* The fleet report of the timeline scenarios and churn-grid (fleet_report.h),
 * alone or gathered by `all` and the default run. */
static void report_json(FILE *f, const fleet_output *out) {
  io_fleet_report_json(f, out->runs, out->n_runs, out->churn, out->n_churn);
}

static void report_table(FILE *f, const fleet_output *out) {
  if (out->n_runs > 0) io_fleet_report_table(f, out->runs, out->n_runs);
  static fleet_summary summary;
  if (io_fleet_summary_of(out->runs, out->n_runs, &summary) == 0 && summary.text[0] != '\0') {
    fprintf(f, "\nsummary:\n%s", summary.text);
  }
  io_fleet_report_churn_table(f, out->churn, out->n_churn);
}

static int run_all(const void *def, const fleet_args *a, fleet_output *out);

/* --- the scenarios --- */

static const fleet_scenario kScenarios[] = {
    /* name, run, def, check, json, table, needs_aperture, in_all */
    {"balance", run_timeline, &io_fleet_balance_timeline, NULL, report_json, report_table, 0, 1},
    {"multi-service", run_timeline, &io_fleet_multi_service_timeline, NULL, report_json,
     report_table, 0, 1},
    {"slow-backend", run_timeline, &io_fleet_slow_backend_timeline, NULL, report_json,
     report_table, 0, 1},
    {"kill", run_timeline, &io_fleet_kill_timeline, NULL, report_json, report_table, 0, 1},
    {"churn", run_timeline, &io_fleet_churn_timeline, NULL, report_json, report_table, 0, 1},
    {"restart", run_timeline, &io_fleet_restart_timeline, NULL, report_json, report_table, 0, 1},
    {"remove", run_timeline, &io_fleet_remove_timeline, NULL, report_json, report_table, 0, 1},
    {"throughput", run_timeline, &io_fleet_throughput_timeline, NULL, report_json, report_table,
     0, 1},
    {"churn-grid", io_fleet_churn_grid_scenario, NULL, NULL, report_json, report_table, 0, 1},
    {"peers", io_fleet_peers_scenario, NULL, NULL, io_fleet_peers_write_json,
     io_fleet_peers_write_table, 1, 0},
    {"xds", io_fleet_xds_scenario, NULL, io_fleet_xds_check, io_fleet_xds_write_json,
     io_fleet_xds_write_table, 1, 0},
    {"deploy", io_fleet_deploy_scenario, NULL, io_fleet_deploy_check, io_fleet_deploy_write_json,
     io_fleet_deploy_write_table, 1, 0},
    {"affinity", io_fleet_affinity_scenario, NULL, io_fleet_affinity_check,
     io_fleet_affinity_write_json, io_fleet_affinity_write_table, 1, 0},
    {"soak", io_fleet_soak_scenario, NULL, NULL, io_fleet_soak_write_json,
     io_fleet_soak_write_table, 1, 0},
    {"unequal", io_fleet_unequal_scenario, NULL, io_fleet_unequal_check, report_json,
     io_fleet_unequal_write_table, 0, 0},
    {"skew", io_fleet_skew_scenario, NULL, io_fleet_skew_check, report_json,
     io_fleet_skew_write_table, 0, 0},
    {"gray", io_fleet_gray_scenario, NULL, io_fleet_gray_check, io_fleet_gray_write_json,
     io_fleet_gray_write_table, 1, 0},
    {"tail", io_fleet_tail_scenario, NULL, io_fleet_tail_check, io_fleet_tail_write_json,
     io_fleet_tail_write_table, 1, 0},
    {"all", run_all, NULL, NULL, report_json, report_table, 0, 0},
};
#define N_SCENARIOS ((int)(sizeof(kScenarios) / sizeof(kScenarios[0])))

static const fleet_scenario *find_scenario(const char *name) {
  for (int s = 0; s < N_SCENARIOS; s++) {
    if (strcmp(kScenarios[s].name, name) == 0) return &kScenarios[s];
  }
  return NULL;
}

/* `all`: every scenario with in_all, in the table's order. */
static int run_all(const void *def, const fleet_args *a, fleet_output *out) {
  (void)def;
  int failed = 0;
  for (int s = 0; s < N_SCENARIOS; s++) {
    const fleet_scenario *sc = &kScenarios[s];
    if (sc->in_all && sc->run(sc->def, a, out) != 0) failed = 1;
  }
  return failed ? -1 : 0;
}

/* The run with no --scenario: what aperture is for, beside round_robin.
 * One service (connections: a fraction of round_robin's, load as even),
 * then three services sharing the servers (where subsetting modes differ
 * most; random subsetting for contrast). Enough calls per server that a
 * fair random balancer's busiest server is ~2% above the mean, paced below
 * what a 2-core machine serves so that the balancers, not the CPU, decide;
 * about a minute in all. Flags override these as for any scenario. */
typedef struct default_step {
  const char *scenario;
  const char *modes;
  double rate;       /* calls/s per client */
  double duration_s; /* per mode */
  long concurrency;  /* per client */
} default_step;

static const default_step kDefaultRun[] = {
    {"balance", "smooth,continuous,round_robin", 1500, 5, 8},
    {"multi-service", "smooth,continuous,random,round_robin", 600, 5, 8},
};
#define N_DEFAULT_STEPS ((int)(sizeof(kDefaultRun) / sizeof(kDefaultRun[0])))

/* Each step's scenario with its modes, rate, duration and concurrency,
 * where the flags did not set them. */
static int run_default(const void *def, const fleet_args *a, fleet_output *out) {
  (void)def;
  int failed = 0;
  for (int d = 0; d < N_DEFAULT_STEPS; d++) {
    const default_step *step = &kDefaultRun[d];
    const fleet_scenario *sc = find_scenario(step->scenario);
    fleet_args s = *a;
    if (s.modes == NULL) s.modes = step->modes;
    if (s.rate <= 0) s.rate = step->rate;
    if (s.duration_s <= 0) s.duration_s = step->duration_s;
    if (s.concurrency <= 0) s.concurrency = step->concurrency;
    if (sc == NULL || sc->run(sc->def, &s, out) != 0) failed = 1;
  }
  return failed ? -1 : 0;
}

static const fleet_scenario kDefault = {"", run_default, NULL, NULL, report_json, report_table,
                                        0, 0};

/* --- the report and the exit status --- */

/* The report's header: network, DNS server and queries, hosts. */
static void write_header(FILE *f) {
  long queries = 0;
  const char *dns = io_fleet_dns_used(&queries);
  fprintf(f, "\"network\":\"%s\",\"dns\":\"%s\",\"dns_queries\":%ld,\"hosts\":[",
          io_fleet_net_name(), dns ? dns : "none", queries);
  static fleet_net_host hosts[1300];
  size_t n = io_fleet_net_hosts(hosts, sizeof(hosts) / sizeof(hosts[0]));
  if (n > sizeof(hosts) / sizeof(hosts[0])) n = sizeof(hosts) / sizeof(hosts[0]);
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "%s{\"name\":\"%s\",\"address\":\"%s\"}", i ? "," : "", hosts[i].name,
            hosts[i].address);
  }
  fprintf(f, "]");
}

/* The scenario's JSON report with the header first among its members. */
static void write_json(FILE *f, const fleet_scenario *sc, const fleet_output *out) {
  char *body = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&body, &len);
  if (m == NULL) return;
  sc->json(m, out);
  fclose(m);
  const char *at = body ? strchr(body, '{') : NULL;
  if (at == NULL) { /* not an object: as it is */
    if (body) fputs(body, f);
  } else {
    fwrite(body, 1, (size_t)(at - body) + 1, f);
    write_header(f);
    const char *rest = at + 1;
    while (*rest == ' ' || *rest == '\n') rest++;
    if (*rest != '}') fputc(',', f);
    fputs(rest, f);
  }
  free(body);
}

/* Writes <out-dir>/report.json, the JSON or the table on stdout, the chart
 * when there are runs, and where the logs are; returns the exit status. */
static int finish(const runner *rn, int failed, const fleet_scenario *sc, const fleet_output *out) {
  char svg[4300];
  const char *wd = getenv("BUILD_WORKING_DIRECTORY"); /* set by bazel run */
  if (rn->cli.svg_path && (rn->cli.svg_path[0] == '/' || wd == NULL)) {
    snprintf(svg, sizeof(svg), "%s", rn->cli.svg_path);
  } else { /* relative to where `bazel run` was typed, not to the runfiles */
    snprintf(svg, sizeof(svg), "%s/%s", wd ? wd : ".", rn->cli.svg_path ? rn->cli.svg_path : "fleet.svg");
  }
  char report[4300];
  snprintf(report, sizeof(report), "%s/report.json", rn->out_dir);
  FILE *rf = fopen(report, "w");
  if (rf != NULL) {
    write_json(rf, sc, out);
    fclose(rf);
  }
  if (rn->cli.json) {
    write_json(stdout, sc, out);
  } else {
    long queries = 0;
    const char *dns = io_fleet_dns_used(&queries);
    printf("network: %s, dns: %s (%ld queries), hosts: %zu\n", io_fleet_net_name(),
           dns ? dns : "none", queries, io_fleet_net_hosts(NULL, 0));
    sc->table(stdout, out);
  }
  FILE *where = rn->cli.json ? stderr : stdout;
  if (out->n_runs == 0) { /* churn-grid alone, or a report of its own: nothing to chart */
    fprintf(where, "logs: %s\n", rn->out_dir);
  } else if (io_fleet_report_svg(svg, out->runs, out->n_runs) != 0) {
    fprintf(stderr, "fleet: cannot write %s\n", svg);
    failed = 1;
  } else {
    fprintf(where, "chart: %s\nlogs: %s\n", svg, rn->out_dir);
  }
  return failed ? 1 : 0;
}

/* --- the runner --- */

/* Asks the client binary which policies it can use. */
static int client_has_aperture(const char *client_bin) {
  char *argv[] = {(char *)client_bin, "--print-policies", NULL};
  proc *p = io_proc_start(argv, NULL);
  if (p == NULL) return 0;
  char line[256] = "";
  int got = io_proc_wait_line(p, "policies: ", 10000, line, sizeof(line)) == 0;
  io_proc_stop(p, 2000);
  return got && strstr(line, "aperture") != NULL;
}

/* Where the processes' logs, stats and the report go. Returns 0, or -1. */
static int make_out_dir(runner *rn, const char *out_dir) {
  if (out_dir) {
    snprintf(rn->out_dir, sizeof(rn->out_dir), "%s", out_dir);
    mkdir(rn->out_dir, 0755);
    return 0;
  }
  const char *tmp = getenv("TMPDIR");
  snprintf(rn->out_dir, sizeof(rn->out_dir), "%s/aperture-fleet.XXXXXX", tmp ? tmp : "/tmp");
  if (mkdtemp(rn->out_dir) == NULL) {
    fprintf(stderr, "fleet: cannot create a work directory: %s\n", strerror(errno));
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  static runner rn;
  static const char *names[N_SCENARIOS];
  for (int s = 0; s < N_SCENARIOS; s++) names[s] = kScenarios[s].name;
  rn.cli.a.grace_ms = -1;
  int rc = io_fleet_parse_flags(argc, argv, names, N_SCENARIOS, &rn.cli);
  if (rc >= 0) return rc;
  const char *scenario = rn.cli.scenario; /* NULL: the default run (kDefaultRun) */
  const fleet_scenario *sc = scenario == NULL ? &kDefault : find_scenario(scenario);
  if (sc == NULL) {
    fprintf(stderr, "flag --scenario: unknown scenario '%s'\n", scenario);
    io_fleet_usage(names, N_SCENARIOS);
    return 2;
  }
  char err[300];
  if (rn.cli.network != NULL && strcmp(rn.cli.network, "netns") == 0 && sc->run == io_fleet_xds_scenario) {
    fprintf(stderr, "flag --network: xds needs --network loopback (its control plane runs in the runner's namespace)\n");
    return 2;
  }
  if (sc->check != NULL && sc->check(&rn.cli.a, err, sizeof(err)) != 0) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  if (io_proc_find_binary(argv[0], "testing/server", rn.server_bin, sizeof(rn.server_bin)) != 0 ||
      io_proc_find_binary(argv[0], "testing/client", rn.client_bin, sizeof(rn.client_bin)) != 0) {
    fprintf(stderr, "fleet: cannot find the interop server/client binaries (run with bazel run //interop:fleet)\n");
    return 1;
  }

  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  atexit(io_fleet_net_close); /* runs last: after every process is stopped */
  atexit(io_proc_kill_all);

  if (make_out_dir(&rn, rn.cli.out_dir) != 0) return 1;
  io_fleet_dnsmasq_set_dir(rn.out_dir);
  if (rn.cli.network != NULL && strcmp(rn.cli.network, "netns") == 0) {
    if (io_fleet_netns_open(err, sizeof(err)) != 0 || io_fleet_net_use(&io_fleet_net_netns) != 0) {
      fprintf(stderr, "fleet: %s\n", err);
      io_fleet_net_use(&io_fleet_net_netns); /* so that exit removes what was made */
      return 2;
    }
    fprintf(stderr, "fleet: network netns: namespaces %s*\n", io_fleet_netns_prefix());
  }
  rn.cli.a.server_bin = rn.server_bin;
  rn.cli.a.client_bin = rn.client_bin;
  rn.cli.a.out_dir = rn.out_dir;
  rn.cli.a.have_aperture = client_has_aperture(rn.client_bin);
  if (!rn.cli.a.have_aperture) {
    fprintf(stderr, "fleet: the aperture policy is not linked into the client; comparing gRPC's own policies only\n");
  }
  if (sc->needs_aperture && !rn.cli.a.have_aperture) {
    fprintf(stderr, "fleet: %s needs the aperture policy in the client\n", sc->name);
    return 1;
  }
  static fleet_run runs[MAX_RUNS];
  static fleet_churn_row churn[MAX_CHURN_ROWS];
  fleet_output out = {runs, 0, MAX_RUNS, churn, 0, MAX_CHURN_ROWS, NULL, 0};
  int failed = sc->run(sc->def, &rn.cli.a, &out) != 0;
  return finish(&rn, failed, sc, &out);
}
