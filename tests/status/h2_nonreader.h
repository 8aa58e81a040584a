/*
 * h2_nonreader: a client that speaks just enough HTTP/2 to start
 * GetRingState calls on a status server and then never reads: no socket
 * read, no WINDOW_UPDATE, so the server can send each connection at most
 * its initial flow-control window and must hold the rest of every answer.
 * What a slow or hostile scraper does; for the status tests and the flood
 * program. Plain C on POSIX sockets.
 */
#ifndef APERTURE_TESTS_STATUS_H2_NONREADER_H
#define APERTURE_TESTS_STATUS_H2_NONREADER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The bytes that open an HTTP/2 connection and start `streams` calls of
 * `path` (e.g. "/aperture.v1.ApertureStatus/GetRingState"), each with the
 * `len` request bytes at `request` as its one message: the connection
 * preface, an empty SETTINGS frame and its ACK for the server's, then a
 * HEADERS and a DATA frame (END_STREAM) a call. Written into `buf`; returns
 * their length, 0 when `cap` is too small or an argument is bad. */
size_t h2_nonreader_burst(const char *path, const uint8_t *request, size_t len,
                          unsigned streams, uint8_t *buf, size_t cap);

/* A TCP connection to 127.0.0.1:`port` with `bytes` written to it, never
 * read from: its descriptor, or -1 when it cannot be made or the server
 * closed it before every byte was written. */
int h2_nonreader_connect(int port, const uint8_t *bytes, size_t len);

/* 1 when the server has closed the connection (EOF or reset); reads and
 * drops what the server sent, without blocking. */
int h2_nonreader_closed_by_server(int fd);

#ifdef __cplusplus
}
#endif

#endif /* APERTURE_TESTS_STATUS_H2_NONREADER_H */
