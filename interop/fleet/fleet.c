/* Fleet runner: starts N interop servers and S client services of M
 * clients as separate processes on 127.0.0.1, runs a scenario once per LB
 * mode, collects the servers' stats files and the clients' summaries, and
 * prints a report (table, or JSON with --json) plus an SVG chart.
 *
 *   fleet [--scenario balance|multi-service|slow-backend|kill|churn|restart|remove|throughput|churn-grid|peers|xds|deploy|affinity|soak|all]
 *         [--modes m1,m2,...] [--servers N] [--clients M] [--rate QPS]
 *         [--duration-s S] [--concurrency K] [--min-aperture A] [--grace-ms G] [--json]
 *         [--points N:C:A,...] [--affinity sticky,hash] [--svg PATH] [--out-dir DIR]
 *
 * With no --scenario: the default run (kDefaultRun): balance and
 * multi-service for smooth, continuous (random too in multi-service) and
 * round_robin, at enough calls per server that sampling noise is ~2%, with
 * a closing summary; without the aperture policy linked, round_robin only.
 * churn-grid (fleet_churn_grid.h) measures one removal and one addition per
 * (N, C, A) point of --points and mode, beside the core's prediction.
 * xds (fleet_xds.h) is churn-grid with the endpoints from EDS; deploy
 * (fleet_deploy.h) replaces every server in turn by one at a new address
 * (--servers, --clients, --min-aperture, --rate); affinity
 * (fleet_affinity.h) reports which servers served each key.
 * soak (fleet_soak.h) is a bounded run with kills, flaps, a status loop and
 * a sticky-key flood; --duration-s sets its length (default 300 s) and
 * --rss-bound-kib its memory bound; it is not part of `all`.
 * The JSON report is also written to <out-dir>/report.json.
 * Every child runs in its own process group and dies with the runner;
 * SIGINT/SIGTERM and every exit path stop them all.
 * Exit status: 0 when every run completed, 1 when one failed, 2 on a usage
 * error (a bad flag or value, an unknown scenario or mode), found before
 * any process starts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "interop/common/flags.h"
#include "interop/fleet/fleet_affinity.h"
#include "interop/fleet/fleet_balance.h"
#include "interop/fleet/fleet_churn.h"
#include "interop/fleet/fleet_churn_grid.h"
#include "interop/fleet/fleet_clock.h"
#include "interop/fleet/fleet_deploy.h"
#include "interop/fleet/fleet_multi_service.h"
#include "interop/fleet/fleet_kill.h"
#include "interop/fleet/fleet_modes.h"
#include "interop/fleet/fleet_peers.h"
#include "interop/fleet/fleet_remove.h"
#include "interop/fleet/fleet_report.h"
#include "interop/fleet/fleet_restart.h"
#include "interop/fleet/fleet_slow_backend.h"
#include "interop/fleet/fleet_soak.h"
#include "interop/fleet/fleet_summary.h"
#include "interop/fleet/fleet_throughput.h"
#include "interop/fleet/fleet_timeline.h"
#include "interop/fleet/fleet_xds.h"
#include "interop/common/json_read.h"
#include "interop/common/proc.h"

#define MAX_RUNS 64

/* --- the timeline scenarios (fleet_timeline.h) --- */

static const fleet_timeline *const kTimelines[] = {
    &io_fleet_balance_timeline, &io_fleet_multi_service_timeline,
    &io_fleet_slow_backend_timeline, &io_fleet_kill_timeline, &io_fleet_churn_timeline,
    &io_fleet_restart_timeline, &io_fleet_remove_timeline, &io_fleet_throughput_timeline,
};
#define N_SCENARIOS ((int)(sizeof(kTimelines) / sizeof(kTimelines[0])))

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

typedef struct runner {
  char server_bin[4096];
  char client_bin[4096];
  char out_dir[4096];
  fleet_args a; /* what the scenarios read */
  int json;
  const char *svg_path;
} runner;

