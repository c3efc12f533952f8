// MCP-profile UWS documents for the content-trust tests: the digest's golden vector (mail
// read, model, send) bound to testdata/mail.tools.json, with the manifest digest filled in.
#pragma once

#include <map>
#include <string>

#include "base/file.h"
#include "json/json.h"
#include "manifest/manifest.h"
#include "uws/binding.h"
#include "uws/document.h"

namespace udon::trust::internal {

inline std::string TestdataDir() { return std::string(UDON_SOURCE_DIR) + "/src/trust/testdata"; }

inline std::string MailManifestDigest() {
  auto manifest = manifest::Manifest::Load(TestdataDir() + "/mail.tools.json");
  return manifest.ok() ? manifest->sha256() : std::string();
}

// An MCP operation bound to a tool of the mail server.
inline json::Value McpOperation(const std::string& id, const std::string& tool, json::Value body,
                                json::Value outputs = nullptr) {
  json::Value operation = {
      {"operationId", id},
      {"x-uws-operation-profile", std::string(uws::kMcpProfile)},
      {"x-openudon-mcp",
       {{"manifest", "./mail.tools.json"}, {"manifestSha256", MailManifestDigest()}, {"server", "mail"},
        {"tool", tool}}}};
  if (!body.is_null()) operation["request"] = {{"body", std::move(body)}};
  if (!outputs.is_null()) operation["outputs"] = std::move(outputs);
  return operation;
}

// The golden vector: read -> model -> send in a sequence workflow, read's body declared
// untrusted.
inline json::Value GoldenDocument() {
  json::Value document = {
      {"uws", "1.9.1"},
      {"info", {{"title", "mail triage"}, {"version", "1.0.0"}}},
      {"operations",
       {McpOperation("read", "read_mail", {{"folder", "inbox"}}, {{"body", "$response.body#/body"}}),
        McpOperation("model", "summarize", {{"prompt", "$inputs.prompt"}}, {{"summary", "$response.body#/summary"}}),
        McpOperation("send", "send_mail", {{"target", "$inputs.target"}})}},
      {"workflows",
       {{{"workflowId", "main"},
         {"type", "sequence"},
         {"steps",
          {{{"stepId", "read_step"}, {"operationRef", "read"}, {"outputs", {{"body", "$outputs.body"}}}},
           {{"stepId", "model_step"},
            {"operationRef", "model"},
            {"inputs", {{"prompt", "$steps.read_step.outputs.body"}}},
            {"outputs", {{"summary", "$outputs.summary"}}}},
           {{"stepId", "send_step"},
            {"operationRef", "send"},
            {"inputs", {{"target", "$steps.model_step.outputs.summary"}}}}}}}}},
      {"contentTrust", {{"operations", {{"read", {{"outputs", {{"body", "untrusted"}}}}}}}}}};
  return document;
}

inline Result<uws::Document> ToDocument(const json::Value& value) {
  return uws::ParseDocument(value.dump(), TestdataDir());
}

// The golden vector as the files a test writes into its folder: the reviewed manifest
// (mail.tools.json; empty when it cannot be read, which fails every binding check) and
// the document (triage.uws.json).
inline std::map<std::string, std::string> GoldenFiles() {
  auto manifest = base::ReadFile(TestdataDir() + "/mail.tools.json");
  return {{"mail.tools.json", manifest.ok() ? *manifest : std::string()},
          {"triage.uws.json", GoldenDocument().dump(2)}};
}

}  // namespace udon::trust::internal
