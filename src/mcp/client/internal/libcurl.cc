// libcurl's functions as udon-mcp uses them, forwarded to libcurl loaded on the first use
// (base/shared_library.h): a process that never speaks HTTP never loads it, nor the thirty
// libraries it pulls in. The declarations are curl.h's own, so a signature that differs
// does not compile.
#define CURL_DISABLE_TYPECHECK 1  // the forwarders define the variadic functions themselves
#include <curl/curl.h>

#include <cstdarg>

// curl.h's variadic prototypes put an enum before the "...": va_start on it is what
// libcurl's own C does, and what the x86-64 and AArch64 calling conventions support.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wvarargs"
#endif

#include "base/shared_library.h"

namespace {
constexpr const char* kLibcurl = "libcurl.so.4";
}  // namespace

#define UDON_CURL(name) UDON_LIBRARY_FUNCTION(kLibcurl, name)

extern "C" {

CURLcode curl_global_init(long flags) { return UDON_CURL(curl_global_init)(flags); }
CURL* curl_easy_init(void) { return UDON_CURL(curl_easy_init)(); }
void curl_easy_cleanup(CURL* curl) { UDON_CURL(curl_easy_cleanup)(curl); }
void curl_easy_reset(CURL* curl) { UDON_CURL(curl_easy_reset)(curl); }
CURLcode curl_easy_perform(CURL* curl) { return UDON_CURL(curl_easy_perform)(curl); }  // oauth's requests
const char* curl_easy_strerror(CURLcode code) { return UDON_CURL(curl_easy_strerror)(code); }
curl_slist* curl_slist_append(curl_slist* list, const char* text) { return UDON_CURL(curl_slist_append)(list, text); }
void curl_slist_free_all(curl_slist* list) { UDON_CURL(curl_slist_free_all)(list); }
CURLM* curl_multi_init(void) { return UDON_CURL(curl_multi_init)(); }
CURLMcode curl_multi_cleanup(CURLM* multi) { return UDON_CURL(curl_multi_cleanup)(multi); }
CURLMcode curl_multi_add_handle(CURLM* multi, CURL* easy) { return UDON_CURL(curl_multi_add_handle)(multi, easy); }
CURLMcode curl_multi_remove_handle(CURLM* multi, CURL* easy) {
  return UDON_CURL(curl_multi_remove_handle)(multi, easy);
}
CURLMcode curl_multi_perform(CURLM* multi, int* running) { return UDON_CURL(curl_multi_perform)(multi, running); }
CURLMcode curl_multi_poll(CURLM* multi, curl_waitfd extra[], unsigned int count, int timeout_ms, int* ret) {
  return UDON_CURL(curl_multi_poll)(multi, extra, count, timeout_ms, ret);
}
CURLMcode curl_multi_wakeup(CURLM* multi) { return UDON_CURL(curl_multi_wakeup)(multi); }
CURLMsg* curl_multi_info_read(CURLM* multi, int* queued) { return UDON_CURL(curl_multi_info_read)(multi, queued); }

// Every option takes one argument, whose type its number's range names (curl.h's
// CURLOPTTYPE_*): read as that type and passed on as it.
CURLcode curl_easy_setopt(CURL* curl, CURLoption option, ...) {
  va_list arguments;
  va_start(arguments, option);
  CURLcode code;
  if (option < CURLOPTTYPE_OBJECTPOINT) {
    code = UDON_CURL(curl_easy_setopt)(curl, option, va_arg(arguments, long));
  } else if (option < CURLOPTTYPE_FUNCTIONPOINT) {
    code = UDON_CURL(curl_easy_setopt)(curl, option, va_arg(arguments, void*));
  } else if (option < CURLOPTTYPE_OFF_T) {
    code = UDON_CURL(curl_easy_setopt)(curl, option, va_arg(arguments, void (*)()));
  } else if (option < CURLOPTTYPE_BLOB) {
    code = UDON_CURL(curl_easy_setopt)(curl, option, va_arg(arguments, curl_off_t));
  } else {
    code = UDON_CURL(curl_easy_setopt)(curl, option, va_arg(arguments, void*));
  }
  va_end(arguments);
  return code;
}

// Every piece of information is written through one pointer.
CURLcode curl_easy_getinfo(CURL* curl, CURLINFO info, ...) {
  va_list arguments;
  va_start(arguments, info);
  const CURLcode code = UDON_CURL(curl_easy_getinfo)(curl, info, va_arg(arguments, void*));
  va_end(arguments);
  return code;
}

}  // extern "C"