static void on_signal(int sig) {
  io_proc_kill_all();
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Runs a timeline scenario for each requested, available mode; appends to
 * runs. */
static int run_scenario(const runner *rn, const fleet_timeline *sc, fleet_run *runs, int *n_runs) {
  const fleet_args *a = &rn->a;
  const char *list = a->modes ? a->modes : sc->default_modes;
  int failures = 0;
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    const fleet_mode *m = io_fleet_mode_find(p, len);
    if (m == NULL) {
      fprintf(stderr, "fleet: unknown mode '%.*s'\n", (int)len, p);
      return -1;
    }
    p += len + (p[len] == ',');
    if (m->aperture && !a->have_aperture) {
      if (a->modes) fprintf(stderr, "fleet: mode %s needs the aperture policy (not linked); skipped\n", m->name);
      continue;
    }
    if (*n_runs >= MAX_RUNS) break;
    fprintf(stderr, "fleet: %s / %s ...\n", sc->name, m->name);
    if (io_fleet_timeline_run_mode(sc, a, m, &runs[*n_runs]) != 0) {
      fprintf(stderr, "fleet: %s / %s failed: %s\n", sc->name, m->name, runs[*n_runs].error);
      failures++;
    }
    (*n_runs)++;
  }
  return failures ? -1 : 0;
}

/* A scenario's report writer: rows (or one result) and their count. */
typedef void (*report_writer)(FILE *f, const void *rows, int n);

/* Whether the client has the aperture policy, which `scenario` needs. */
static int aperture_linked(const runner *rn, const char *scenario) {
  if (!rn->a.have_aperture) {
    fprintf(stderr, "fleet: %s needs the aperture policy in the client\n", scenario);
  }
  return rn->a.have_aperture;
}

/* Writes <out-dir>/report.json, the JSON or the table on stdout and where
 * the logs are; returns the scenario's exit code. */
static int finish_scenario(const runner *rn, int failed, report_writer json, report_writer table,
                           const void *rows, int n) {
  char report[4300];
  snprintf(report, sizeof(report), "%s/report.json", rn->out_dir);
  FILE *rf = fopen(report, "w");
  if (rf != NULL) {
    json(rf, rows, n);
    fclose(rf);
  }
  if (rn->json) json(stdout, rows, n);
  else table(stdout, rows, n);
  fprintf(rn->json ? stderr : stdout, "logs: %s\n", rn->out_dir);
  return failed ? 1 : 0;
}

static void peers_json(FILE *f, const void *rows, int n) { io_fleet_peers_json(f, rows, n); }
static void peers_table(FILE *f, const void *rows, int n) { io_fleet_peers_table(f, rows, n); }
static void xds_json(FILE *f, const void *rows, int n) { io_fleet_xds_json(f, rows, n); }
static void xds_table(FILE *f, const void *rows, int n) { io_fleet_xds_table(f, rows, n); }
static void deploy_json(FILE *f, const void *rows, int n) { io_fleet_deploy_json(f, rows, n); }
static void deploy_table(FILE *f, const void *rows, int n) { io_fleet_deploy_table(f, rows, n); }
static void affinity_json(FILE *f, const void *rows, int n) { io_fleet_affinity_json(f, rows, n); }
static void affinity_table(FILE *f, const void *rows, int n) { io_fleet_affinity_table(f, rows, n); }
static void soak_json(FILE *f, const void *res, int n) {
  (void)n;
  io_fleet_soak_json(f, res);
}
static void soak_table(FILE *f, const void *res, int n) {
  (void)n;
  io_fleet_soak_table(f, res);
}

/* The peers scenario (fleet_peers.h): its own rows, report and table. */
static int run_peers(const runner *rn) {
  if (!aperture_linked(rn, "peers")) return 1;
  fleet_peers_opts po = {rn->server_bin, rn->client_bin, rn->out_dir, rn->a.modes,
                         (int)rn->a.servers, (int)rn->a.clients, (int)rn->a.min_aperture, rn->a.rate};
  static fleet_peers_row rows[FLEET_PEERS_MAX_MODES];
  int n = 0;
  int failed = io_fleet_peers_run(&po, rows, FLEET_PEERS_MAX_MODES, &n) != 0;
  return finish_scenario(rn, failed, peers_json, peers_table, rows, n);
}

