/* Counts a server's open connections through gRPC's public channelz API
 * (grpc_channelz_get_servers / grpc_channelz_get_server_sockets). */
#ifndef APERTURE_INTEROP_CHANNELZ_COUNT_H
#define APERTURE_INTEROP_CHANNELZ_COUNT_H

#include <stdint.h>

/* Connection tracker: remembers socket ids already seen so that a sampler
 * can count connections opened over time (sampled, so a connection that
 * opens and closes between two samples is missed). */
typedef struct channelz_tracker channelz_tracker;

/* Creates a tracker; NULL when out of memory. Free with
 * io_channelz_tracker_destroy. */
channelz_tracker *io_channelz_tracker_create(void);
void io_channelz_tracker_destroy(channelz_tracker *t);

/* Takes one sample: updates current, peak and opened. Returns 0, or -1 when t is
 * NULL, the process has no server or channelz answered unexpectedly. Not thread-safe: one sampler thread. */
int io_channelz_tracker_sample(channelz_tracker *t);

/* Latest figures (thread-safe reads of the last sample). */
long io_channelz_tracker_current(const channelz_tracker *t);
long io_channelz_tracker_peak(const channelz_tracker *t);
long io_channelz_tracker_opened(const channelz_tracker *t);

#endif
