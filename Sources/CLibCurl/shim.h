#include <curl/curl.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

// libcurl is opened with dlopen on first use, not linked: a bridge without an e-mail channel
// never maps it nor the two dozen libraries it pulls in (GnuTLS, Kerberos, LDAP, libssh2, ...),
// about 3.5 MB of resident memory. Every call goes through the table fg_curl_load returns;
// Swift calls the fg_curl_* wrappers, never curl_* directly (which would link libcurl again).
struct fg_curl_api {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *curl);
    CURLcode (*easy_perform)(CURL *curl);
    CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
    const char *(*easy_strerror)(CURLcode code);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *string);
    void (*slist_free_all)(struct curl_slist *list);
};

// Opens libcurl and runs curl_global_init: the table (kept for the life of the process), or NULL
// with *problem saying what went wrong (the library or a symbol is missing, initialisation
// failed). Call once (Swift: a global's initialiser, which runs once under a lock).
static inline const struct fg_curl_api *fg_curl_load(const char **problem) {
    static const char *missing = "libcurl.so.4 lacks a symbol FallGuard uses";
    void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!h) { *problem = dlerror(); return NULL; }
    struct fg_curl_api *api = calloc(1, sizeof *api);
    if (!api) { *problem = "out of memory"; return NULL; }
#define FG_CURL_SYM(field, name) \
    if (!(*(void **)&api->field = dlsym(h, name))) { *problem = missing; return NULL; }
    FG_CURL_SYM(global_init, "curl_global_init")
    FG_CURL_SYM(easy_init, "curl_easy_init")
    FG_CURL_SYM(easy_cleanup, "curl_easy_cleanup")
    FG_CURL_SYM(easy_perform, "curl_easy_perform")
    FG_CURL_SYM(easy_setopt, "curl_easy_setopt")
    FG_CURL_SYM(easy_getinfo, "curl_easy_getinfo")
    FG_CURL_SYM(easy_strerror, "curl_easy_strerror")
    FG_CURL_SYM(slist_append, "curl_slist_append")
    FG_CURL_SYM(slist_free_all, "curl_slist_free_all")
#undef FG_CURL_SYM
    if (api->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) { *problem = "curl_global_init failed"; return NULL; }
    return api;
}

static inline CURL *fg_curl_easy_init(const struct fg_curl_api *api) { return api->easy_init(); }
static inline void fg_curl_easy_cleanup(const struct fg_curl_api *api, CURL *curl) { api->easy_cleanup(curl); }
static inline CURLcode fg_curl_easy_perform(const struct fg_curl_api *api, CURL *curl) { return api->easy_perform(curl); }
static inline const char *fg_curl_easy_strerror(const struct fg_curl_api *api, CURLcode code) { return api->easy_strerror(code); }
static inline struct curl_slist *fg_curl_slist_append(const struct fg_curl_api *api, struct curl_slist *list, const char *s) {
    return api->slist_append(list, s);
}
static inline void fg_curl_slist_free_all(const struct fg_curl_api *api, struct curl_slist *list) { api->slist_free_all(list); }

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
// wrapper per argument kind.
// CURLOPT_USE_SSL's value: curl_usessl is an enum up to curl 8.12 (bookworm's 7.88) and long
// macros since 8.13 (trixie's 8.14), which Swift imports as different types.
static inline long fg_curl_usessl(int all) { return all ? (long)CURLUSESSL_ALL : (long)CURLUSESSL_NONE; }
static inline CURLcode fg_curl_set_long(const struct fg_curl_api *api, CURL *curl, CURLoption option, long value) {
    return api->easy_setopt(curl, option, value);
}
static inline CURLcode fg_curl_set_string(const struct fg_curl_api *api, CURL *curl, CURLoption option, const char *value) {
    return api->easy_setopt(curl, option, value);
}
static inline CURLcode fg_curl_set_pointer(const struct fg_curl_api *api, CURL *curl, CURLoption option, void *value) {
    return api->easy_setopt(curl, option, value);
}
static inline CURLcode fg_curl_set_list(const struct fg_curl_api *api, CURL *curl, CURLoption option, struct curl_slist *value) {
    return api->easy_setopt(curl, option, value);
}
static inline CURLcode fg_curl_set_read_function(const struct fg_curl_api *api, CURL *curl, curl_read_callback callback) {
    return api->easy_setopt(curl, CURLOPT_READFUNCTION, callback);
}
static inline CURLcode fg_curl_set_progress_function(const struct fg_curl_api *api, CURL *curl, curl_xferinfo_callback callback) {
    return api->easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, callback);
}
static inline CURLcode fg_curl_response_code(const struct fg_curl_api *api, CURL *curl, long *code) {
    return api->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, code);
}
