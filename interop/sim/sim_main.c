/*
 * sim: the aperture simulator. `bazel run //interop:sim -- VERB [flags]`.
 * Dispatches to one verb per file; prints usage and exits 2 otherwise.
 */
#include <stdio.h>
#include <string.h>

#include "interop/sim/sim.h"

typedef struct sim_verb {
  const char *name;
  int (*run)(int argc, char **argv);
} sim_verb;

static const sim_verb verbs[] = {
    {"subset", io_sim_verb_subset},       {"connections", io_sim_verb_connections},
    {"balance", io_sim_verb_balance},     {"churn", io_sim_verb_churn},
    {"vnodes", io_sim_verb_vnodes},       {"vdc", io_sim_verb_vdc},
    {"hash", io_sim_verb_hash},           {"placement", io_sim_verb_placement},
    {"peers", io_sim_verb_peers},         {"deploy", io_sim_verb_deploy},
    {"covers", io_sim_verb_covers},
};

void io_sim_usage(void) {
  fputs(
      "usage: sim VERB [flags]   (all output is deterministic; --json for "
      "machines)\n"
      "\n"
      "  subset --servers N (--peers C --index I | --offset O --width W)\n"
      "         [--min-aperture A] [--mode M] [--seed S] [--json]\n"
      "      one client's window and every covered endpoint (ring order from\n"
      "      the window's start) with its intersection weight.\n"
      "  connections [--clients 500] [--servers 1000] [--subset 20] [--json]\n"
      "      total connections: mesh vs aperture, per mode.\n"
      "  balance [--servers 100] [--clients 33] [--min-aperture 12]\n"
      "          [--services 5,13,33,70] [--per-server] [--json]\n"
      "          [--client-rates 8,1,1,1|lognormal:CV|one:X [--seed 1] [--draws 1]]\n"
      "      per-server connections and expected request share per mode, for\n"
      "      one service and for several services sharing the servers; plus\n"
      "      the SRE book's random 300x300 subset-30% example; with\n"
      "      --client-rates, clients at unequal rates without and with the\n"
      "      mechanism that evens their load.\n"
      "  churn [--servers 100] [--clients 100] [--min-aperture 12]\n"
      "        [--no-grid] [--grid-servers 50,300] [--grid-clients 7,300]\n"
      "        [--grid-step 1] [--grid-positions 2] [--json]\n"
      "      sessions changed when one server leaves or joins, per mode, vs\n"
      "      hash-mod subsetting and the optimum; worst case over a grid.\n"
      "  vnodes [--nodes 10] [--seeds 20] [--vnodes 1,2,4,16,64,256] [--json]\n"
      "      seed 004's table on the consistent-hash ring.\n"
      "  vdc --count K [--json]\n"
      "      the first K binary Van der Corput values.\n"
      "  hash [--weights 1,2,1,1,1] [--vnodes 1,10,100,1000,10000]\n"
      "       [--keys 100000] [--json]\n"
      "      consistent-hash ring: load share vs weight, keys moved on\n"
      "      add/remove.\n"
      "  placement [--servers 100] [--clients 100] [--min-aperture 12] "
      "[--json]\n"
      "      experiment: servers at Van der Corput positions of a stable\n"
      "      index vs the modes.\n"
      "  peers [--servers 100] [--clients 100] [--min-aperture 12]\n"
      "        [--no-grid] [--grid-servers 20,200] [--grid-clients 2,60]\n"
      "        [--grid-step 20] [--grid-positions 4] [--json]\n"
      "      sessions changed when one client joins or leaves, per mode, vs\n"
      "      the optimum; server load while the clients disagree.\n"
      "  deploy [--servers 100] [--clients 100] [--min-aperture 12] [--json]\n"
      "      rolling deploy: every server in turn replaced by one with a new\n"
      "      identity; sessions changed vs the optimum, worst load, per mode.\n"
      "  covers [--servers 100] [--clients 100] [--min-aperture 12] [--rmin 1.5]\n"
      "         [--cap 1.45] [--floor 1.25] [--exclusive F] [--slack 4] [--positions 4]\n"
      "         [--deploy] [--grid-servers LO,HI --grid-clients LO,HI] [--grid-step 10]\n"
      "      experiment: server-centric covers against the core's stable plan;\n"
      "      connections, load, server/client churn and deploy vs the optimum.\n"
      "  help\n"
      "      this text.\n"
      "\n"
      "modes: continuous discrete random vdc mesh smooth stable\n"
      "exit codes: 0 ok, 1 internal failure, 2 usage error\n",
      stderr);
}

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "help") == 0 ||
      strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    if (argc < 2) fputs("sim: no verb given\n\n", stderr);
    io_sim_usage();
    return SIM_EXIT_USAGE;
  }
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
    if (strcmp(argv[1], verbs[i].name) == 0)
      return verbs[i].run(argc - 1, argv + 1);
  }
  fprintf(stderr, "sim: unknown verb '%s'\n\n", argv[1]);
  io_sim_usage();
  return SIM_EXIT_USAGE;
}
