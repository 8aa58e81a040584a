/* Child processes for the fleet runner and the interop tests: each child
 * runs in its own process group (so its whole tree can be signalled), dies
 * with its parent (PR_SET_PDEATHSIG), and has its stdout on a pipe that
 * the parent reads line by line (`listening HOST:PORT`). Every started
 * child is registered so io_proc_kill_all() can stop all of them from an
 * exit path or a signal handler. */
#ifndef APERTURE_INTEROP_PROC_H
#define APERTURE_INTEROP_PROC_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct proc proc;

/* Starts argv[0] (a path) with argv (NULL terminated). stderr goes to
 * `stderr_path` when not NULL (appended), else is inherited. Returns NULL
 * when argv is empty, the registry is full (256 children) or fork/exec
 * fails (message on stderr). */
proc *io_proc_start(char *const argv[], const char *stderr_path);

/* Reads stdout lines until one starts with `prefix`; copies the rest of
 * that line (without prefix and newline) to out. Returns 0, or -1 on
 * timeout, end of output or bad arguments. */
int io_proc_wait_line(proc *p, const char *prefix, int timeout_ms, char *out, size_t out_len);

/* Process id (also its process group id; the soak reads the child's
 * memory from /proc/PID); -1 for NULL. */
pid_t io_proc_pid(const proc *p);

/* Sends `sig` to the child's process group. Returns 0 or -1. */
int io_proc_signal(proc *p, int sig);

/* Waits up to timeout_ms for the child to exit. Returns 0 with its wait
 * status in *status (if not NULL), or -1 on timeout. */
int io_proc_wait(proc *p, int timeout_ms, int *status);

/* Stops the child (SIGTERM, then SIGKILL after grace_ms) if it still runs,
 * reaps it and frees p. Returns the wait status, or -1 if p is NULL. */
int io_proc_stop(proc *p, int grace_ms);

/* SIGKILLs the process groups of every registered child that is still
 * running. Async-signal-safe (kill(2) only). */
void io_proc_kill_all(void);

/* Finds an interop binary `name`, its path under interop/ (e.g.
 * "testing/server"), in the Bazel runfiles tree (RUNFILES_DIR, TEST_SRCDIR,
 * argv0.runfiles) or in the sibling package of argv0's.
 * Returns 0 with the path in out, or -1 when not found. */
int io_proc_find_binary(const char *argv0, const char *name, char *out, size_t out_len);

#ifdef __cplusplus
}
#endif

#endif
