// The C interface of libLatchkeyWebSignIn.so, the sign-in window with its
// WebKitGTK view. The app opens the library with dlopen only when a sign-in is
// near, so a launch never pays for linking WebKit. Both sides import this one
// header: the library builds its table from these types, the app calls through
// them, and the compiler checks each side against it.
//
// Only C types cross: pointers, strings, an enum and function pointers; no
// Swift type is shared between the app and the library.
#ifndef LATCHKEY_WEB_SIGN_IN_H
#define LATCHKEY_WEB_SIGN_IN_H

#include <stdint.h>

// Bumped whenever anything below changes shape or meaning. The app refuses a
// library built against another version (one left over from an older install).
#define LATCHKEY_WEB_SIGN_IN_ABI_VERSION 1

// The one symbol the app looks up.
#define LATCHKEY_WEB_SIGN_IN_ENTRY_POINT "latchkey_web_sign_in_interface"

typedef enum LatchkeySignInEvent {
    // The person closed the window or pressed Cancel.
    LatchkeySignInEventCancelled = 0,
    // The page could not go on; the message says why, in a sentence.
    LatchkeySignInEventFailed = 1,
    // A page finished loading.
    LatchkeySignInEventPageLoaded = 2,
} LatchkeySignInEvent;

// Answers whether a navigation (address, HTTP method) is the redirect URI;
// nonzero means the window ignores it, and it never loads.
typedef int32_t (*LatchkeyNavigationCallback)(void *context, const char *uri, const char *method);

// Reports what happened in the window; `message` is set for Failed only.
typedef void (*LatchkeyEventCallback)(void *context, LatchkeySignInEvent event, const char *message);

typedef struct LatchkeyWebSignInInterface {
    // LATCHKEY_WEB_SIGN_IN_ABI_VERSION of the library: check it before any other field.
    int32_t abi_version;
    // Makes a sign-in window, not yet shown, with its web process started on a blank page.
    void *(*prepare)(void);
    // Shows a prepared window over `parent` (a GtkWindow *, may be NULL) and loads `url`.
    void (*present)(void *window, void *parent, const char *title, const char *url, void *context,
                    LatchkeyNavigationCallback navigation, LatchkeyEventCallback event);
    // Closes the window; no callback is called after this returns.
    void (*close)(void *window);
    // WebKitGTK's run-time version as major * 10000 + minor * 100 + micro.
    int32_t (*webkit_version)(void);
} LatchkeyWebSignInInterface;

// What LATCHKEY_WEB_SIGN_IN_ENTRY_POINT names: the library's table.
typedef const LatchkeyWebSignInInterface *(*LatchkeyWebSignInEntryPoint)(void);

#endif
