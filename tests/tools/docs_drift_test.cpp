// Tables in docs/ that restate what the code prints or declares, checked against it: each
// test fails when a table and its source drift apart (issue 19, item 14). The fix is to
// regenerate or edit the table, never to loosen the test.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "../support/run_cli.h"
#include "lsjit/runtime/solver_options.h"

namespace {

std::string read_source_file(const std::string& relative) {
  std::ifstream in(std::string(LSJIT_SOURCE_DIR) + "/" + relative);
  REQUIRE_MESSAGE(in, relative);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The text of the first Markdown table after `heading` in `doc`: its lines up to the first
// blank line.
std::string table_after(const std::string& doc, const std::string& heading) {
  const size_t at = doc.find(heading);
  REQUIRE_MESSAGE(at != std::string::npos, heading);
  const size_t begin = doc.find("\n|", at);
  REQUIRE(begin != std::string::npos);
  const size_t end = doc.find("\n\n", begin);
  REQUIRE(end != std::string::npos);
  return doc.substr(begin + 1, end - begin);
}

// Each body row of a Markdown table, split into trimmed cells.
std::vector<std::vector<std::string>> rows_of(const std::string& table) {
  std::vector<std::vector<std::string>> rows;
  size_t line_start = 0;
  for (int line = 0; line_start < table.size(); ++line) {
    const size_t line_end = table.find('\n', line_start);
    const std::string text = table.substr(line_start, line_end - line_start);
    line_start = line_end == std::string::npos ? table.size() : line_end + 1;
    if (line < 2) continue;  // the header and the alignment row
    std::vector<std::string> cells;
    size_t cell = 1;
    while (cell < text.size()) {
      const size_t bar = text.find(" | ", cell);
      const size_t stop = bar == std::string::npos ? text.rfind(" |") : bar;
      cells.push_back(text.substr(cell + 1, stop - cell - 1));
      if (bar == std::string::npos) break;
      cell = bar + 2;
    }
    rows.push_back(cells);
  }
  return rows;
}

std::string unquoted(std::string s) {
  if (s.size() >= 2 && s.front() == '`' && s.back() == '`') return s.substr(1, s.size() - 2);
  return s;
}

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The fields a struct in a header declares, with their initializers ("" for none):
// `prefix` + name -> initializer. A field is a line indented by two spaces that is not a
// comment: `type name;` or `type name = initializer;`.
void declared_fields(const std::string& header, const std::string& struct_name,
                     const std::string& prefix, std::map<std::string, std::string>& out) {
  const size_t begin = header.find("struct " + struct_name + " {");
  REQUIRE_MESSAGE(begin != std::string::npos, struct_name);
  const size_t end = header.find("\n};", begin);
  size_t at = header.find('\n', begin) + 1;
  while (at < end) {
    const size_t eol = header.find('\n', at);
    const std::string line = header.substr(at, eol - at);
    at = eol + 1;
    if (line.size() < 3 || line.compare(0, 2, "  ") != 0 || line[2] == ' ' || line[2] == '/') continue;
    const size_t semicolon = line.find(';');
    if (semicolon == std::string::npos) continue;
    const std::string declaration = line.substr(0, semicolon);
    const size_t equals = declaration.find('=');
    const std::string left = trimmed(declaration.substr(0, equals));
    const size_t name_start = left.find_last_of(" *&>") + 1;
    out[prefix + left.substr(name_start)] = equals == std::string::npos ? "" : trimmed(declaration.substr(equals + 1));
  }
}

}  // namespace

TEST_CASE("docs/ir.md's op-count table is what lsjit trace --op-counts prints") {
  // Regenerate the table with `lsjit trace --op-counts`.
  const std::string table =
      table_after(read_source_file("docs/ir.md"), "Op counts of the built-in costs (`lsjit trace --op-counts`):");
  const lsjit::testing::CliRun r = lsjit::testing::run_cli("trace --op-counts");
  REQUIRE(r.exit_code == 0);
  CHECK(table == r.out);
}

TEST_CASE("docs/solving.md lists every solver option with its default and valid range") {
  std::map<std::string, std::string> declared;  // field -> initializer in the header
  const std::string header = read_source_file("runtime/solver_options.h");
  declared_fields(header, "SolverOptions", "", declared);
  REQUIRE(declared.erase("constraints") == 1);  // listed field by field below
  declared_fields(header, "ConstraintOptions", "constraints.", declared);
  REQUIRE(declared.size() > 30);

  std::map<std::string, std::vector<std::string>> documented;  // field -> its row
  for (const auto& row : rows_of(table_after(read_source_file("docs/solving.md"), "## Every option"))) {
    REQUIRE(row.size() == 4);
    documented[unquoted(row[0])] = row;
  }
  for (const auto& [name, initializer] : declared) {
    CAPTURE(name);
    CHECK(documented.count(name) == 1);
  }
  for (const auto& [name, row] : documented) {
    CAPTURE(name);
    CHECK_MESSAGE(declared.count(name) == 1, "documented but not declared");
  }

  // Numeric fields: the default and the range are validate()'s.
  std::map<std::string, bool> numeric;
  for (const lsjit::OptionRange& o : lsjit::option_ranges(lsjit::SolverOptions{})) {
    CAPTURE(o.name);
    numeric[o.name] = true;
    REQUIRE(documented.count(o.name) == 1);
    const std::vector<std::string>& row = documented[o.name];
    CHECK(std::strtod(row[1].c_str(), nullptr) == o.value);
    CHECK(row[2] == o.range);
  }
  // The others: the header's initializer (its last name for an enum), "empty" for none.
  for (const auto& [name, initializer] : declared) {
    if (numeric.count(name) || !documented.count(name)) continue;
    CAPTURE(name);
    const std::string expected =
        initializer.empty() ? "empty" : initializer.substr(initializer.rfind("::") == std::string::npos
                                                               ? 0
                                                               : initializer.rfind("::") + 2);
    CHECK(unquoted(documented[name][1]) == expected);
  }
}

TEST_CASE("docs/incremental.md lists every IncrementalOptions field with its default") {
  std::map<std::string, std::string> declared;
  declared_fields(read_source_file("runtime/incremental_solver.h"), "IncrementalOptions", "", declared);
  REQUIRE(declared.size() == 4);
  const auto rows =
      rows_of(table_after(read_source_file("docs/incremental.md"), "## Options (IncrementalOptions) and ISAM2's"));
  REQUIRE(rows.size() == declared.size());
  for (const auto& row : rows) {
    REQUIRE(row.size() == 4);
    CAPTURE(row[0]);
    REQUIRE(declared.count(row[0]) == 1);
    const std::string initializer = declared[row[0]];
    if (initializer.empty()) CHECK(row[1] == "{}");
    else CHECK(std::stod(row[1]) == std::stod(initializer));
  }
}
