/* What the interop client sends on each call, as gRPC's interop clients
 * spell it on the command line:
 *   --rpc UnaryCall,EmptyCall       the methods, used in turn
 *   --metadata KEY:VALUE            sent on every call (repeatable; a
 *   --metadata RPC:KEY:VALUE        comma-separated list is accepted too;
 *                                   RPC limits an entry to one method)
 * so request affinity keys and method mixes can be driven from outside. */
#ifndef APERTURE_INTEROP_CALL_OPTIONS_H
#define APERTURE_INTEROP_CALL_OPTIONS_H

#include <stddef.h>

#include <grpc/grpc.h>

#include "interop/testing/client_stats.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CALL_OPTIONS_MAX_METADATA 16

typedef struct call_metadata {
  int rpc; /* -1: every method, else a client_method */
  char key[64];
  char value[192];
} call_metadata;

typedef struct call_options {
  client_method rpcs[8]; /* the methods in turn */
  size_t n_rpcs;
  call_metadata md[CALL_OPTIONS_MAX_METADATA];
  size_t n_md;
} call_options;

/* Empty options: no metadata, UnaryCall only. */
void io_call_options_init(call_options *o);

/* Parses a --rpc value ("UnaryCall,EmptyCall"); replaces the list.
 * Returns 0, or -1 with a message naming --rpc on stderr. */
int io_call_options_set_rpcs(call_options *o, const char *text);

/* Parses a --metadata value (KEY:VALUE or RPC:KEY:VALUE, comma-separated
 * entries) and appends it. Keys must be legal lower-case header names, not
 * grpc-*. Returns 0, or -1 with a message naming --metadata on stderr. */
int io_call_options_add_metadata(call_options *o, const char *text);

/* The method of call number n (the list in turn). */
client_method io_call_options_rpc(const call_options *o, long n);

/* Fills `out` (capacity cap) with the metadata for method m; the slices
 * point into `o` (static, nothing to unref) and live as long as o does.
 * Returns the count. */
size_t io_call_options_metadata(const call_options *o, client_method m, grpc_metadata *out,
                             size_t cap);

/* "UnaryCall" / "EmptyCall". */
const char *io_call_options_rpc_name(client_method m);

#ifdef __cplusplus
}
#endif

#endif
