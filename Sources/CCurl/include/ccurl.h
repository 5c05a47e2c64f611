// libcurl, opened with dlopen on first use rather than linked.
//
// Linking libcurl (directly, or through FoundationNetworking) puts it and its
// ~30 dependencies into every process's global symbol scope at start-up, and
// every symbol GTK's later dlopens resolve walks that longer list: the app
// started ~28 ms slower for it (see docs/performance.md). The types and
// constants come from curl's own header; the functions are looked up at
// run time. curl_easy_setopt and curl_easy_getinfo are variadic, so each use
// gets a typed wrapper that Swift can call.
#ifndef LATCHKEY_CCURL_H
#define LATCHKEY_CCURL_H

#include <curl/curl.h>
#include <stddef.h>

/// Opens libcurl.so.4 and runs curl_global_init once per process; thread-safe.
/// Returns 0 on success; otherwise a sentence is written to `error`.
int ccurl_load(char *error, size_t error_size);

CURL *ccurl_easy_init(void);
void ccurl_easy_cleanup(CURL *handle);
CURLcode ccurl_easy_perform(CURL *handle);
const char *ccurl_easy_strerror(CURLcode code);

CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode ccurl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode ccurl_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback callback);
CURLcode ccurl_setopt_xferinfo_function(CURL *handle, curl_xferinfo_callback callback);
CURLcode ccurl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *list);

CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value);

struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *string);
void ccurl_slist_free_all(struct curl_slist *list);

#endif
