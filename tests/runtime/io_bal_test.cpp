// BAL problems (runtime/io/bal.h): both layouts, exact round trips, atomic writes, every
// error with its full message, and the camera model against Eigen's angle-axis.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <string>

#include "../support/io_checks.h"
#include "lsjit/runtime/io/bal.h"

namespace {

namespace fs = std::filesystem;
using lsjit::io::BalCamera;
using lsjit::io::BalProblem;
using lsjit::testing::bal_error;

// 2 cameras, 3 points, 4 observations, one value per line after the observations (as the
// -pre files are laid out).
constexpr const char* kOnePerLine =
    "2 3 4\n"
    "0 0 -1.5 2.25\n"
    "1 0 3 -4\n"
    "0 1 5e-1 1e+2\n"
    "1 2 7 8\n"
    "0.01\n0.02\n0.03\n1\n2\n-10\n500\n-0.1\n0.01\n"
    "-0.01\n0\n0.5\n-1\n0\n-12\n450\n0\n0\n"
    "1\n2\n3\n"
    "-1\n-2\n-3\n"
    "0.25\n0.5\n0.75\n";

// The same problem with blank lines between sections, a camera per line and tabs.
constexpr const char* kGrouped =
    "2 3 4\n\n"
    "0 0\t-1.5 2.25\n1 0 3 -4\n0 1 0.5 100\n1 2 7 8\n\n"
    "0.01 0.02 0.03 1 2 -10 500 -0.1 0.01\n"
    "-0.01 0 0.5 -1 0 -12 450 0 0\n\n"
    "1 2 3   -1 -2 -3\n0.25 0.5 0.75";

fs::path bal_dir(const std::string& name) {
  const fs::path dir = fs::path(LSJIT_TEST_TMP_DIR) / ("io_bal_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("io: bal reads the one-value-per-line and the grouped layouts alike") {
  const BalProblem p = lsjit::io::parse_bal(kOnePerLine, "one.bal");
  REQUIRE(p.observations.size() == 4);
  REQUIRE(p.cameras.size() == 2);
  REQUIRE(p.points.size() == 3);
  CHECK(p.observations[0].camera == 0);
  CHECK(p.observations[0].point == 0);
  CHECK(p.observations[0].xy == Eigen::Vector2d(-1.5, 2.25));
  CHECK(p.observations[2].xy == Eigen::Vector2d(0.5, 100));
  CHECK(p.observations[3].camera == 1);
  CHECK(p.observations[3].point == 2);
  BalCamera c0;
  c0 << 0.01, 0.02, 0.03, 1, 2, -10, 500, -0.1, 0.01;
  CHECK(p.cameras[0] == c0);
  CHECK(p.cameras[1](6) == 450);
  CHECK(p.points[1] == Eigen::Vector3d(-1, -2, -3));
  CHECK(p.points[2] == Eigen::Vector3d(0.25, 0.5, 0.75));
  lsjit::testing::check_same_bal(lsjit::io::parse_bal(kGrouped, "grouped.bal"), p);
}

TEST_CASE("io: bal reads an empty problem") {
  const BalProblem p = lsjit::io::parse_bal("0 0 0\n", "t.bal");
  CHECK(p.observations.empty());
  CHECK(p.cameras.empty());
  CHECK(p.points.empty());
}

TEST_CASE("io: bal writes the standard layout, and reads back exactly what it wrote") {
  const BalProblem p = lsjit::io::parse_bal(kGrouped, "t.bal");
  const std::string written = lsjit::io::format_bal(p);
  CHECK(written.substr(0, written.find("0.01")) ==
        "2 3 4\n0 0 -1.5 2.25\n1 0 3 -4\n0 1 0.5 100\n1 2 7 8\n");
  const std::string tail = "\n-1\n-2\n-3\n0.25\n0.5\n0.75\n";
  CHECK(written.substr(written.size() - tail.size()) == tail);

  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1e3, 1e3);
  BalProblem random;
  for (int k = 0; k < 20; ++k)
    random.cameras.push_back(BalCamera::NullaryExpr([&] { return u(rng); }));
  for (int k = 0; k < 50; ++k) random.points.emplace_back(u(rng), u(rng), u(rng) * 1e-200);
  for (int k = 0; k < 200; ++k)
    random.observations.push_back({k % 20, (k * 7) % 50, Eigen::Vector2d(u(rng), u(rng) * 1e200)});
  const std::string text = lsjit::io::format_bal(random);
  lsjit::testing::check_same_bal(lsjit::io::parse_bal(text, "random.bal"), random);

  const fs::path file = bal_dir("round_trip") / "problem.bal";
  lsjit::io::write_bal(file, random);
  lsjit::testing::check_same_bal(lsjit::io::read_bal(file), random);
  lsjit::io::write_bal(file, p);  // replaces it
  lsjit::testing::check_same_bal(lsjit::io::read_bal(file), p);
  size_t entries = 0;
  for (const auto& entry : fs::directory_iterator(file.parent_path())) {
    CHECK(entry.path().filename() == "problem.bal");  // no temporary file is left behind
    ++entries;
  }
  CHECK(entries == 1);
}

TEST_CASE("io: bal writer refuses problems the reader would not return") {
  const auto write_error = [](const BalProblem& p) -> std::string {
    try {
      lsjit::io::format_bal(p);
    } catch (const lsjit::Error& e) {
      return e.what();
    }
    return "(written)";
  };
  const BalProblem good = lsjit::io::parse_bal(kGrouped, "t.bal");
  CHECK(write_error(good) == "(written)");
  BalProblem p = good;
  p.observations[1].camera = 2;
  CHECK(write_error(p) ==
        "cannot write BAL problem: observation 1 names camera 2 and point 0, out of range of 2 "
        "cameras and 3 points");
  p = good;
  p.observations[1].point = -1;
  CHECK(write_error(p).find("observation 1 names camera 1 and point -1") != std::string::npos);
  p = good;
  p.cameras[1](7) = INFINITY;
  CHECK(write_error(p) == "cannot write BAL problem: camera 1 is not finite");
  p = good;
  p.points[2](0) = std::nan("");
  CHECK(write_error(p) == "cannot write BAL problem: point 2 is not finite");
}

TEST_CASE("io: bal errors name the file, the line, the section and what was expected") {
  const std::string counts = "the header announces 2 cameras, 3 points, 4 observations";
  const std::string observations = "2 3 4\n0 0 1 1\n1 0 1 1\n0 1 1 1\n1 2 1 1\n";
  const std::string cameras = "1 2 3 4 5 6 7 8 9\n1 2 3 4 5 6 7 8 9\n";
  const struct {
    std::string text, message;
  } cases[] = {
      {"",
       "t.bal:1: the file ends in the header: expected three non-negative integers "
       "(cameras points observations)"},
      {"2 3\n",
       "t.bal:1: the file ends in the header: expected three non-negative integers "
       "(cameras points observations)"},
      {"a 3 4\n", "t.bal:1: the header's number of cameras is 'a': expected an integer"},
      {"2 -3 4\n", "t.bal:1: the header's number of points is -3: expected a non-negative integer"},
      {"2 3\n4.5\n", "t.bal:2: the header's number of observations is '4.5': expected an integer"},
      {"3000000000 1 0\n",
       "t.bal:1: the header's number of cameras is 3000000000: expected at most 2147483647 "
       "(indices are 32-bit)"},
      {"2 3 1\n2 0 1 1\n",
       "t.bal:2: observation 0 camera index is 2: out of range, expected 0 to 1 (the header "
       "announces 2 cameras)"},
      {"2 3 2\n0 0 1 1\n\n1 -1 1 1\n",
       "t.bal:4: observation 1 point index is -1: out of range, expected 0 to 2 (the header "
       "announces 3 points)"},
      {"0 1 1\n0 0 1 1\n",
       "t.bal:2: observation 0 camera index is 0: out of range, there are none (the header "
       "announces 0 cameras)"},
      {"2 3 1\n0 x 1 1\n", "t.bal:2: observation 0 point index is 'x': expected an integer"},
      {"2 3 1\n0 0 abc 1\n", "t.bal:2: observation 0 x is 'abc': expected a number"},
      {observations + "1 2 3 4 5 6 7 8 9\n1 2 3 4 5 6 nan 8 9\n",
       "t.bal:7: camera 1 f is 'nan': expected a finite number"},
      {observations + cameras + "1 2 3\n4 5 6\n7 8 inf\n",
       "t.bal:10: point 2 Z is 'inf': expected a finite number"},
      {observations + cameras + "1 2 3\n4 5 6\n7 8 1e400\n",
       "t.bal:10: point 2 Z is '1e400': expected a number within the range of a double"},
      {"2 3 4\n0 0 1 1\n1 0 1 1\n0 1 1 1\n",
       "t.bal:4: expected 4 observations, the file ends after 3 (observation 3 has 0 of its 4 "
       "values: camera point x y; " + counts + ")"},
      {"2 3 4\n0 0 1 1\n1 0 1 1\n0 1 1 1\n1 2\n",
       "t.bal:5: expected 4 observations, the file ends after 3 (observation 3 has 2 of its 4 "
       "values: camera point x y; " + counts + ")"},
      {observations + "1 2 3 4 5 6 7 8 9\n1 2 3 4\n",
       "t.bal:7: expected 2 cameras, the file ends after 1 (camera 1 has 4 of its 9 values: rx ry "
       "rz tx ty tz f k1 k2; " + counts + ")"},
      {observations + cameras + "1 2 3\n4 5 6\n7\n",
       "t.bal:10: expected 3 points, the file ends after 2 (point 2 has 1 of its 3 values: X Y Z; " +
           counts + ")"},
      {observations + cameras + "1 2 3\n4 5 6\n7 8 9\n\n  extra\n",
       "t.bal:12: unexpected 'extra' after the last point: the header (2 cameras, 3 points, 4 "
       "observations) announces nothing more"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    CHECK(bal_error(c.text) == c.message);
  }
  // The last case without the extra token is a valid problem: the errors above are caused
  // by what each case changed.
  CHECK(bal_error(observations + cameras + "1 2 3\n4 5 6\n7 8 9\n\n") == "(parsed without error)");
}

TEST_CASE("io: bal read of a missing file names it") {
  const fs::path missing = bal_dir("missing") / "absent.bal";
  std::string message;
  try {
    lsjit::io::read_bal(missing);
  } catch (const lsjit::Error& e) {
    message = e.what();
  }
  CHECK(message == missing.string() + ": cannot read: No such file or directory");
}

TEST_CASE("io: bal camera model matches Eigen's angle-axis and the Snavely projection") {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int k = 0; k < 200; ++k) {
    BalCamera c;
    // Rotations up to ~3 rad, and some below the first-order threshold (θ² <= ε).
    const double scale = k % 4 == 0 ? 1e-9 : 1.8;
    c << scale * u(rng), scale * u(rng), scale * u(rng), u(rng), u(rng), -10 + u(rng),
        500 + 50 * u(rng), 0.05 * u(rng), 0.01 * u(rng);
    const Eigen::Vector3d x(2 * u(rng), 2 * u(rng), 2 * u(rng));
    const Eigen::Vector3d expected = lsjit::testing::reference_camera_point(c, x);
    CHECK((lsjit::io::bal_camera_point(c, x) - expected).norm() <= 1e-13);
    CHECK((lsjit::io::bal_project(c, x) - lsjit::testing::reference_project(c, x)).norm() <= 1e-10);
  }
}
