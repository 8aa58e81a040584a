/* A bounded min-heap of items due at a monotonic time; lets one completion
 * queue thread delay answers (rpc-behavior sleep-N, extra latency) without
 * blocking other calls. Not thread-safe: each worker owns its queue. */
#ifndef APERTURE_INTEROP_DELAY_QUEUE_H
#define APERTURE_INTEROP_DELAY_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct delay_queue delay_queue;

/* Creates a queue holding at most `capacity` (> 0) items; NULL on bad
 * capacity or out of memory. Free with io_delay_queue_destroy (items are not
 * owned by the queue). */
delay_queue *io_delay_queue_create(size_t capacity);
void io_delay_queue_destroy(delay_queue *q);

/* Adds `item` due at `due_ns`. Returns 0, or -1 when the queue is full or
 * arguments are invalid. */
int io_delay_queue_push(delay_queue *q, int64_t due_ns, void *item);

/* Removes and returns the earliest item if it is due at or before now_ns;
 * otherwise returns NULL. */
void *io_delay_queue_pop_due(delay_queue *q, int64_t now_ns);

/* Removes and returns the earliest item regardless of time (NULL if empty). */
void *io_delay_queue_pop_any(delay_queue *q);

/* Due time of the earliest item, or INT64_MAX when empty. */
int64_t io_delay_queue_next_due(const delay_queue *q);

size_t io_delay_queue_size(const delay_queue *q);

/* CLOCK_MONOTONIC now in nanoseconds. */
int64_t io_delay_queue_now_ns(void);

#ifdef __cplusplus
}
#endif

#endif
