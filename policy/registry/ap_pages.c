/* ap_pages: a 16-byte header (the mapping's size, or 0 for calloc)
 * before each block. */
#define _GNU_SOURCE

#include "policy/registry/ap_pages.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

typedef struct header {
  size_t mapped; /* the mapping's length; 0: from calloc */
  size_t pad;    /* keeps the block 16-byte aligned */
} header;

void *ap_pages_alloc(size_t bytes) {
  if (bytes > SIZE_MAX - sizeof(header)) return NULL;
  const size_t total = bytes + sizeof(header);
  header *h;
  if (bytes < AP_PAGES_MIN) {
    h = calloc(1, total);
    if (h == NULL) return NULL;
    h->mapped = 0;
  } else {
    /* Populated here: the status threads at the idle class fill these
     * blocks, and a page fault there would hold the process's memory map
     * lock while that thread waits for the CPU. */
    void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                   -1, 0);
    if (p == MAP_FAILED) return NULL;
    h = p; /* anonymous pages are zeroed */
    h->mapped = total;
  }
  return h + 1;
}

void ap_pages_free(void *block) {
  if (block == NULL) return;
  header *h = (header *)block - 1;
  if (h->mapped != 0) {
    munmap(h, h->mapped);
  } else {
    free(h);
  }
}
