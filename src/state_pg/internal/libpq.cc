// libpq's functions as the PostgreSQL store uses them, forwarded to libpq loaded on the
// first use (base/shared_library.h): a process whose store is a state directory never
// loads it, nor the Kerberos, LDAP and SASL libraries it pulls in. The declarations are
// libpq-fe.h's own, so a signature that differs does not compile.
#include <libpq-fe.h>

#include "base/shared_library.h"

namespace {
constexpr const char* kLibpq = "libpq.so.5";
}  // namespace

#define UDON_PQ(name) UDON_LIBRARY_FUNCTION(kLibpq, name)

extern "C" {

PGconn* PQconnectStartParams(const char* const* keywords, const char* const* values, int expand_dbname) {
  return UDON_PQ(PQconnectStartParams)(keywords, values, expand_dbname);
}
PostgresPollingStatusType PQconnectPoll(PGconn* conn) { return UDON_PQ(PQconnectPoll)(conn); }
int PQsocket(const PGconn* conn) { return UDON_PQ(PQsocket)(conn); }
void PQfinish(PGconn* conn) { UDON_PQ(PQfinish)(conn); }
PQconninfoOption* PQconninfoParse(const char* conninfo, char** errmsg) {
  return UDON_PQ(PQconninfoParse)(conninfo, errmsg);
}
void PQconninfoFree(PQconninfoOption* options) { UDON_PQ(PQconninfoFree)(options); }
void PQfreemem(void* ptr) { UDON_PQ(PQfreemem)(ptr); }
ConnStatusType PQstatus(const PGconn* conn) { return UDON_PQ(PQstatus)(conn); }
PQnoticeProcessor PQsetNoticeProcessor(PGconn* conn, PQnoticeProcessor proc, void* arg) {
  return UDON_PQ(PQsetNoticeProcessor)(conn, proc, arg);
}
PGresult* PQexecParams(PGconn* conn, const char* command, int count, const Oid* types, const char* const* values,
                       const int* lengths, const int* formats, int result_format) {
  return UDON_PQ(PQexecParams)(conn, command, count, types, values, lengths, formats, result_format);
}
PGresult* PQexecPrepared(PGconn* conn, const char* name, int count, const char* const* values, const int* lengths,
                         const int* formats, int result_format) {
  return UDON_PQ(PQexecPrepared)(conn, name, count, values, lengths, formats, result_format);
}
PGresult* PQexec(PGconn* conn, const char* query) { return UDON_PQ(PQexec)(conn, query); }
int PQsendQueryParams(PGconn* conn, const char* command, int count, const Oid* types, const char* const* values,
                      const int* lengths, const int* formats, int result_format) {
  return UDON_PQ(PQsendQueryParams)(conn, command, count, types, values, lengths, formats, result_format);
}
int PQsendPrepare(PGconn* conn, const char* name, const char* query, int count, const Oid* types) {
  return UDON_PQ(PQsendPrepare)(conn, name, query, count, types);
}
int PQsendQueryPrepared(PGconn* conn, const char* name, int count, const char* const* values, const int* lengths,
                        const int* formats, int result_format) {
  return UDON_PQ(PQsendQueryPrepared)(conn, name, count, values, lengths, formats, result_format);
}
int PQenterPipelineMode(PGconn* conn) { return UDON_PQ(PQenterPipelineMode)(conn); }
int PQexitPipelineMode(PGconn* conn) { return UDON_PQ(PQexitPipelineMode)(conn); }
int PQpipelineSync(PGconn* conn) { return UDON_PQ(PQpipelineSync)(conn); }
PGresult* PQgetResult(PGconn* conn) { return UDON_PQ(PQgetResult)(conn); }
ExecStatusType PQresultStatus(const PGresult* res) { return UDON_PQ(PQresultStatus)(res); }
int PQntuples(const PGresult* res) { return UDON_PQ(PQntuples)(res); }
int PQnfields(const PGresult* res) { return UDON_PQ(PQnfields)(res); }
char* PQgetvalue(const PGresult* res, int row, int field) { return UDON_PQ(PQgetvalue)(res, row, field); }
int PQgetisnull(const PGresult* res, int row, int field) { return UDON_PQ(PQgetisnull)(res, row, field); }
void PQclear(PGresult* res) { UDON_PQ(PQclear)(res); }
int PQconsumeInput(PGconn* conn) { return UDON_PQ(PQconsumeInput)(conn); }
PGnotify* PQnotifies(PGconn* conn) { return UDON_PQ(PQnotifies)(conn); }

}  // extern "C"
