#define _GNU_SOURCE  // RTLD_DEFAULT
#include "csoup.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The few GLib and libsoup types used, declared here so that the app needs no
// libsoup headers at build time and no libsoup at launch.
typedef struct {
    unsigned domain;
    int code;
    char *message;
} GErrorLayout;
typedef struct GSListLayout {
    void *data;
    struct GSListLayout *next;
} GSListLayout;
typedef void (*ServerCallback)(void *server, void *message, const char *path, void *query, void *user_data);

enum { LISTEN_IPV4_ONLY = 1 << 1, MEMORY_COPY = 2 };

static struct {
    void *(*server_new)(const char *first, ...);
    void (*add_handler)(void *server, const char *path, ServerCallback, void *data, void (*destroy)(void *));
    int (*listen_local)(void *server, unsigned port, int options, GErrorLayout **error);
    GSListLayout *(*get_uris)(void *server);
    void (*disconnect)(void *server);
    const char *(*message_get_method)(void *message);
    void *(*message_get_uri)(void *message);
    void (*message_set_status)(void *message, unsigned status, const char *reason);
    void (*message_set_response)(void *message, const char *type, int use, const char *body, size_t length);
    void *(*message_get_response_headers)(void *message);
    void (*headers_replace)(void *headers, const char *name, const char *value);
    char *(*uri_to_string)(void *uri);
    int (*uri_get_port)(void *uri);
    void (*uri_unref)(void *uri);
    void (*slist_free)(GSListLayout *list);
    void (*free)(void *pointer);
    void (*error_free)(GErrorLayout *error);
    void (*object_unref)(void *object);
    unsigned long (*signal_connect)(void *instance, const char *signal, void (*handler)(void), void *data, void *destroy, int flags);
    unsigned (*idle_add)(int (*function)(void *), void *data);
    unsigned (*timeout_add)(unsigned interval, int (*function)(void *), void *data);
    int (*source_remove)(unsigned id);
    void *(*get_request_body)(void *message);
    void (*body_set_accumulate)(void *body, int accumulate);
    unsigned (*handlers_disconnect_matched)(void *instance, int mask, unsigned id, unsigned detail, void *closure,
                                            void *function, void *data);
    void (*object_set_data)(void *object, const char *key, void *data);
    void *(*object_get_data)(void *object, const char *key);
    GSListLayout *(*get_listeners)(void *server);
    int (*socket_shutdown)(void *socket, int shutdown_read, int shutdown_write, GErrorLayout **error);
} soup;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[256];
static int loaded;

// Through GModule, not dlopen: libsoup's constructor opens modules of its own
// (g_module_open) while the loader's lock is held, and a sign-in library being
// opened with g_module_open on another thread holds GModule's lock and waits
// for the loader's: the two would wait on each other (docs/developing.md, Notes for developers).
static void *(*module_open)(const char *name, int flags);
static int (*module_symbol)(void *module, const char *name, void **symbol);
static const char *(*module_error)(void);
static void *library;

#define LOOK_UP(field, symbol)                                                                   \
    do {                                                                                         \
        if (!module_symbol(library, symbol, (void **)&soup.field) || !soup.field) {              \
            snprintf(load_error, sizeof load_error, "libsoup-3.0.so.0 has no %s.", symbol);      \
            return;                                                                              \
        }                                                                                        \
    } while (0)

