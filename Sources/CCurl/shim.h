#ifndef BLUEOTA_CCURL_SHIM_H
#define BLUEOTA_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic: Swift cannot call them. These wrappers take
   each kind of argument the gateway's HTTP client passes. */
static inline CURLcode blueota_curl_set_long(CURL *handle, CURLoption option, long value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode blueota_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode blueota_curl_set_string(CURL *handle, CURLoption option, const char *value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode blueota_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
  return curl_easy_setopt(handle, option, value);
}

typedef size_t (*blueota_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode blueota_curl_set_callback(
    CURL *handle, CURLoption option, blueota_curl_data_callback callback) {
  return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode blueota_curl_response_code(CURL *handle, long *code) {
  return curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}
#endif
