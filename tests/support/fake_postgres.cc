#include "fake_postgres.h"

#include "test_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <map>

namespace udon::testing {
namespace {

constexpr std::uint32_t kSslRequest = 80877103;
constexpr std::uint32_t kGssEncRequest = 80877104;
constexpr std::uint32_t kProtocol3 = 196608;

bool ReadExactly(int fd, void* buffer, std::size_t size) {
  auto* out = static_cast<char*>(buffer);
  while (size > 0) {
    const ssize_t n = read(fd, out, size);
    if (n <= 0) return false;
    out += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

void WriteAll(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

std::string Int32(std::uint32_t value) {
  const std::uint32_t net = htonl(value);
  return std::string(reinterpret_cast<const char*>(&net), 4);
}
std::string Int16(std::uint16_t value) {
  const std::uint16_t net = htons(value);
  return std::string(reinterpret_cast<const char*>(&net), 2);
}

// One backend message: its type, then its length (itself included) and body.
std::string Message(char type, const std::string& body) {
  return std::string(1, type) + Int32(static_cast<std::uint32_t>(body.size() + 4)) + body;
}

// A message's body after its 4-byte length; false when the client went away.
bool ReadBody(int fd, std::string& body) {
  std::uint32_t length = 0;
  if (!ReadExactly(fd, &length, 4)) return false;
  length = ntohl(length);
  if (length < 4 || length > (1u << 20)) return false;
  body.assign(length - 4, '\0');
  return ReadExactly(fd, body.data(), body.size());
}

std::string Parameter(const std::string& name, const std::string& value) {
  return Message('S', name + '\0' + value + '\0');
}

// What a database with no invalidations says to a statement: the schema version is 1,
// every advisory lock is free, no other query has rows, every command succeeds.
std::string Rows(const std::string& sql, bool extended) {
  std::string out;
  if (sql.rfind("SELECT", 0) != 0) {
    return (extended ? Message('n', "") : "") + Message('C', std::string("OK") + '\0');
  }
  out += Message('T', Int16(1) + "c" + '\0' + Int32(0) + Int16(0) + Int32(25) + Int16(0xffff) + Int32(0xffffffff) +
                          Int16(0));
  std::string value;
  if (sql.find("udon_mcp_schema_version") != std::string::npos) value = "1";
  if (sql.find("advisory") != std::string::npos) value = "t";
  if (value.empty()) return out + Message('C', std::string("SELECT 0") + '\0');
  out += Message('D', Int16(1) + Int32(static_cast<std::uint32_t>(value.size())) + value);
  return out + Message('C', std::string("SELECT 1") + '\0');
}

// An extended-protocol statement, answered at its Sync.
std::string Reply(const std::string& sql) { return Message('1', "") + Message('2', "") + Rows(sql, true); }

// A simple query of one or more statements ("; " apart); PREPARE name(types) AS sql is
// remembered in `prepared` for the Bind messages that name it.
std::string SimpleReply(const std::string& text, std::map<std::string, std::string>& prepared) {
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find("; ", start);
    if (end == std::string::npos) end = text.size();
    const std::string statement = text.substr(start, end - start);
    if (statement.rfind("PREPARE ", 0) == 0) {
      const std::size_t name_end = statement.find_first_of("( ", 8);
      const std::size_t as = statement.find(" AS ");
      if (name_end != std::string::npos && as != std::string::npos) {
        prepared[statement.substr(8, name_end - 8)] = statement.substr(as + 4);
      }
      out += Message('C', std::string("PREPARE") + '\0');
    } else {
      out += Rows(statement, false);
    }
    start = end + 2;
  }
  return out;
}

}  // namespace

FakePostgres::FakePostgres() {
  listener_ = ListenOnLoopback(port_);
  if (listener_ < 0) {
    port_ = 0;
    return;
  }
  acceptor_ = std::thread([this] { Accept(); });
}

FakePostgres::~FakePostgres() {
  stopping_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  {
    std::lock_guard<std::mutex> guard(mutex_);
    for (int fd : clients_) shutdown(fd, SHUT_RDWR);  // ends every Serve's read
  }
  for (auto& thread : threads_) thread.join();
  for (int fd : clients_) close(fd);
  if (listener_ >= 0) close(listener_);
}

std::vector<std::string> FakePostgres::passwords() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return passwords_;
}

void FakePostgres::Accept() {
  while (!stopping_) {
    pollfd ready{listener_, POLLIN, 0};
    if (poll(&ready, 1, 50) <= 0) continue;
    const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> guard(mutex_);
    clients_.push_back(fd);
    threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

void FakePostgres::Serve(int fd) {
  if (!Startup(fd)) return;
  ++sessions_;
  Answer(fd);
}

// The startup exchange: TLS declined, the password asked for in the clear and kept.
bool FakePostgres::Startup(int fd) {
  std::string body;
  for (;;) {
    if (!ReadBody(fd, body) || body.size() < 4) return false;
    std::uint32_t code = 0;
    std::memcpy(&code, body.data(), 4);
    code = ntohl(code);
    if (code == kSslRequest) ++tls_requests_;
    if (code == kSslRequest || code == kGssEncRequest) {
      WriteAll(fd, "N");
      continue;
    }
    if (code != kProtocol3) return false;
    break;
  }
  WriteAll(fd, Message('R', Int32(3)));  // AuthenticationCleartextPassword
  char type = 0;
  if (!ReadExactly(fd, &type, 1) || type != 'p' || !ReadBody(fd, body)) return false;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    passwords_.push_back(body.substr(0, body.find('\0')));
  }
  WriteAll(fd, Message('R', Int32(0)) + Parameter("server_version", "15.0") +
                   Parameter("client_encoding", "UTF8") + Parameter("standard_conforming_strings", "on") +
                   Parameter("integer_datetimes", "on") + Parameter("DateStyle", "ISO, MDY") +
                   Message('K', Int32(4242) + Int32(1)) + Message('Z', "I"));
  return true;
}

// The extended-protocol statements libpq's PQexecParams and PQexecPrepared send, answered
// at each Sync, and simple queries.
void FakePostgres::Answer(int fd) {
  std::map<std::string, std::string> prepared;
  std::string sql, body;
  char type = 0;
  while (ReadExactly(fd, &type, 1) && ReadBody(fd, body)) {
    if (type == 'X') return;
    if (type == 'P') sql = body.substr(body.find('\0') + 1).c_str();
    if (type == 'B') {  // portal name, then statement name: a prepared one's SQL
      const std::string name = body.substr(body.find('\0') + 1).c_str();
      if (!name.empty()) sql = prepared[name];
    }
    if (type == 'Q') WriteAll(fd, SimpleReply(body.c_str(), prepared) + Message('Z', "I"));
    if (type == 'S') WriteAll(fd, Reply(sql) + Message('Z', "I"));
  }
}

}  // namespace udon::testing