/* The xds scenario (fleet_xds.h): churn-grid through EDS; its own rows,
 * report and table. */
static int run_xds(const runner *rn, const char *points) {
  if (!aperture_linked(rn, "xds")) return 1;
  fleet_xds_opts xo = {rn->server_bin, rn->client_bin, rn->out_dir, rn->a.modes, points, rn->a.rate};
  static fleet_churn_row rows[FLEET_CHURN_MAX_POINTS * 8];
  int n = 0;
  int failed = io_fleet_xds_run(&xo, rows, (int)(sizeof(rows) / sizeof(rows[0])), &n) != 0;
  return finish_scenario(rn, failed, xds_json, xds_table, rows, n);
}

/* The deploy scenario (fleet_deploy.h): a rolling replacement at new
 * addresses; fails when a mode's measurement differs from the prediction
 * or a call failed. */
static int run_deploy(const runner *rn) {
  if (!aperture_linked(rn, "deploy")) return 1;
  fleet_deploy_opts dop = {rn->server_bin, rn->client_bin, rn->out_dir, rn->a.modes,
                           (int)rn->a.servers, (int)rn->a.clients, (int)rn->a.min_aperture, rn->a.rate};
  static fleet_deploy_row rows[FLEET_DEPLOY_MAX_MODES];
  int n = 0;
  int failed = io_fleet_deploy_run(&dop, rows, FLEET_DEPLOY_MAX_MODES, &n) != 0;
  return finish_scenario(rn, failed, deploy_json, deploy_table, rows, n);
}

/* The affinity scenario (fleet_affinity.h): per-key owners. */
static int run_affinity(const runner *rn, const char *kinds) {
  if (!aperture_linked(rn, "affinity")) return 1;
  fleet_affinity_opts ao = {rn->server_bin, rn->client_bin, rn->out_dir, kinds,
                            (int)rn->a.servers, (int)rn->a.clients, (int)rn->a.min_aperture, rn->a.rate};
  static fleet_affinity_row rows[FLEET_AFFINITY_MAX_KINDS];
  int n = 0;
  int failed = io_fleet_affinity_run(&ao, rows, FLEET_AFFINITY_MAX_KINDS, &n) != 0;
  return finish_scenario(rn, failed, affinity_json, affinity_table, rows, n);
}

/* The soak scenario (fleet_soak.h): its own report. */
static int run_soak(const runner *rn) {
  if (!aperture_linked(rn, "soak")) return 1;
  fleet_soak_opts so = {rn->server_bin, rn->client_bin, rn->out_dir, rn->a.duration_s,
                        (int)rn->a.servers, (int)rn->a.clients, rn->a.rate, rn->a.rss_bound_kib};
  static fleet_soak_result res;
  int failed = io_fleet_soak_run(&so, &res) != 0;
  return finish_scenario(rn, failed, soak_json, soak_table, &res, 1);
}

/* Runs one step of the default run: its scenario with its modes, rate,
 * duration and concurrency, where the flags did not set them. */
static int run_default_step(const runner *rn, const default_step *step, fleet_run *runs,
                            int *n_runs) {
  const fleet_timeline *sc = NULL;
  for (int s = 0; s < N_SCENARIOS; s++) {
    if (strcmp(kTimelines[s]->name, step->scenario) == 0) sc = kTimelines[s];
  }
  if (sc == NULL) return -1;
  static runner r; /* large: not on the stack */
  r = *rn;
  if (r.a.modes == NULL) r.a.modes = step->modes;
  if (r.a.rate <= 0) r.a.rate = step->rate;
  if (r.a.duration_s <= 0) r.a.duration_s = step->duration_s;
  if (r.a.concurrency <= 0) r.a.concurrency = step->concurrency;
  return run_scenario(&r, sc, runs, n_runs);
}

