// The result of a complete tools/list listing (Client::ListAllTools): every page result
// in order, its Tool objects kept as the checked bytes they arrived in and built into
// json::Values only when a caller reads the pages.
//
// Why: every transport reads a listing lean (json::ParseLeavingElements: the same strict
// parser and every rule, duplicate names at any depth, UTF-8, surrogates, numbers, depth,
// size; nothing built for the Tools). A thousand Tools built as nlohmann values are tens of
// thousands of allocations, and as many frees, that a caller which lists and calls never
// reads (the gate reads names and one Tool's bytes). Capture, which writes every Tool into
// the manifest, reads the pages and gets exactly what a whole read gives: the same parser
// over the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "json/json.h"
#include "mcp/protocol/jsonrpc.h"

namespace udon::mcp {

// The page results of one listing, in order. size(), empty() and lean() build nothing;
// every other read builds the Tools of every page once (page results then whole, exactly
// as a whole read of their frames gives them). The first read that builds is not safe to
// race with another read of the same object: hand it to one thread at a time.
class ListedPages {
 public:
  using iterator = std::vector<json::Value>::iterator;
  using const_iterator = std::vector<json::Value>::const_iterator;

  std::size_t size() const { return pages_.size(); }
  bool empty() const { return pages_.empty(); }
  // Whether the Tools have been built (for tests and benchmarks).
  bool built() const;

  const json::Value& operator[](std::size_t i) const { return Whole()[i]; }
  json::Value& operator[](std::size_t i) { return Whole()[i]; }
  const json::Value& at(std::size_t i) const { return Whole().at(i); }
  const json::Value& back() const { return Whole().back(); }
  const_iterator begin() const { return Whole().cbegin(); }
  const_iterator end() const { return Whole().cend(); }
  iterator begin() { return Whole().begin(); }
  iterator end() { return Whole().end(); }
  // Every page result with its Tools built.
  const std::vector<json::Value>& Whole() const;
  std::vector<json::Value>& Whole();
  // The pages as a plain list (capture's manifest keeps them): built, then moved out.
  operator std::vector<json::Value>() &&;  // NOLINT: implicit, for callers of the list type
  operator std::vector<json::Value>() const&;  // NOLINT

  // A page as the transport delivered it: `result` whole, or with `lean` (non-null) its
  // "tools" an empty stand-in for the Tool objects `lean` holds as bytes.
  void Append(json::Value result, std::shared_ptr<const LeanToolList> lean);

 private:
  mutable std::vector<json::Value> pages_;
  // Per page, the Tools still to build (null once built, or for a page read whole).
  mutable std::vector<std::shared_ptr<const LeanToolList>> unbuilt_;
  mutable std::size_t pending_ = 0;  // non-null entries of unbuilt_
};

// Every tools/list page result intact, in order (Tools built when first read, see
// ListedPages); events in (sequence_before, sequence_after] arrived during the listing
// (e.g. notifications/tools/list_changed).
struct ToolPages {
  ListedPages pages;
  // Per page, its Tool objects as the checked bytes of the frame (names and byte ranges),
  // for a caller that reads names and one Tool without building any; null for a page
  // read whole.
  std::vector<std::shared_ptr<const LeanToolList>> lean;
  std::uint64_t sequence_before = 0;
  std::uint64_t sequence_after = 0;
};

}  // namespace udon::mcp
