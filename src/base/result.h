// Errors as values. A failure carries a stable code (the contract's codes, or a
// component's own for internal layers), a value-free message, the JSON pointer of the
// place that went wrong and, for text input, where in the bytes it was.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

namespace udon {

// Where in a text input an error was found. Lines and columns count from 1; the column
// counts bytes.
struct SourceLocation {
  std::size_t offset = 0;
  std::size_t line = 1;
  std::size_t column = 1;
};

struct Error {
  std::string code;     // stable, e.g. "manifest.invalid" or "json.duplicate_key"
  std::string message;  // fixed text: never argument values, results or secrets
  std::string pointer;  // RFC 6901 pointer of the enclosing value ("" = the whole document)
  std::optional<SourceLocation> location;
  nlohmann::json details = nlohmann::json::object();  // value-free structured extras

  // "message at /pointer (line L, column C)", for people.
  std::string Describe() const;

  // The same failure under another code, e.g. a json.* parse error surfaced as
  // manifest.invalid. Keeps pointer, location and details.
  Error WithCode(std::string new_code) const&;
  Error WithCode(std::string new_code) &&;
  // Prefixes the pointer, for errors found inside an embedded value.
  Error AtPrefix(const std::string& prefix) &&;
};

Error MakeError(std::string code, std::string message, std::string pointer = {});

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& { return std::get<1>(state_); }
  Error&& error() && { return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, Error> state_;
};

// Success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const& { return *error_; }
  Error&& error() && { return std::move(*error_); }

 private:
  std::optional<Error> error_;
};

inline Status OkStatus() { return Status(); }

}  // namespace udon

// Returns the error of a failed Status/Result expression from the enclosing function.
#define UDON_RETURN_IF_ERROR(expr)                          \
  do {                                                      \
    auto udon_status_ = (expr);                             \
    if (!udon_status_.ok()) return std::move(udon_status_).error(); \
  } while (false)

#define UDON_CONCAT_INNER_(a, b) a##b
#define UDON_CONCAT_(a, b) UDON_CONCAT_INNER_(a, b)
// UDON_ASSIGN_OR_RETURN(auto x, Expr()): binds the value or returns the error.
#define UDON_ASSIGN_OR_RETURN(lhs, expr) \
  UDON_ASSIGN_OR_RETURN_IMPL_(UDON_CONCAT_(udon_result_, __LINE__), lhs, expr)
#define UDON_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return std::move(tmp).error();     \
  lhs = std::move(tmp).value()