static void usage(void) {
  fprintf(stderr,
          "usage: fleet [--scenario balance|multi-service|slow-backend|kill|churn|restart|remove|throughput|churn-grid|peers|xds|deploy|affinity|soak|all]\n"
          "             [--modes m1,m2,...] [--servers N] [--clients M] [--rate QPS]\n"
          "             [--duration-s S] [--concurrency K] [--min-aperture A] [--grace-ms G] [--json]\n"
          "             [--points N:C:A,...] [--affinity sticky,hash] [--svg PATH] [--out-dir DIR]\n"
          "no --scenario: balance, then multi-service, for smooth, continuous, (random,) round_robin\n"
          "churn-grid points (servers:clients:minAperture): default " FLEET_CHURN_DEFAULT_POINTS "\n"
          "xds: churn-grid with EDS instead of DNS; points default " FLEET_XDS_DEFAULT_POINTS ", modes " FLEET_XDS_DEFAULT_MODES "\n"
          "deploy: every server replaced in turn at a new address (--servers 8, --clients 4, --min-aperture 3, --rate 50); modes " FLEET_DEPLOY_DEFAULT_MODES "\n"
          "affinity: per-key owners for --affinity " FLEET_AFFINITY_DEFAULT_KINDS " (--servers, --clients, --min-aperture, --rate)\n"
          "soak: [--duration-s S] (default 300) [--rss-bound-kib K] (default 8192)\n"
          "modes: continuous discrete random vdc smooth mesh stable (aperture) round_robin pick_first\n");
}

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

