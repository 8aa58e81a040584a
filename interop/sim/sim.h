/*
 * sim: the aperture simulator's verbs. Each verb lives in its own file
 * (sim_<verb>.c), parses its own flags with sim_args and computes everything
 * through the core's APIs; nothing here re-implements ring math.
 * Every verb returns a process exit code.
 */
#ifndef APERTURE_INTEROP_SIM_H
#define APERTURE_INTEROP_SIM_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
  SIM_EXIT_OK = 0,
  SIM_EXIT_FAIL = 1,  /* unexpected failure (out of memory, core error) */
  SIM_EXIT_USAGE = 2  /* bad verb, flag or value; usage printed */
};

/* argv[0] is the verb name; argv[1..argc) its flags. */
int io_sim_verb_subset(int argc, char **argv);
int io_sim_verb_connections(int argc, char **argv);
int io_sim_verb_balance(int argc, char **argv);
int io_sim_verb_churn(int argc, char **argv);
int io_sim_verb_vnodes(int argc, char **argv);
int io_sim_verb_vdc(int argc, char **argv);
int io_sim_verb_hash(int argc, char **argv);
int io_sim_verb_placement(int argc, char **argv);
int io_sim_verb_peers(int argc, char **argv);
int io_sim_verb_deploy(int argc, char **argv);
int io_sim_verb_covers(int argc, char **argv);

/* Prints the full usage text to stderr. */
void io_sim_usage(void);

#ifdef __cplusplus
}
#endif

#endif /* APERTURE_INTEROP_SIM_H */
