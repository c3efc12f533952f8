// Carrying reviews from a reviewed manifest onto a fresh capture of the same servers
// (`capture --update`, and later the browser workbench's one action): a review stays only
// where the complete Tool object is unchanged, so a reviewer re-reviews only what moved.
#pragma once

#include <string>
#include <vector>

#include "json/diff.h"
#include "json/json.h"
#include "base/result.h"
#include "manifest/manifest.h"

namespace udon::manifest {

enum class DropReason {
  kChanged,    // the Tool object differs (differences name the pointers)
  kRemoved,    // the name is not in the fresh capture (or its server was not captured)
  kAmbiguous,  // the name occurs more than once (old or fresh): no one Tool was reviewed
};

struct KeptReview {
  std::string server;
  std::string tool;
};

struct DroppedReview {
  std::string server;
  std::string tool;
  DropReason reason = DropReason::kChanged;
  std::vector<json::Difference> differences;  // kChanged: pointers relative to the Tool
};

struct CarryOverReport {
  std::vector<KeptReview> kept;
  std::vector<DroppedReview> dropped;
  // Servers whose serverInfo differs (pointers): reviews are kept by Tool object, but
  // a reviewer should know the server itself changed.
  std::vector<std::pair<std::string, std::vector<json::Difference>>> server_info_changed;
};

// For every review in `old` whose tool occurs exactly once in both manifests with a
// canonically equal Tool object, sets that review in `fresh` (marked as carried over,
// reviewedAt unchanged); every other review is reported dropped with its reason. Reviews
// `fresh` already holds are replaced only for kept tools. Pure: no clock, no I/O.
// Errors: those of Manifest::SetReview (manifest.server_unknown), which a server both
// manifests hold cannot produce.
Result<CarryOverReport> CarryOverReviews(const Manifest& old, Manifest& fresh);

const char* DropReasonName(DropReason reason);

// {"kept": [{"server","tool"}], "dropped": [{"server","tool","reason","pointers"?}],
//  "serverInfoChanged": [{"server","pointers"}]}: names and pointers exact.
json::Value CarryOverToJson(const CarryOverReport& report);
// For people: one line per kept or dropped review, names and pointers through
// json::ForDisplay (a note line after each piece that hid something).
std::string CarryOverToText(const CarryOverReport& report);

}  // namespace udon::manifest
