/*
 * ap_pages: zeroed memory for the large, short-lived blocks of a status
 * query (the page of endpoints it copies, its messages, its packed
 * answer) that goes back to the system when freed. malloc keeps what a
 * thread frees in that thread's arena, up to its trim threshold (which
 * grows to twice the largest block it ever mapped), and the status
 * threads come and go: the blocks of queries over time would otherwise
 * stay in the process as free memory spread over many arenas, long after
 * the answer budget gave their bytes back.
 */
#ifndef AP_PAGES_H
#define AP_PAGES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Blocks of at least this size get pages of their own (mmap); smaller
 * ones come from calloc. */
#define AP_PAGES_MIN ((size_t)64 << 10)

/* `bytes` of zeroed memory (NULL when out of memory or bytes overflows
 * with its header). Free with ap_pages_free(). */
void *ap_pages_alloc(size_t bytes);

/* Frees a block of ap_pages_alloc() (NULL is ignored). */
void ap_pages_free(void *block);

#ifdef __cplusplus
}
#endif

#endif /* AP_PAGES_H */
