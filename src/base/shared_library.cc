#include "base/shared_library.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace udon::base {

void* RequiredSymbol(const char* library, const char* symbol) {
  static std::mutex mutex;
  static std::map<std::string, void*>* handles = new std::map<std::string, void*>();  // never freed: used at exit
  void* handle = nullptr;
  {
    std::lock_guard<std::mutex> guard(mutex);
    void*& slot = (*handles)[library];
    // RTLD_LAZY: the functions of the dependencies not linked with BIND_NOW (Kerberos,
    // under libpq) are bound when first called, not all at load (issue 31: 2.6 M of libpq's
    // 14 M instructions of loading). One missing there ends the process at that call, with
    // the dynamic loader's status 127, as at start.
    if (slot == nullptr) slot = dlopen(library, RTLD_LAZY | RTLD_LOCAL);
    handle = slot;
  }
  void* address = handle != nullptr ? dlsym(handle, symbol) : nullptr;
  if (address == nullptr) {
    const char* why = dlerror();
    std::fprintf(stderr, "udon-mcp: error while loading shared libraries: %s: %s\n", library,
                 why != nullptr ? why : "cannot be loaded");
    std::_Exit(127);
  }
  return address;
}

}  // namespace udon::base
