#include "server/backend/image_args.h"

#include <cctype>
#include <string>

namespace rgpu::server {

namespace {

bool IdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Identifiers and single punctuation characters, with comments, strings and preprocessor
// lines dropped.
std::vector<std::string_view> Tokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (s.compare(i, 2, "//") == 0 || c == '#') {
      while (i < s.size() && s[i] != '\n') i += (s[i] == '\\' && i + 1 < s.size()) ? 2 : 1;
    } else if (s.compare(i, 2, "/*") == 0) {
      size_t end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? s.size() : end + 2;
    } else if (c == '"' || c == '\'') {
      for (++i; i < s.size() && s[i] != c; ++i)
        if (s[i] == '\\') ++i;
      ++i;
    } else if (IdentChar(c)) {
      size_t start = i;
      while (i < s.size() && IdentChar(s[i])) ++i;
      out.push_back(s.substr(start, i - start));
    } else {
      if (!std::isspace(static_cast<unsigned char>(c))) out.push_back(s.substr(i, 1));
      ++i;
    }
  }
  return out;
}

// Index just past the parenthesis group that starts at `open`.
size_t SkipGroup(const std::vector<std::string_view>& t, size_t open) {
  int depth = 0;
  for (size_t i = open; i < t.size(); ++i) {
    if (t[i] == "(") ++depth;
    if (t[i] == ")" && --depth == 0) return i + 1;
  }
  return t.size();
}

}  // namespace

ArgShape::Kind ObjectArgFromTypeName(std::string_view type) {
  static constexpr std::string_view kImageTypes[] = {
      "image1d_t",          "image1d_array_t",      "image1d_buffer_t",
      "image2d_t",          "image2d_array_t",      "image2d_depth_t",
      "image2d_array_depth_t", "image2d_msaa_t",    "image2d_array_msaa_t",
      "image2d_msaa_depth_t",  "image2d_array_msaa_depth_t", "image3d_t"};
  while (!type.empty() && (type.back() == ' ' || type.back() == '\0')) type.remove_suffix(1);
  for (std::string_view it : kImageTypes)
    if (type == it) return ArgShape::Kind::Image;
  if (type == "sampler_t") return ArgShape::Kind::Sampler;
  return ArgShape::Kind::Unchecked;
}

std::vector<ArgShape::Kind> ObjectArgsFromSource(std::string_view source, std::string_view kernel) {
  const auto t = Tokens(source);
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != "kernel" && t[i] != "__kernel") continue;
    // Up to the parameter list: the name is the identifier before the first '(' that is not
    // an attribute's.
    size_t j = i + 1;
    while (j < t.size() && t[j] != "(" && t[j] != ";" && t[j] != "{") ++j;
    while (j < t.size() && t[j] == "(" && t[j - 1] == "__attribute__") {
      j = SkipGroup(t, j);
      while (j < t.size() && t[j] != "(" && t[j] != ";" && t[j] != "{") ++j;
    }
    if (j >= t.size() || t[j] != "(" || t[j - 1] != kernel) continue;
    std::vector<ArgShape::Kind> kinds;
    ArgShape::Kind current = ArgShape::Kind::Unchecked;
    bool any = false;
    int depth = 0;
    for (size_t k = j; k < t.size(); ++k) {
      if (t[k] == "(") ++depth;
      if (t[k] == ")" && --depth == 0) {
        if (any) kinds.push_back(current);
        return kinds;
      }
      if (depth == 1 && t[k] == ",") {
        kinds.push_back(current);
        current = ArgShape::Kind::Unchecked;
        continue;
      }
      if (t[k] == "void" && !any && k + 1 < t.size() && t[k + 1] == ")") continue;
      any = true;
      if (ObjectArgFromTypeName(t[k]) != ArgShape::Kind::Unchecked) current = ObjectArgFromTypeName(t[k]);
    }
    return {};
  }
  return {};
}

}  // namespace rgpu::server
