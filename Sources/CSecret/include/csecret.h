// libsecret, opened with dlopen the first time a keyring is used rather than linked: the window and
// the agent read and keep sign-ins in a file wherever no Secret Service runs, and there the library
// and its start-up were paid at every launch for nothing (docs/performance.md). Like ccurl.h and
// csoup.h, no libsecret header is needed: the schema is opaque, GLib's types are passed as pointers.
#ifndef LATCHKEY_CSECRET_H
#define LATCHKEY_CSECRET_H

#include <stddef.h>

/// SECRET_SCHEMA_DONT_MATCH_NAME (libsecret's SecretSchemaFlags).
enum { CSECRET_SCHEMA_DONT_MATCH_NAME = 1 << 1 };

/// Opens libsecret-1.so.0; thread-safe. 0 on success, else a sentence in `error`.
int csecret_load(char *error, size_t error_size);

/// The functions below are libsecret's own, under their names with `c` in front; call them only after a
/// `csecret_load` that succeeded. `attributes` and `types` are GHashTable *, `error` a GError **.
void *csecret_schema_newv(const char *name, int flags, void *types);
void csecret_schema_unref(void *schema);
unsigned long csecret_schema_get_type(void);
char *csecret_password_lookupv_sync(const void *schema, void *attributes, void *cancellable, void **error);
int csecret_password_storev_sync(const void *schema, void *attributes, const char *collection, const char *label,
                                 const char *password, void *cancellable, void **error);
int csecret_password_clearv_sync(const void *schema, void *attributes, void *cancellable, void **error);
void csecret_password_free(char *password);
void csecret_service_disconnect(void);

#endif
