// An LD_PRELOAD library for adopt_integration_test (issue 38, item 11): loaded into a
// process, it appends that process's executable to the file $UDON_TEST_PRELOAD_MARKER, so
// a test sees which processes a host entry's LD_PRELOAD reached.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

namespace {

__attribute__((constructor)) void NoteThisProcess() {
  const char* marker = std::getenv("UDON_TEST_PRELOAD_MARKER");
  if (marker == nullptr || *marker == '\0') return;
  char exe[4096];
  const ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (length <= 0) return;
  exe[length] = '\n';
  const int fd = open(marker, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  (void)!write(fd, exe, static_cast<std::size_t>(length) + 1);
  close(fd);
}

}  // namespace
