/* fleet_flags: the fleet runner's command line. */
#include "interop/fleet/fleet_flags.h"

#include <stdio.h>
#include <string.h>

#include "interop/common/flags.h"
#include "interop/fleet/fleet_affinity.h"
#include "interop/fleet/fleet_churn_grid.h"
#include "interop/fleet/fleet_deploy.h"
#include "interop/fleet/fleet_gray.h"
#include "interop/fleet/fleet_modes.h"
#include "interop/fleet/fleet_skew.h"
#include "interop/fleet/fleet_tail.h"
#include "interop/fleet/fleet_timeline.h"
#include "interop/fleet/fleet_unequal.h"
#include "interop/fleet/fleet_xds.h"

void io_fleet_usage(const char *const *names, size_t n) {
  fprintf(stderr, "usage: fleet [--scenario ");
  for (size_t s = 0; s < n; s++) fprintf(stderr, "%s%s", s ? "|" : "", names[s]);
  fprintf(stderr,
          "]\n"
          "             [--modes m1,m2,...] [--servers N] [--clients M] [--rate QPS]\n"
          "             [--duration-s S] [--concurrency K] [--min-aperture A] [--grace-ms G] [--json]\n"
          "             [--points N:C:A,...] [--affinity sticky,hash] [--svg PATH] [--out-dir DIR]\n"
          "             [--network loopback|netns] [--client-rates R1,R2,...]\n"
          "network: loopback (default) or netns (root: a namespace per server and client)\n"
          "no --scenario: balance, then multi-service, for smooth, continuous, (random,) round_robin\n"
          "churn-grid points (servers:clients:minAperture): default " FLEET_CHURN_DEFAULT_POINTS "\n"
          "xds: churn-grid with EDS instead of DNS; points default " FLEET_XDS_DEFAULT_POINTS ", modes " FLEET_XDS_DEFAULT_MODES "\n"
          "deploy: every server replaced in turn at a new address (--servers 8, --clients 4, --min-aperture 3, --rate 50); modes " FLEET_DEPLOY_DEFAULT_MODES "\n"
          "affinity: per-key owners for --affinity " FLEET_AFFINITY_DEFAULT_KINDS " (--servers, --clients, --min-aperture, --rate)\n"
          "soak: [--duration-s S] (default 300) [--rss-bound-kib K] (default 8192)\n"
          "unequal: 10 servers, capacities 1 x8, 0.5, 0.25; round_robin and each pickMetric of the\n"
          "         aperture modes (default " FLEET_UNEQUAL_DEFAULT_MODES "); [--duration-s S] per run (default 20)\n"
          "skew: 8 servers, 4 clients at unequal rates [--client-rates " FLEET_SKEW_DEFAULT_RATES "] (calls in\n"
          "      flight, or calls/s with --rate); round_robin and each pickMetric of the aperture\n"
          "      modes (default " FLEET_SKEW_DEFAULT_MODES "), orca also without the mechanism\n"
          "gray: [--faults " FLEET_GRAY_DEFAULT_FAULTS "] [--calls N] (per run, default 20000)\n"
          "      [--fault-s S] (default 10); modes " FLEET_GRAY_DEFAULT_MODES "\n"
          "tail: [--tail-share F] (default 0.1) [--tail-ms N] (200) [--deadline-ms N] (100)\n"
          "      [--tail-seed S] (1); --servers 4, --clients 1, --concurrency 2, --duration-s 10;\n"
          "      modes " FLEET_TAIL_DEFAULT_MODES "\n"
          "modes: continuous discrete random vdc smooth mesh stable (aperture) round_robin pick_first\n");
}

/* A --modes list: an unknown mode is a usage error, found before anything
 * starts. */
static int check_modes(const char *v, const char *const *names, size_t n) {
  for (const char *m = v; *m;) {
    size_t len = strcspn(m, ",");
    if (io_fleet_mode_find(m, len) == NULL) {
      fprintf(stderr, "flag --modes: unknown mode '%.*s'\n", (int)len, m);
      io_fleet_usage(names, n);
      return -1;
    }
    m += len + (m[len] == ',');
  }
  return 0;
}

