// A minimal SVG reader for the --plot tests: checks that a document is well-formed XML of
// the shape solve_plot_svg writes (every tag closed in order, attributes quoted, text
// without a raw '<' or a bare '&') and extracts what the tests compare.
#pragma once

#include <doctest/doctest.h>

#include <cctype>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace lsjit::testing {

struct SvgElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::string attribute(const std::string& key) const {
    for (const auto& [k, v] : attributes)
      if (k == key) return v;
    return "";
  }
};

struct SvgDocument {
  std::vector<SvgElement> elements;  // in document order (start and empty tags)
  std::string title;                 // the text of the first <title>
  size_t count(const std::string& name) const {
    size_t n = 0;
    for (const auto& e : elements) n += e.name == name;
    return n;
  }
  std::vector<const SvgElement*> all(const std::string& name) const {
    std::vector<const SvgElement*> out;
    for (const auto& e : elements)
      if (e.name == name) out.push_back(&e);
    return out;
  }
};

// Fails the current test (REQUIRE) with the offset of the first problem.
inline SvgDocument parse_svg(const std::string& s) {
  SvgDocument doc;
  REQUIRE(s.rfind("<svg", 0) == 0);
  REQUIRE(s.size() >= 7);
  REQUIRE(s.substr(s.size() - 7) == "</svg>\n");
  std::vector<std::string> open;
  size_t i = 0;
  bool in_title = false;
  auto check_text = [&](size_t from, size_t to) {
    for (size_t k = from; k < to; ++k)
      if (s[k] == '&') {
        const size_t semi = s.find(';', k);
        INFO("bare '&' at offset " << k);
        REQUIRE((semi != std::string::npos && semi < to && semi - k <= 6));
      }
  };
  while (i < s.size()) {
    if (s[i] != '<') {
      const size_t next = s.find('<', i);
      if (next == std::string::npos) {  // after the root element: white space only
        REQUIRE(s.find_first_not_of(" \t\r\n", i) == std::string::npos);
        break;
      }
      check_text(i, next);
      if (in_title) doc.title += s.substr(i, next - i);
      i = next;
      continue;
    }
    INFO("tag at offset " << i);
    if (s.compare(i, 2, "</") == 0) {
      const size_t end = s.find('>', i);
      REQUIRE(end != std::string::npos);
      const std::string name = s.substr(i + 2, end - i - 2);
      REQUIRE(!open.empty());
      REQUIRE(open.back() == name);
      open.pop_back();
      if (name == "title") in_title = false;
      i = end + 1;
      continue;
    }
    size_t k = i + 1;
    while (k < s.size() && (std::isalnum(static_cast<unsigned char>(s[k])) || s[k] == '-')) ++k;
    SvgElement e{s.substr(i + 1, k - i - 1), {}};
    REQUIRE(!e.name.empty());
    for (;;) {
      while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
      REQUIRE(k < s.size());
      if (s[k] == '>' || s.compare(k, 2, "/>") == 0) break;
      const size_t eq = s.find('=', k);
      REQUIRE(eq != std::string::npos);
      REQUIRE(s[eq + 1] == '"');
      const size_t close = s.find('"', eq + 2);
      REQUIRE(close != std::string::npos);
      REQUIRE(s.substr(eq + 2, close - eq - 2).find('<') == std::string::npos);
      check_text(eq + 2, close);
      e.attributes.emplace_back(s.substr(k, eq - k), s.substr(eq + 2, close - eq - 2));
      k = close + 1;
    }
    const bool empty_tag = s[k] == '/';
    if (!empty_tag) {
      open.push_back(e.name);
      if (e.name == "title" && doc.title.empty()) in_title = true;
    }
    doc.elements.push_back(std::move(e));
    i = k + (empty_tag ? 2 : 1);
  }
  REQUIRE(open.empty());
  REQUIRE(!doc.elements.empty());
  REQUIRE(doc.elements.front().name == "svg");
  return doc;
}

// The points of a <polyline>: "x,y x,y ...".
inline std::vector<std::pair<double, double>> polyline_points(const SvgElement& e) {
  std::vector<std::pair<double, double>> out;
  const std::string p = e.attribute("points");
  const char* c = p.c_str();
  while (*c) {
    char* end;
    const double x = std::strtod(c, &end);
    REQUIRE(*end == ',');
    const double y = std::strtod(end + 1, &end);
    out.emplace_back(x, y);
    c = end;
    while (*c == ' ') ++c;
  }
  return out;
}

}  // namespace lsjit::testing
