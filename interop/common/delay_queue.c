#define _POSIX_C_SOURCE 200809L
#include "interop/common/delay_queue.h"

#include <stdlib.h>
#include <time.h>

typedef struct entry {
  int64_t due_ns;
  void *item;
} entry;

struct delay_queue {
  entry *heap;
  size_t size, capacity;
};

delay_queue *io_delay_queue_create(size_t capacity) {
  if (capacity == 0) return NULL;
  delay_queue *q = calloc(1, sizeof(*q));
  if (q == NULL) return NULL;
  q->heap = calloc(capacity, sizeof(entry));
  if (q->heap == NULL) {
    free(q);
    return NULL;
  }
  q->capacity = capacity;
  return q;
}

void io_delay_queue_destroy(delay_queue *q) {
  if (q == NULL) return;
  free(q->heap);
  free(q);
}

int io_delay_queue_push(delay_queue *q, int64_t due_ns, void *item) {
  if (q == NULL || q->size == q->capacity) return -1;
  size_t i = q->size++;
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (q->heap[parent].due_ns <= due_ns) break;
    q->heap[i] = q->heap[parent];
    i = parent;
  }
  q->heap[i].due_ns = due_ns;
  q->heap[i].item = item;
  return 0;
}

void *io_delay_queue_pop_any(delay_queue *q) {
  if (q == NULL || q->size == 0) return NULL;
  void *top = q->heap[0].item;
  entry last = q->heap[--q->size];
  size_t i = 0;
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= q->size) break;
    if (child + 1 < q->size && q->heap[child + 1].due_ns < q->heap[child].due_ns) child++;
    if (last.due_ns <= q->heap[child].due_ns) break;
    q->heap[i] = q->heap[child];
    i = child;
  }
  if (q->size > 0) q->heap[i] = last;
  return top;
}

void *io_delay_queue_pop_due(delay_queue *q, int64_t now_ns) {
  if (q == NULL || q->size == 0 || q->heap[0].due_ns > now_ns) return NULL;
  return io_delay_queue_pop_any(q);
}

int64_t io_delay_queue_next_due(const delay_queue *q) {
  return (q == NULL || q->size == 0) ? INT64_MAX : q->heap[0].due_ns;
}

size_t io_delay_queue_size(const delay_queue *q) { return q ? q->size : 0; }

int64_t io_delay_queue_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
