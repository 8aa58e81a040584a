/* What the interop client sends on each call, as gRPC's interop clients
 * spell it on the command line:
 *   --rpc UnaryCall,EmptyCall       the methods, used in turn
 *   --metadata KEY:VALUE            sent on every call (repeatable; a
 *   --metadata RPC:KEY:VALUE        comma-separated list is accepted too;
 *                                   RPC limits an entry to one method)
 *   --unique-metadata KEY:PREFIX    KEY on every call with a value never
 *                                   sent before: PREFIX + the call number
 *                                   (floods a sticky-affinity table)
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
  char unique_key[64];     /* --unique-metadata; "" when not set */
  char unique_prefix[160];
} call_options;

/* Longest value --unique-metadata produces: prefix + up to 20 digits. */
#define CALL_OPTIONS_UNIQUE_VALUE_MAX (160 + 20)

/* Empty options: no metadata, UnaryCall only. */
void io_call_options_init(call_options *o);

/* Parses a --rpc value ("UnaryCall,EmptyCall"); replaces the list.
 * Returns 0, or -1 with a message naming --rpc on stderr. */
int io_call_options_set_rpcs(call_options *o, const char *text);

/* Parses a --metadata value (KEY:VALUE or RPC:KEY:VALUE, comma-separated
 * entries) and appends it. Keys must be legal lower-case header names, not
 * grpc-*. Returns 0, or -1 with a message naming --metadata on stderr. */
int io_call_options_add_metadata(call_options *o, const char *text);

/* Parses a --unique-metadata value (KEY:PREFIX; the key as for
 * --metadata, the prefix up to 159 bytes, may be empty); replaces an
 * earlier one. Returns 0, or -1 with a message naming the flag on stderr. */
int io_call_options_set_unique_metadata(call_options *o, const char *text);

/* For call number n: when --unique-metadata is set, writes PREFIX<n> into
 * out (capacity len, at least CALL_OPTIONS_UNIQUE_VALUE_MAX + 1) and
 * returns 1; otherwise returns 0. */
int io_call_options_unique_value(const call_options *o, long n, char *out, size_t len);

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