static void load_once(void) {
    *(void **)(&module_open) = dlsym(RTLD_DEFAULT, "g_module_open");
    *(void **)(&module_symbol) = dlsym(RTLD_DEFAULT, "g_module_symbol");
    *(void **)(&module_error) = dlsym(RTLD_DEFAULT, "g_module_error");
    if (!module_open || !module_symbol || !module_error) {
        snprintf(load_error, sizeof load_error, "GModule is not loaded in this process.");
        return;
    }
    library = module_open("libsoup-3.0.so.0", 1 << 1 /* G_MODULE_BIND_LOCAL */);
    if (!library) {
        snprintf(load_error, sizeof load_error, "Could not load libsoup-3.0.so.0 (%s).", module_error());
        return;
    }
    LOOK_UP(server_new, "soup_server_new");
    LOOK_UP(add_handler, "soup_server_add_handler");
    LOOK_UP(listen_local, "soup_server_listen_local");
    LOOK_UP(get_uris, "soup_server_get_uris");
    LOOK_UP(disconnect, "soup_server_disconnect");
    LOOK_UP(message_get_method, "soup_server_message_get_method");
    LOOK_UP(message_get_uri, "soup_server_message_get_uri");
    LOOK_UP(message_set_status, "soup_server_message_set_status");
    LOOK_UP(message_set_response, "soup_server_message_set_response");
    LOOK_UP(message_get_response_headers, "soup_server_message_get_response_headers");
    LOOK_UP(headers_replace, "soup_message_headers_replace");
    // GLib's own, found through libsoup's dependencies (the app has them loaded already).
    LOOK_UP(uri_to_string, "g_uri_to_string");
    LOOK_UP(uri_get_port, "g_uri_get_port");
    LOOK_UP(uri_unref, "g_uri_unref");
    LOOK_UP(slist_free, "g_slist_free");
    LOOK_UP(free, "g_free");
    LOOK_UP(error_free, "g_error_free");
    LOOK_UP(object_unref, "g_object_unref");
    LOOK_UP(signal_connect, "g_signal_connect_data");
    LOOK_UP(idle_add, "g_idle_add");
    LOOK_UP(timeout_add, "g_timeout_add");
    LOOK_UP(source_remove, "g_source_remove");
    LOOK_UP(get_request_body, "soup_server_message_get_request_body");
    LOOK_UP(body_set_accumulate, "soup_message_body_set_accumulate");
    LOOK_UP(handlers_disconnect_matched, "g_signal_handlers_disconnect_matched");
    LOOK_UP(object_set_data, "g_object_set_data");
    LOOK_UP(object_get_data, "g_object_get_data");
    LOOK_UP(get_listeners, "soup_server_get_listeners");
    LOOK_UP(socket_shutdown, "g_socket_shutdown");
    loaded = 1;
}

int csoup_load(char *error, size_t error_size) {
    pthread_once(&once, load_once);
    if (loaded) return 0;
    if (error && error_size) snprintf(error, error_size, "%s", load_error[0] ? load_error : "libsoup is not loaded.");
    return -1;
}

struct csoup_listener {
    void *server;
    csoup_request_callback callback;
    void *context;
    /// Requests read whole but not yet answered to the end (or aborted).
    int in_flight;
    int close_requested;
    unsigned close_source;
};

static void handle(void *server, void *message, const char *path, void *query, void *user_data) {
    (void)server, (void)path, (void)query;
    csoup_listener *listener = user_data;
    if (listener->close_requested) {
        // Closing: the owner may be gone already, so nothing is handed on.
        csoup_respond(message, 404, "<!doctype html><title>Not found</title><p>There is nothing here.</p>");
        return;
    }
    char *uri = soup.uri_to_string(soup.message_get_uri(message));
    listener->callback(listener->context, message, soup.message_get_method(message), uri ? uri : "");
    soup.free(uri);
}

static void finish(csoup_listener *listener) {
    if (listener->close_source) soup.source_remove(listener->close_source);
    // Each listening socket shut down before it is closed: a close ends it only when no other
    // descriptor of it is left, and a program another thread is starting holds one until its exec.
    // Meanwhile the port would take connections nobody accepts, each reset when that copy goes.
    // Shut down, it refuses them at once (Linux stops a listening socket on SHUT_RD).
    GSListLayout *sockets = soup.get_listeners(listener->server);
    for (GSListLayout *item = sockets; item; item = item->next) soup.socket_shutdown(item->data, 1, 1, NULL);
    soup.slist_free(sockets);
    // Disconnecting aborts what is in flight: no handler of ours may run on a freed listener.
    soup.handlers_disconnect_matched(listener->server, 1 << 4 /* G_SIGNAL_MATCH_DATA */, 0, 0, NULL, NULL, listener);
    soup.disconnect(listener->server);
    soup.object_unref(listener->server);
    free(listener);
}

static int close_now(void *data) {
    csoup_listener *listener = data;
    listener->close_source = 0;  // this source ends by returning 0; finish must not remove it
    finish(listener);
    return 0;
}

// libsoup says a request started when it accepts a connection, before a byte is read, and says
// it ended only for one whose request line it read: a browser's speculative connection that
// never sends anything starts a request that never ends. So a request counts as in flight from
// when it has been read whole (its answer is then being made or written) to when it ends.
static const char counted[] = "latchkey-csoup-in-flight";

static void request_started(void *server, void *message, void *data) {
    (void)server, (void)data;
    // A body is never needed (the redirect is a GET): drop its chunks as they come
    // rather than hold a stranger's gigabytes in memory.
    soup.body_set_accumulate(soup.get_request_body(message), 0);
}

