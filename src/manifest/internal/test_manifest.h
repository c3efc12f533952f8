// A complete, reviewed manifest for tests to start from and break one rule at a time.
#pragma once

#include "json/json.h"

namespace udon::manifest::internal {

inline json::Value ValidReviewJson() {
  return json::Value::parse(R"({
    "reviewer": "release-review@example.test",
    "reviewedAt": "2026-08-30T13:00:00Z",
    "assertions": {"headless": true, "independentCalls": true, "modelBacked": false,
                   "sideEffects": ["creates_render_artifacts"], "concurrency": "safe",
                   "referenceBasedIO": true},
    "inputChannels": {"/source": "data", "/angles": "data", "/resolution": "data"}
  })");
}

inline json::Value RenderTool() {
  return json::Value::parse(R"({
    "name": "render_turntable",
    "description": "Render reviewed views from an addressable Blender asset.",
    "inputSchema": {"type": "object",
      "properties": {"source": {"type": "string", "format": "uri"},
                     "angles": {"type": "integer", "minimum": 1, "maximum": 36},
                     "resolution": {"type": "integer", "enum": [1024, 2048, 4096]},
                     "options": {"$ref": "#/$defs/options"}},
      "required": ["source", "angles", "resolution"],
      "$defs": {"options": {"type": "object", "properties": {"style": {"type": "string"}}}}},
    "outputSchema": {"type": "object",
      "properties": {"renderedUris": {"type": "array", "items": {"type": "string", "format": "uri"}}},
      "required": ["renderedUris"]}
  })");
}

inline json::Value ValidManifestJson() {
  json::Value doc = json::Value::parse(R"({
    "profile": "openudon.mcp-tool-manifest.0.1",
    "protocolVersion": "2025-11-25",
    "capturedAt": "2026-08-30T12:00:00Z",
    "expiresAt": "2026-09-06T12:00:00Z",
    "servers": {"blender_farm": {
      "serverInfo": {"name": "example-blender-server", "version": "0.8.2"},
      "toolPages": [
        {"tools": [], "nextCursor": "p2"},
        {"tools": [{"name": "list_assets", "inputSchema": {"type": "object"}}]}
      ],
      "reviews": {}
    }}
  })");
  doc["servers"]["blender_farm"]["toolPages"][0]["tools"].push_back(RenderTool());
  doc["servers"]["blender_farm"]["reviews"]["render_turntable"] = ValidReviewJson();
  return doc;
}

// The one tool of ValidManifestJson()'s server, in `doc`, for a test to edit.
inline json::Value& RenderToolOf(json::Value& doc) { return doc["servers"]["blender_farm"]["toolPages"][0]["tools"][0]; }

}  // namespace udon::manifest::internal
