// Drift between two manifests, by server, tool and JSON pointer: what `udon-mcp diff`
// reports to a reviewer (values included: a reviewer needs them), and what evidence
// classifies (pointers only). Every difference has a kind from the closed list of
// manifest/drift_kind.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "json/diff.h"
#include "json/json.h"
#include "manifest/manifest.h"

namespace udon::manifest {

enum class ChangeStatus { kAdded, kRemoved, kChanged, kRenamed };

struct ToolDiff {
  std::string name;
  ChangeStatus status = ChangeStatus::kChanged;
  std::string renamed_from;                    // kRenamed: the old name
  std::vector<json::Difference> differences;   // pointers relative to the Tool object
  std::vector<std::string> difference_kinds;   // the kind of each difference, in order
  std::vector<std::string> kinds;              // the tool's distinct kinds, sorted (ToolKinds)
};

struct ServerDiff {
  std::string key;
  ChangeStatus status = ChangeStatus::kChanged;
  std::vector<json::Difference> server_info;   // relative to serverInfo
  std::vector<ToolDiff> tools;
  bool reordered = false;                      // same names, other order or pagination
  std::vector<std::string> reviews_changed;    // tool names whose review differs
  std::vector<std::string> kinds;              // every kind in the server's drift, sorted once
};

struct ManifestDiff {
  std::vector<json::Difference> top_level;     // profile, protocolVersion, instants, x-*
  std::vector<ServerDiff> servers;
  std::vector<std::string> kinds;              // every kind in the report, sorted once
  bool identical() const { return top_level.empty() && servers.empty(); }
  // Whether anything but capturedAt and expiresAt differs: two captures of an unchanged
  // server differ only in those. With strict, every difference counts.
  bool significant(bool strict) const;
};

ManifestDiff DiffManifests(const Manifest& before, const Manifest& after);

// {"identical":bool,"kinds":[...],"topLevel":[...],"servers":[...]} with old/new values and
// the kind per pointer.
json::Value DiffToJson(const ManifestDiff& diff, const Manifest& before, const Manifest& after);
// For people: one line per change, after a "kinds: ..." line for the top level, each
// server and each changed tool; description changes as a line diff. Keys, names,
// pointers and values go through json::ForDisplay, each piece that hid something followed
// by a "note: the new value held ..." line.
std::string DiffToText(const ManifestDiff& diff, const Manifest& before, const Manifest& after);

// The area a Tool-object pointer falls in, for evidence: description, inputSchema,
// outputSchema, annotations, execution, title, icons, _meta, name, or other.
std::string ToolChangeArea(const std::string& pointer);

// A readable line diff ("- old", "+ new", "  same") of two texts.
std::string TextLineDiff(const std::string& before, const std::string& after);

const char* ChangeStatusName(ChangeStatus status);

// The capture instants (/capturedAt, /expiresAt): reported, but not significant by default.
bool IsInstantPointer(const std::string& pointer);

}  // namespace udon::manifest