static void request_read(void *server, void *message, void *data) {
    (void)server;
    ((csoup_listener *)data)->in_flight++;
    soup.object_set_data(message, counted, (void *)1);
}

// A response written to the end, or a request that failed: once none is left
// after a close was asked for, close (from an idle turn, not inside libsoup's I/O).
static void request_ended(void *server, void *message, void *data) {
    (void)server;
    csoup_listener *listener = data;
    if (!soup.object_get_data(message, counted)) return;  // never read whole: never counted
    soup.object_set_data(message, counted, NULL);
    if (listener->in_flight > 0) listener->in_flight--;
    if (listener->close_requested && listener->in_flight == 0) {
        if (listener->close_source) soup.source_remove(listener->close_source);
        listener->close_source = soup.idle_add(close_now, listener);
    }
}

csoup_listener *csoup_listen(csoup_request_callback callback, void *context, unsigned *port, int *taken, char *error, size_t error_size) {
    unsigned wanted = *port;
    *taken = 0;
    if (csoup_load(error, error_size) != 0) return NULL;
    csoup_listener *listener = calloc(1, sizeof *listener);
    if (!listener) {
        snprintf(error, error_size, "out of memory.");
        return NULL;
    }
    listener->callback = callback;
    listener->context = context;
    // No "Server" header: the page needs to tell nobody what answers it.
    listener->server = soup.server_new("server-header", NULL, NULL);
    if (!listener->server) {
        snprintf(error, error_size, "libsoup could not make a server.");
        free(listener);
        return NULL;
    }
    // NULL path: every request comes here, so that anything but the redirect gets a 404 of ours.
    soup.add_handler(listener->server, NULL, handle, listener, NULL);
    soup.signal_connect(listener->server, "request-started", (void (*)(void))request_started, listener, NULL, 0);
    soup.signal_connect(listener->server, "request-read", (void (*)(void))request_read, listener, NULL, 0);
    soup.signal_connect(listener->server, "request-finished", (void (*)(void))request_ended, listener, NULL, 0);
    soup.signal_connect(listener->server, "request-aborted", (void (*)(void))request_ended, listener, NULL, 0);
    GErrorLayout *failure = NULL;
    if (!soup.listen_local(listener->server, wanted, LISTEN_IPV4_ONLY, &failure)) {
        // G_IO_ERROR_ADDRESS_IN_USE (33) in GIO's domain: another program has the port.
        *taken = wanted != 0 && failure && failure->code == 33;
        snprintf(error, error_size, "could not listen on 127.0.0.1%s%.0u (%s).", wanted ? ":" : "", wanted,
                 failure ? failure->message : "unknown error");
        if (failure) soup.error_free(failure);
        soup.object_unref(listener->server);
        free(listener);
        return NULL;
    }
    *port = 0;
    GSListLayout *uris = soup.get_uris(listener->server);
    for (GSListLayout *item = uris; item; item = item->next) {
        if (*port == 0) *port = (unsigned)soup.uri_get_port(item->data);
        soup.uri_unref(item->data);
    }
    soup.slist_free(uris);
    if (*port == 0) {
        snprintf(error, error_size, "libsoup listened but named no port.");
        csoup_close(listener);
        return NULL;
    }
    return listener;
}

void csoup_respond(void *message, unsigned status, const char *html) {
    void *headers = soup.message_get_response_headers(message);
    soup.headers_replace(headers, "Cache-Control", "no-store");
    soup.headers_replace(headers, "Referrer-Policy", "no-referrer");
    soup.headers_replace(headers, "X-Content-Type-Options", "nosniff");
    soup.headers_replace(headers, "Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'");
    // One request per connection: nothing lingers once the answer is written.
    soup.headers_replace(headers, "Connection", "close");
    soup.message_set_status(message, status, NULL);
    soup.message_set_response(message, "text/html; charset=utf-8", MEMORY_COPY, html, strlen(html));
}

void csoup_close(csoup_listener *listener) {
    if (!listener || listener->close_requested) return;
    listener->close_requested = 1;
    listener->callback = NULL;
    listener->context = NULL;
    if (listener->in_flight == 0) {
        finish(listener);
        return;
    }
    // A page is still being written (the browser's "you can close this tab"):
    // let it finish, but give a browser that never reads it one second at most.
    listener->close_source = soup.timeout_add(1000, close_now, listener);
}
