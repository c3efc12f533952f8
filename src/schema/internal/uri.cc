#include "schema/internal/uri.h"

#include <cctype>

namespace udon::schema::internal {
namespace {

std::string RemoveDotSegments(std::string_view input) {
  std::string output;
  std::string in(input);
  while (!in.empty()) {
    if (in.rfind("../", 0) == 0) {
      in.erase(0, 3);
    } else if (in.rfind("./", 0) == 0) {
      in.erase(0, 2);
    } else if (in.rfind("/./", 0) == 0) {
      in.replace(0, 3, "/");
    } else if (in == "/.") {
      in = "/";
    } else if (in.rfind("/../", 0) == 0 || in == "/..") {
      in = in.size() == 3 ? std::string("/") : in.substr(3);
      std::size_t last = output.rfind('/');
      output.erase(last == std::string::npos ? 0 : last);
    } else if (in == "." || in == "..") {
      in.clear();
    } else {
      std::size_t next = in.find('/', in[0] == '/' ? 1 : 0);
      if (next == std::string::npos) next = in.size();
      output.append(in, 0, next);
      in.erase(0, next);
    }
  }
  return output;
}

}  // namespace

std::string UriParts::ToString() const {
  std::string out;
  if (scheme) out += *scheme + ":";
  if (authority) out += "//" + *authority;
  out += path;
  if (query) out += "?" + *query;
  if (fragment) out += "#" + *fragment;
  return out;
}

UriParts ParseUri(std::string_view text) {
  UriParts parts;
  std::size_t hash = text.find('#');
  if (hash != std::string_view::npos) {
    parts.fragment = std::string(text.substr(hash + 1));
    text = text.substr(0, hash);
  }
  std::size_t question = text.find('?');
  if (question != std::string_view::npos) {
    parts.query = std::string(text.substr(question + 1));
    text = text.substr(0, question);
  }
  std::size_t colon = text.find(':');
  if (colon != std::string_view::npos && colon > 0 &&
      std::isalpha(static_cast<unsigned char>(text[0]))) {
    bool is_scheme = true;
    for (std::size_t i = 1; i < colon; ++i) {
      char c = text[i];
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') {
        is_scheme = false;
        break;
      }
    }
    if (is_scheme) {
      std::string scheme(text.substr(0, colon));
      for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      parts.scheme = scheme;
      text = text.substr(colon + 1);
    }
  }
  if (text.rfind("//", 0) == 0) {
    std::size_t end = text.find('/', 2);
    if (end == std::string_view::npos) end = text.size();
    parts.authority = std::string(text.substr(2, end - 2));
    text = text.substr(end);
  }
  parts.path = std::string(text);
  return parts;
}

std::string ResolveUri(std::string_view base_text, std::string_view reference) {
  UriParts ref = ParseUri(reference);
  UriParts base = ParseUri(base_text);
  UriParts target;
  if (ref.scheme) {
    target = ref;
    target.path = RemoveDotSegments(ref.path);
  } else {
    target.scheme = base.scheme;
    if (ref.authority) {
      target.authority = ref.authority;
      target.path = RemoveDotSegments(ref.path);
      target.query = ref.query;
    } else {
      target.authority = base.authority;
      if (ref.path.empty()) {
        target.path = base.path;
        target.query = ref.query ? ref.query : base.query;
      } else {
        if (ref.path[0] == '/') {
          target.path = RemoveDotSegments(ref.path);
        } else {
          std::string merged;
          if (base.authority && base.path.empty()) {
            merged = "/" + ref.path;
          } else {
            std::size_t last = base.path.rfind('/');
            merged = (last == std::string::npos ? std::string() : base.path.substr(0, last + 1)) +
                     ref.path;
          }
          target.path = RemoveDotSegments(merged);
        }
        target.query = ref.query;
      }
    }
  }
  target.fragment = ref.fragment;
  return target.ToString();
}

void SplitFragment(std::string_view uri, std::string* without, std::string* fragment) {
  std::size_t hash = uri.find('#');
  if (hash == std::string_view::npos) {
    *without = std::string(uri);
    fragment->clear();
  } else {
    *without = std::string(uri.substr(0, hash));
    *fragment = std::string(uri.substr(hash + 1));
  }
}

bool PercentDecode(std::string_view text, std::string* out) {
  out->clear();
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out->push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size() || !std::isxdigit(static_cast<unsigned char>(text[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      return false;
    }
    out->push_back(static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)));
    i += 2;
  }
  return true;
}

}  // namespace udon::schema::internal