int io_fleet_parse_flags(int argc, char **argv, const char *const *names, size_t n,
                         fleet_cli *cli) {
  fleet_args *a = &cli->a;
  for (int i = 1; i < argc; i++) {
    const char *v;
    int r;
    char err[200];
    if ((r = io_flag_match(argc, argv, &i, "scenario", &v)) != 0) {
      if (r < 0) return 2;
      cli->scenario = v;
    } else if ((r = io_flag_match(argc, argv, &i, "modes", &v)) != 0) {
      if (r < 0 || check_modes(v, names, n) != 0) return 2;
      a->modes = v;
    } else if ((r = io_flag_match(argc, argv, &i, "points", &v)) != 0) {
      if (r < 0) return 2;
      fleet_churn_point check[FLEET_CHURN_MAX_POINTS];
      if (io_fleet_churn_parse_points(v, check, FLEET_CHURN_MAX_POINTS, err, sizeof(err)) < 0) {
        fprintf(stderr, "flag %s\n", err);
        return 2;
      }
      a->points = v;
    } else if ((r = io_flag_match(argc, argv, &i, "affinity", &v)) != 0) {
      if (r < 0) return 2;
      if (io_fleet_affinity_check_kinds(v, err, sizeof(err)) != 0) {
        fprintf(stderr, "flag --affinity: %s\n", err);
        return 2;
      }
      a->affinity = v;
    } else if ((r = io_flag_match(argc, argv, &i, "faults", &v)) != 0) {
      if (r < 0) return 2;
      a->faults = v;
    } else if ((r = io_flag_match(argc, argv, &i, "client-rates", &v)) != 0) {
      double rates[FLEET_SKEW_MAX_RATES];
      if (r < 0) return 2;
      if (io_fleet_skew_parse_rates(v, rates, FLEET_SKEW_MAX_RATES, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
      }
      a->client_rates = v;
    } else if ((r = io_flag_match(argc, argv, &i, "calls", &v)) != 0) {
      if (r < 0 || io_flag_long("calls", v, 100, 100000000, &a->calls) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "tail-share", &v)) != 0) {
      if (r < 0 || io_flag_double("tail-share", v, 0, 1, &a->tail_share) != 0) return 2;
      a->has_tail_share = 1;
    } else if ((r = io_flag_match(argc, argv, &i, "tail-ms", &v)) != 0) {
      if (r < 0 || io_flag_long("tail-ms", v, 1, 60000, &a->tail_ms) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "deadline-ms", &v)) != 0) {
      if (r < 0 || io_flag_long("deadline-ms", v, 1, 60000, &a->deadline_ms) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "tail-seed", &v)) != 0) {
      if (r < 0 || io_flag_long("tail-seed", v, 1, 2147483647, &a->tail_seed) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "fault-s", &v)) != 0) {
      if (r < 0 || io_flag_double("fault-s", v, 0.2, 120, &a->fault_s) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "svg", &v)) != 0) {
      if (r < 0) return 2;
      cli->svg_path = v;
    } else if ((r = io_flag_match(argc, argv, &i, "network", &v)) != 0) {
      if (r < 0) return 2;
      if (strcmp(v, "loopback") != 0 && strcmp(v, "netns") != 0) {
        fprintf(stderr, "flag --network: unknown network '%s' (loopback or netns)\n", v);
        io_fleet_usage(names, n);
        return 2;
      }
      cli->network = v;
    } else if ((r = io_flag_match(argc, argv, &i, "out-dir", &v)) != 0) {
      if (r < 0) return 2;
      cli->out_dir = v;
    } else if ((r = io_flag_match(argc, argv, &i, "servers", &v)) != 0) {
      if (r < 0 || io_flag_long("servers", v, 1, FLEET_MAX_SERVERS - 1, &a->servers) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "clients", &v)) != 0) {
      if (r < 0 || io_flag_long("clients", v, 1, FLEET_TIMELINE_MAX_CLIENTS / FLEET_MAX_SERVICES, &a->clients) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "min-aperture", &v)) != 0) {
      if (r < 0 || io_flag_long("min-aperture", v, 1, 1000000, &a->min_aperture) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "grace-ms", &v)) != 0) {
      if (r < 0 || io_flag_long("grace-ms", v, 0, 86400000, &a->grace_ms) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "concurrency", &v)) != 0) {
      if (r < 0 || io_flag_long("concurrency", v, 1, 1000, &a->concurrency) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "rate", &v)) != 0) {
      if (r < 0 || io_flag_double("rate", v, 1, 100000, &a->rate) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "rss-bound-kib", &v)) != 0) {
      if (r < 0 || io_flag_long("rss-bound-kib", v, 1, 16777216, &a->rss_bound_kib) != 0) return 2;
    } else if ((r = io_flag_match(argc, argv, &i, "duration-s", &v)) != 0) {
      if (r < 0 || io_flag_double("duration-s", v, 0.5, 600, &a->duration_s) != 0) return 2;
    } else if (strcmp(argv[i], "--json") == 0) {
      cli->json = 1;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      io_fleet_usage(names, n);
      return 0;
    } else {
      fprintf(stderr, "fleet: unknown argument '%s'\n", argv[i]);
      io_fleet_usage(names, n);
      return 2;
    }
  }
  return -1;
}

