#include "csecret.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct {
    void *(*schema_newv)(const char *, int, void *);
    void (*schema_unref)(void *);
    unsigned long (*schema_get_type)(void);
    char *(*password_lookupv_sync)(const void *, void *, void *, void **);
    int (*password_storev_sync)(const void *, void *, const char *, const char *, const char *, void *, void **);
    int (*password_clearv_sync)(const void *, void *, void *, void **);
    void (*password_free)(char *);
    void (*service_disconnect)(void);
} secret;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[256];
static int loaded;

#define LOOK_UP(field, symbol)                                                                   \
    do {                                                                                         \
        *(void **)(&secret.field) = dlsym(library, symbol);                                      \
        if (!secret.field) {                                                                     \
            snprintf(load_error, sizeof load_error, "libsecret-1.so.0 has no %s.", symbol);      \
            return;                                                                              \
        }                                                                                        \
    } while (0)

static void load_once(void) {
    // Never closed: libsecret keeps a connection to the Secret Service and registers GObject types.
    void *library = dlopen("libsecret-1.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_error, sizeof load_error, "Could not load libsecret-1.so.0 (%s).", dlerror());
        return;
    }
    LOOK_UP(schema_newv, "secret_schema_newv");
    LOOK_UP(schema_unref, "secret_schema_unref");
    LOOK_UP(schema_get_type, "secret_schema_get_type");
    LOOK_UP(password_lookupv_sync, "secret_password_lookupv_sync");
    LOOK_UP(password_storev_sync, "secret_password_storev_sync");
    LOOK_UP(password_clearv_sync, "secret_password_clearv_sync");
    LOOK_UP(password_free, "secret_password_free");
    LOOK_UP(service_disconnect, "secret_service_disconnect");
    loaded = 1;
}

int csecret_load(char *error, size_t error_size) {
    pthread_once(&once, load_once);
    if (loaded) return 0;
    if (error && error_size) snprintf(error, error_size, "%s", load_error[0] ? load_error : "libsecret is not loaded.");
    return -1;
}

void *csecret_schema_newv(const char *name, int flags, void *types) { return secret.schema_newv(name, flags, types); }
void csecret_schema_unref(void *schema) { secret.schema_unref(schema); }
unsigned long csecret_schema_get_type(void) { return secret.schema_get_type(); }
char *csecret_password_lookupv_sync(const void *schema, void *attributes, void *cancellable, void **error) {
    return secret.password_lookupv_sync(schema, attributes, cancellable, error);
}
int csecret_password_storev_sync(const void *schema, void *attributes, const char *collection, const char *label,
                                 const char *password, void *cancellable, void **error) {
    return secret.password_storev_sync(schema, attributes, collection, label, password, cancellable, error);
}
int csecret_password_clearv_sync(const void *schema, void *attributes, void *cancellable, void **error) {
    return secret.password_clearv_sync(schema, attributes, cancellable, error);
}
void csecret_password_free(char *password) { secret.password_free(password); }
void csecret_service_disconnect(void) { secret.service_disconnect(); }
