#ifndef CGio_SHIM_H
#define CGio_SHIM_H
#include <gio/gio.h>
#include <glib-unix.h>

/* G_VARIANT_TYPE_* are macros, invisible to Swift: the few types the D-Bus calls need. */
static inline const GVariantType *latchkey_variant_type_string(void) { return G_VARIANT_TYPE_STRING; }
static inline const GVariantType *latchkey_variant_type_variant(void) { return G_VARIANT_TYPE_VARIANT; }
static inline const GVariantType *latchkey_variant_type_string_to_variant(void) { return G_VARIANT_TYPE ("{sv}"); }

/* g_warning is a macro: a warning in GLib's log (fatal under G_DEBUG=fatal-warnings, as the e2e runs the app). */
static inline void latchkey_warning(const char *message) { g_warning ("%s", message); }
#endif
