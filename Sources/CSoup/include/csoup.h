// libsoup's HTTP server, opened with dlopen on first use rather than linked: the
// loopback listener that receives a sign-in's redirect from the system browser
// (RFC 8252 §7.3). Like libcurl (see ccurl.h), linking it would put libsoup and
// its dependencies into every launch; only a sign-in through the browser loads it.
//
// Everything here runs on the thread that owns the GLib main context the
// listener was opened on (GTK's): requests are answered from that loop.
#ifndef LATCHKEY_CSOUP_H
#define LATCHKEY_CSOUP_H

#include <stddef.h>

typedef struct csoup_listener csoup_listener;

/// One request to the listener, answered with `csoup_respond` before the callback returns.
/// `uri` is the whole request URI as the client named it (`http://HOST:PORT/path?query`).
typedef void (*csoup_request_callback)(void *context, void *message, const char *method, const char *uri);

/// Opens libsoup-3.0.so.0; thread-safe. 0 on success, else a sentence in `error`.
int csoup_load(char *error, size_t error_size);

/// Listens on 127.0.0.1 on `*port`, or (0) on a port the kernel picks, written back to `port`.
/// NULL on failure, with a sentence in `error`; `*taken` is then 1 when the port asked for is in use.
csoup_listener *csoup_listen(csoup_request_callback callback, void *context, unsigned *port, int *taken, char *error, size_t error_size);

/// Answers the request: status, an HTML body (copied), and headers that keep it
/// out of caches, referrers and scripts.
void csoup_respond(void *message, unsigned status, const char *html);

/// Stops handing requests to the callback (from now on each gets a 404) and frees
/// the listener. With no request in flight the port is
/// closed on return; otherwise once the last response is written (at most 1 s later).
/// Never call it from the request callback.
void csoup_close(csoup_listener *listener);

#endif
