/* Where the fleet's processes run and which address each has.
 *
 * Every scenario takes its servers' and clients' addresses from here and
 * starts their processes through here (fleet_server.h and fleet_client.h
 * do), and gets its DNS server from the same network (fleet_dns.h), so
 * that a different network changes all of them at once. A runner has one
 * network, chosen before its first process starts. Today that is the
 * loopback network: every process in the runner's own network namespace,
 * servers on 127.0.0.1 or on 127.0.0.(10 + slot), dnsmasq on 127.0.0.1.
 * The netns network (fleet_netns.h) gives each process a namespace of its
 * own: its addresses name the namespaces, start runs a process in the one
 * its address names, dns is a dnsmasq the namespaces reach, dial reaches a
 * process's own loopback (its status server), close tears them down; no
 * scenario changes.
 * This layer also keeps the hosts a run used (io_fleet_net_hosts, for the
 * report): every server slot and client index where a process started,
 * including the addresses it picks for clients started with no address
 * (the lowest client index whose last process has exited). */
#ifndef APERTURE_INTEROP_FLEET_NET_H
#define APERTURE_INTEROP_FLEET_NET_H

#include <stddef.h>

#include "interop/common/proc.h"
#include "interop/fleet/fleet_dns.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLEET_NET_HOST_LEN 32 /* room for any address written below */

/* A network. Every field but close is required. */
typedef struct fleet_net_ops {
  const char *name; /* "loopback" */
  /* Writes the address of server slot `slot` (s<slot>, a spare or a
   * replacement: the slot, not the process, owns the address, so a server
   * restarted in its slot keeps it). own_address 1: an address no other
   * slot has, so that servers can share one port and a DNS answer can
   * tell them apart; 0: any address the clients reach (the servers then
   * listen on ports of their own). Returns 0, or -1 on a bad slot. */
  int (*server_host)(int slot, int own_address, char *out, size_t len);
  /* Writes client `index`'s own address: its identity in a peer list,
   * and where it runs. Returns 0, or -1 on a bad index. */
  int (*client_host)(int index, char *out, size_t len);
  /* Starts argv as the process at address `host` (one of the above; NULL:
   * a client whose address no one names, placed by the network), stderr
   * to log (NULL: inherited), as io_proc_start. */
  proc *(*start)(const char *host, char *const argv[], const char *log);
  /* The DNS server its clients ask. */
  const fleet_dns_ops *dns;
  /* Optional: undoes what the network set up; io_fleet_net_close. Must
   * be async-signal-safe (it also runs from the runner's signal handler). */
  void (*close)(void);
  /* Optional: a TCP connection made from inside `host`'s network to
   * `ip`:`port` (its own loopback: 127.0.0.1); returns the connected
   * socket, or -1. NULL: the runner connects from its own namespace. */
  int (*dial)(const char *host, const char *ip, int port);
  /* 1: every address is an interface address of its own process's host
   * (a client finds its own from its interfaces: peerSelf is not needed);
   * 0: addresses are labels. */
  int own_interfaces;
} fleet_net_ops;

/* A host a run used: "s<slot>" or "c<index>" and its address. */
typedef struct fleet_net_host {
  char name[16];
  char address[FLEET_NET_HOST_LEN];
} fleet_net_host;

/* Every process in the runner's namespace: server_host is 127.0.0.1, or
 * 127.0.0.(10 + slot) with own_address (slot < 245); client_host is
 * 127.0.1.(index + 1) (index < 254), a label only (the client connects
 * from 127.0.0.1); start is io_proc_start wherever the address; DNS is
 * dnsmasq on 127.0.0.1 (io_fleet_dns_dnsmasq_ops). */
extern const fleet_net_ops io_fleet_net_loopback;

/* Makes `ops` the runner's network (NULL: loopback, the default). Returns
 * 0, or -1 when a required operation is missing (network unchanged). */
int io_fleet_net_use(const fleet_net_ops *ops);

/* The runner's network's name. */
const char *io_fleet_net_name(void);

/* The runner's network's operations, as described in fleet_net_ops;
 * out must hold FLEET_NET_HOST_LEN bytes. */
int io_fleet_net_server_host(int slot, int own_address, char *out, size_t len);
int io_fleet_net_client_host(int index, char *out, size_t len);
proc *io_fleet_net_start(const char *host, char *const argv[], const char *log);
const fleet_dns_ops *io_fleet_net_dns(void);

/* A TCP connection to ip:port made from where process p runs (its
 * network's dial), or from the runner's namespace on a network without
 * dial or for a process it did not start. Returns the connected socket
 * (the caller owns it), or -1. */
int io_fleet_net_dial(const proc *p, const char *ip, int port);

/* The network's own_interfaces (see fleet_net_ops). */
int io_fleet_net_own_interfaces(void);

/* 1 when the runner reaches the processes' addresses from its own
 * namespace (a network without dial: loopback), else 0. */
int io_fleet_net_direct(void);

/* The hosts used so far (see above), servers by slot then clients by
 * index, at most max of them written to out; returns how many there are. */
size_t io_fleet_net_hosts(fleet_net_host *out, size_t max);

/* Undoes what the network set up (nothing on loopback); for the runner's
 * exit paths and signal handler, after its processes are stopped.
 * Async-signal-safe; a second call does nothing. */
void io_fleet_net_close(void);

#ifdef __cplusplus
}
#endif

#endif
