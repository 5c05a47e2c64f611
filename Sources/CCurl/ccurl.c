#include "ccurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct {
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLcode (*global_init)(long);
} curl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[256];

#define LOOK_UP(field, symbol)                                                                   \
    do {                                                                                         \
        *(void **)(&curl.field) = dlsym(library, symbol);                                        \
        if (!curl.field) {                                                                       \
            snprintf(load_error, sizeof load_error, "libcurl.so.4 has no %s.", symbol);          \
            return;                                                                              \
        }                                                                                        \
    } while (0)

static void load_once(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_error, sizeof load_error, "Could not load libcurl.so.4 (%s).", dlerror());
        return;
    }
    LOOK_UP(easy_init, "curl_easy_init");
    LOOK_UP(easy_cleanup, "curl_easy_cleanup");
    LOOK_UP(easy_perform, "curl_easy_perform");
    LOOK_UP(easy_strerror, "curl_easy_strerror");
    LOOK_UP(easy_setopt, "curl_easy_setopt");
    LOOK_UP(easy_getinfo, "curl_easy_getinfo");
    LOOK_UP(slist_append, "curl_slist_append");
    LOOK_UP(slist_free_all, "curl_slist_free_all");
    LOOK_UP(global_init, "curl_global_init");
    CURLcode code = curl.global_init(CURL_GLOBAL_DEFAULT);
    if (code != CURLE_OK) {
        snprintf(load_error, sizeof load_error, "libcurl did not start: %s.", curl.easy_strerror(code));
        curl.easy_init = NULL;
    }
}

int ccurl_load(char *error, size_t error_size) {
    pthread_once(&once, load_once);
    if (curl.easy_init && curl.global_init) return 0;
    if (error && error_size) snprintf(error, error_size, "%s", load_error[0] ? load_error : "libcurl is not loaded.");
    return -1;
}

CURL *ccurl_easy_init(void) { return curl.easy_init(); }
void ccurl_easy_cleanup(CURL *handle) { curl.easy_cleanup(handle); }
CURLcode ccurl_easy_perform(CURL *handle) { return curl.easy_perform(handle); }
const char *ccurl_easy_strerror(CURLcode code) { return curl.easy_strerror(code); }

CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value) { return curl.easy_setopt(handle, option, value); }
CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode ccurl_setopt_pointer(CURL *handle, CURLoption option, void *value) { return curl.easy_setopt(handle, option, value); }
CURLcode ccurl_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback callback) {
    return curl.easy_setopt(handle, option, callback);
}
CURLcode ccurl_setopt_xferinfo_function(CURL *handle, curl_xferinfo_callback callback) {
    return curl.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}
CURLcode ccurl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *list) {
    return curl.easy_setopt(handle, option, list);
}

CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value) { return curl.easy_getinfo(handle, info, value); }

struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *string) { return curl.slist_append(list, string); }
void ccurl_slist_free_all(struct curl_slist *list) { curl.slist_free_all(list); }