int main(int argc, char **argv) {
  static runner rn;
  rn.a.grace_ms = -1;
  const char *scenario = NULL; /* NULL: the default run (kDefaultRun) */
  const char *out_dir = NULL;
  const char *points = NULL;
  const char *affinity_kinds = NULL; /* affinity scenario: sticky, hash */
  for (int i = 1; i < argc; i++) {
    const char *v;
    int r;
    if ((r = io_flag_match(argc, argv, &i, "scenario", &v)) != 0) {
      if (r < 0) return 2;
      scenario = v;
    } else if ((r = io_flag_match(argc, argv, &i, "modes", &v)) != 0) {
      if (r < 0) return 2;
      /* an unknown mode is a usage error, found before anything starts */
      for (const char *m = v; *m;) {
        size_t len = strcspn(m, ",");
        if (io_fleet_mode_find(m, len) == NULL) {
          fprintf(stderr, "flag --modes: unknown mode '%.*s'\n", (int)len, m);
          usage();
          return 2;
        }
        m += len + (m[len] == ',');
      }
      rn.a.modes = v;
    } else if ((r = io_flag_match(argc, argv, &i, "points", &v)) != 0) {
      if (r < 0) return 2;
      fleet_churn_point check[FLEET_CHURN_MAX_POINTS];
      char perr[200];
      if (io_fleet_churn_parse_points(v, check, FLEET_CHURN_MAX_POINTS, perr, sizeof(perr)) < 0) {
        fprintf(stderr, "flag %s\n", perr);
        return 2;
      }
      points = v;
    } else if ((r = io_flag_match(argc, argv, &i, "affinity", &v)) != 0) {
      char kerr[200];
      if (r < 0) return 2;
      if (io_fleet_affinity_check_kinds(v, kerr, sizeof(kerr)) != 0) {
        fprintf(stderr, "flag --affinity: %s\n", kerr);
        return 2;
      }
      affinity_kinds = v;
    } else if ((r = io_flag_match(argc, argv, &i, "svg", &v)) != 0) {
      if (r < 0) return 2;
      rn.svg_path = v;
    } else if ((r = io_flag_match(argc, argv, &i, "out-dir", &v)) != 0) {
      if (r < 0) return 2;
      out_dir = v;
    } else if ((r = io_flag_match(argc, argv, &i, "servers", &v)) != 0) {
      if (r < 0 || io_flag_long("servers", v, 1, FLEET_MAX_SERVERS - 1, &rn.a.servers) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "clients", &v)) != 0) {
      if (r < 0 || io_flag_long("clients", v, 1, FLEET_TIMELINE_MAX_CLIENTS / FLEET_MAX_SERVICES, &rn.a.clients) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "min-aperture", &v)) != 0) {
      if (r < 0 || io_flag_long("min-aperture", v, 1, 1000000, &rn.a.min_aperture) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "grace-ms", &v)) != 0) {
      if (r < 0 || io_flag_long("grace-ms", v, 0, 86400000, &rn.a.grace_ms) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "concurrency", &v)) != 0) {
      if (r < 0 || io_flag_long("concurrency", v, 1, 1000, &rn.a.concurrency) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "rate", &v)) != 0) {
      if (r < 0 || io_flag_double("rate", v, 1, 100000, &rn.a.rate) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "rss-bound-kib", &v)) != 0) {
      if (r < 0 || io_flag_long("rss-bound-kib", v, 1, 16777216, &rn.a.rss_bound_kib) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "duration-s", &v)) != 0) {
      if (r < 0 || io_flag_double("duration-s", v, 0.5, 600, &rn.a.duration_s) != 0) return 2;
    } else if (strcmp(argv[i], "--json") == 0) {
      rn.json = 1;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage();
      return 0;
    } else {
      fprintf(stderr, "fleet: unknown argument '%s'\n", argv[i]);
      usage();
      return 2;
    }
  }
  int want_default = scenario == NULL;
  int want_all = !want_default && strcmp(scenario, "all") == 0;
  int want_grid = want_all || (!want_default && strcmp(scenario, "churn-grid") == 0);
  int want_peers = !want_default && strcmp(scenario, "peers") == 0; /* fleet_peers.h */
  int want_xds = !want_default && strcmp(scenario, "xds") == 0;       /* fleet_xds.h */
  int want_affinity = !want_default && strcmp(scenario, "affinity") == 0; /* fleet_affinity.h */
  if (want_affinity && (rn.a.clients == 1 || rn.a.clients > FLEET_AFFINITY_MAX_CLIENTS ||
                        rn.a.servers == 1 || rn.a.servers > FLEET_AFFINITY_MAX_SERVERS)) {
    fprintf(stderr, "fleet: affinity: --servers in [2, %d] and --clients in [2, %d]\n",
            FLEET_AFFINITY_MAX_SERVERS, FLEET_AFFINITY_MAX_CLIENTS);
    return 2;
  }
  char xds_err[200];
  if (want_xds && rn.a.modes != NULL && io_fleet_xds_check_modes(rn.a.modes, xds_err, sizeof(xds_err)) != 0) {
    fprintf(stderr, "flag %s\n", xds_err);
    return 2;
  }
  int want_deploy = !want_default && strcmp(scenario, "deploy") == 0; /* fleet_deploy.h */
  if (want_deploy && rn.a.modes != NULL &&
      io_fleet_deploy_check_modes(rn.a.modes, xds_err, sizeof(xds_err)) != 0) {
    fprintf(stderr, "flag %s\n", xds_err);
    return 2;
  }
  if (want_deploy && (rn.a.servers == 1 || rn.a.servers > FLEET_DEPLOY_MAX_SERVERS ||
                      rn.a.clients > 16)) {
    fprintf(stderr, "fleet: deploy: --servers in [2, %d] and --clients in [1, 16]\n",
            FLEET_DEPLOY_MAX_SERVERS);
    return 2;
  }
  int want_soak = !want_default && strcmp(scenario, "soak") == 0;   /* fleet_soak.h */
  const fleet_timeline *chosen = NULL;
  for (int s = 0; s < N_SCENARIOS && !want_default; s++) {
    if (strcmp(kTimelines[s]->name, scenario) == 0) chosen = kTimelines[s];
  }
  if (!want_default && !want_all && !want_grid && !want_peers && !want_xds && !want_affinity &&
      !want_deploy && !want_soak && chosen == NULL) {
    fprintf(stderr, "flag --scenario: unknown scenario '%s'\n", scenario);
    usage();
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
  atexit(io_proc_kill_all);

  if (out_dir) {
    snprintf(rn.out_dir, sizeof(rn.out_dir), "%s", out_dir);
    mkdir(rn.out_dir, 0755);
  } else {
    const char *tmp = getenv("TMPDIR");
    snprintf(rn.out_dir, sizeof(rn.out_dir), "%s/aperture-fleet.XXXXXX", tmp ? tmp : "/tmp");
    if (mkdtemp(rn.out_dir) == NULL) {
      fprintf(stderr, "fleet: cannot create a work directory: %s\n", strerror(errno));
      return 1;
    }
  }
  rn.a.server_bin = rn.server_bin;
  rn.a.client_bin = rn.client_bin;
  rn.a.out_dir = rn.out_dir;
  rn.a.have_aperture = client_has_aperture(rn.client_bin);
  if (!rn.a.have_aperture) {
    fprintf(stderr, "fleet: the aperture policy is not linked into the client; comparing gRPC's own policies only\n");
  }

  if (want_peers) return run_peers(&rn);
  if (want_xds) return run_xds(&rn, points);
  if (want_deploy) return run_deploy(&rn);
  if (want_affinity) return run_affinity(&rn, affinity_kinds);
  if (want_soak) return run_soak(&rn);

  static fleet_run runs[MAX_RUNS];
  int n_runs = 0, failed = 0;
  for (int s = 0; s < N_SCENARIOS && !want_default; s++) {
    if (!want_all && kTimelines[s] != chosen) continue;
    if (run_scenario(&rn, kTimelines[s], runs, &n_runs) != 0) failed = 1;
  }
  for (int d = 0; d < N_DEFAULT_STEPS && want_default; d++) {
    if (run_default_step(&rn, &kDefaultRun[d], runs, &n_runs) != 0) failed = 1;
  }
  static fleet_churn_row churn_rows[FLEET_CHURN_MAX_POINTS * 16];
  int n_churn = 0;
  if (want_grid) {
    fleet_churn_opts co;
    memset(&co, 0, sizeof(co));
    co.server_bin = rn.server_bin;
    co.client_bin = rn.client_bin;
    co.out_dir = rn.out_dir;
    co.modes = rn.a.modes;
    co.points = points;
    co.have_aperture = rn.a.have_aperture;
    co.rate = rn.a.rate;
    int max_rows = (int)(sizeof(churn_rows) / sizeof(churn_rows[0]));
    if (io_fleet_churn_grid(&co, churn_rows, max_rows, &n_churn) != 0) failed = 1;
  }

  char svg[4300];
  const char *wd = getenv("BUILD_WORKING_DIRECTORY"); /* set by bazel run */
  if (rn.svg_path && (rn.svg_path[0] == '/' || wd == NULL)) {
    snprintf(svg, sizeof(svg), "%s", rn.svg_path);
  } else { /* relative to where `bazel run` was typed, not to the runfiles */
    snprintf(svg, sizeof(svg), "%s/%s", wd ? wd : ".", rn.svg_path ? rn.svg_path : "fleet.svg");
  }
  char report[4300];
  snprintf(report, sizeof(report), "%s/report.json", rn.out_dir);
  FILE *rf = fopen(report, "w");
  if (rf != NULL) {
    io_fleet_report_json(rf, runs, n_runs, churn_rows, n_churn);
    fclose(rf);
  }
  if (rn.json) {
    io_fleet_report_json(stdout, runs, n_runs, churn_rows, n_churn);
  } else {
    if (n_runs > 0) io_fleet_report_table(stdout, runs, n_runs);
    static fleet_summary summary;
    if (io_fleet_summary_of(runs, n_runs, &summary) == 0 && summary.text[0] != '\0') {
      fprintf(stdout, "\nsummary:\n%s", summary.text);
    }
    io_fleet_report_churn_table(stdout, churn_rows, n_churn);
  }
  if (n_runs == 0) { /* churn-grid alone: nothing to chart */
    fprintf(rn.json ? stderr : stdout, "logs: %s\n", rn.out_dir);
  } else if (io_fleet_report_svg(svg, runs, n_runs) != 0) {
    fprintf(stderr, "fleet: cannot write %s\n", svg);
    failed = 1;
  } else {
    fprintf(rn.json ? stderr : stdout, "chart: %s\nlogs: %s\n", svg, rn.out_dir);
  }
  return failed ? 1 : 0;
}
