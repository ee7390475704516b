// lsjit replay, run as a separate process on generated graphs: the JSON fields, one update
// per pose, no compile on a warm cache, a final cost near the batch solve's, the plot, and
// clear errors for bad files and flags.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "../support/run_cli.h"
#include "../support/scratch_files.h"
#include "lsjit/common/error.h"

namespace replay_cli_test {

namespace fs = std::filesystem;
using lsjit::testing::file_contents;
using lsjit::testing::fresh_dir;
using lsjit::testing::run;

// The number after "field": in a one-line JSON object.
double json_field(const std::string& json, const std::string& field) {
  const size_t at = json.find("\"" + field + "\": ");
  REQUIRE_MESSAGE(at != std::string::npos, field << " missing from " << json);
  return std::stod(json.substr(at + field.size() + 4));
}

TEST_CASE("cli: lsjit replay feeds a graph pose by pose and ends at the batch solve's cost") {
  const fs::path dir = fresh_dir("replay_cli");
  const std::string cache = "LSJIT_CACHE_DIR=" + (dir / "cache").string();
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const fs::path graph = dir / ("graph" + std::to_string(dim) + ".g2o");
    REQUIRE(run("generate pose-graph --dim " + std::to_string(dim) + " --poses 300 --loop-closures 40 --seed 3 --out " +
                graph.string())
                .exit_code == 0);
    const fs::path plot = dir / ("replay" + std::to_string(dim) + ".svg");
    run("replay " + graph.string() + " --json", cache);  // fills the cache
    const auto r = run("replay " + graph.string() + " --json --plot " + plot.string(), cache);
    REQUIRE(r.exit_code == 0);
    for (const char* field : {"updates", "final_cost", "batch_final_cost", "update_s_median", "update_s_p99",
                              "update_s_max", "total_s", "compiles"})
      json_field(r.out, field);
    CHECK(json_field(r.out, "updates") == 300);
    CHECK(json_field(r.out, "poses") == 300);
    CHECK(json_field(r.out, "compiles") == 0);
    CHECK(json_field(r.out, "traces") == 1);
    const double final_cost = json_field(r.out, "final_cost"), batch = json_field(r.out, "batch_final_cost");
    CHECK(final_cost <= batch * (1 + 1e-3));
    CHECK(final_cost >= batch * (1 - 1e-6));
    CHECK(json_field(r.out, "update_s_median") <= json_field(r.out, "update_s_max"));
    const std::string svg = file_contents(plot);
    CHECK(svg.rfind("<svg", 0) == 0);
    CHECK(svg.find("<polyline") != std::string::npos);
    const auto checked = run("replay " + graph.string() + " --json --compare-batch", cache);
    REQUIRE(checked.exit_code == 0);
    size_t checkpoints = 0;
    for (size_t at = checked.out.find("\"batch_resolve_s\": "); at != std::string::npos;
         at = checked.out.find("\"batch_resolve_s\": ", at + 1))
      ++checkpoints;
    CHECK(checkpoints == 3);
    const auto text = run("replay " + graph.string(), cache);
    CHECK(text.exit_code == 0);
    CHECK(text.out.find("time per update: median ") != std::string::npos);
    CHECK(text.out.find("300 updates") != std::string::npos);
  }
}

TEST_CASE("cli: lsjit replay refuses bad files and flags") {
  const fs::path dir = fresh_dir("replay_cli_bad");
  lsjit::testing::put_file(dir / "bad.g2o", "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 1 0 0\nEDGE_SE2 0 1 1 0 0 1 0\n");
  const auto bad = run("replay " + (dir / "bad.g2o").string());
  CHECK(bad.exit_code == 1);
  CHECK(bad.out.find("bad.g2o:3") != std::string::npos);
  const auto missing = run("replay " + (dir / "absent.g2o").string());
  CHECK(missing.exit_code == 1);
  CHECK(missing.out.find("absent.g2o") != std::string::npos);
  CHECK(run("replay").exit_code == 2);
  CHECK(run("replay x.g2o --relinearize-skip 0").exit_code == 2);
  CHECK(run("replay x.g2o --wildfire nan").exit_code == 2);
  CHECK(run("replay x.g2o --bogus").exit_code == 2);
  const auto help = run("replay help");
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("usage: lsjit replay") != std::string::npos);
}

}  // namespace replay_cli_test
