#include "lsjit/runtime/io/bal.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include <Eigen/Geometry>

#include "lsjit/common/error.h"
#include "lsjit/runtime/formats/input_file.h"
#include "lsjit/runtime/formats/text.h"

namespace lsjit::io {
namespace {

using detail::fail;
using detail::Token;

constexpr std::string_view kExpectedLine = "a BAL line";
// What the reader reserves at most, in values, for an input of unknown size (a pipe).
constexpr size_t kUnsizedReserve = size_t{1} << 20;

// A section of the file, for messages.
struct Section {
  std::string_view name;
  std::string_view layout;
  int size;
  std::array<std::string_view, 9> values;
};
constexpr Section kObservation{
    "observation", "camera point x y", 4, {"camera index", "point index", "x", "y"}};
constexpr Section kCamera{"camera",
                          "rx ry rz tx ty tz f k1 k2",
                          9,
                          {"rx", "ry", "rz", "tx", "ty", "tz", "f", "k1", "k2"}};
constexpr Section kPoint{"point", "X Y Z", 3, {"X", "Y", "Z"}};

// Reads the sections in order; every message names the section and the header's counts.
class Reader {
 public:
  explicit Reader(detail::LineReader& lines) : lines_(lines), cursor_(lines), source_(lines.source()) {}

  BalProblem read() {
    header();
    // A lying header must not make the reader allocate: a value takes at least two bytes
    // of what is left of the input, and of a pipe, whose size is unknown, no more than
    // kUnsizedReserve values are reserved (the vectors grow as values do arrive).
    const std::optional<uint64_t> remaining = lines_.remaining_bytes();
    max_values_ = remaining ? static_cast<size_t>(*remaining / 2 + 1) : kUnsizedReserve;
    BalProblem p;
    p.observations.reserve(std::min(num_observations_, max_values_ / 4));
    for (size_t k = 0; k < num_observations_; ++k) p.observations.push_back(observation(k));
    p.cameras.reserve(std::min(num_cameras_, max_values_ / 9));
    for (size_t k = 0; k < num_cameras_; ++k) {
      BalCamera c;
      for (int v = 0; v < 9; ++v) c(v) = number(next(kCamera, k, v));
      p.cameras.push_back(c);
    }
    p.points.reserve(std::min(num_points_, max_values_ / 3));
    for (size_t k = 0; k < num_points_; ++k) {
      Eigen::Vector3d x;
      for (int v = 0; v < 3; ++v) x(v) = number(next(kPoint, k, v));
      p.points.push_back(x);
    }
    if (const std::optional<Token> extra = cursor_.next())
      fail(source_, extra->line,
           "unexpected '" + detail::printable(extra->text) + "' after the last point: the header (" +
               counts() + ") announces nothing more");
    return p;
  }

 private:
  size_t header_count(std::string_view name, size_t limit) {
    const std::optional<Token> t = cursor_.next();
    if (!t)
      fail(source_, cursor_.last_line(),
           "the file ends in the header: expected three non-negative integers (cameras points "
           "observations)");
    const int64_t n = detail::parse_integer(t->text, source_, t->line,
                                            "the header's number of " + std::string(name));
    if (n < 0)
      fail(source_, t->line,
           "the header's number of " + std::string(name) + " is " + std::to_string(n) +
               ": expected a non-negative integer");
    if (static_cast<uint64_t>(n) > limit)
      fail(source_, t->line,
           "the header's number of " + std::string(name) + " is " + std::to_string(n) +
               ": expected at most " + std::to_string(limit) + " (indices are 32-bit)");
    return static_cast<size_t>(n);
  }

  void header() {
    constexpr size_t int32_limit = std::numeric_limits<int32_t>::max();
    num_cameras_ = header_count("cameras", int32_limit);
    num_points_ = header_count("points", int32_limit);
    num_observations_ = header_count("observations", std::numeric_limits<int64_t>::max());
  }

  std::string counts() const {
    return std::to_string(num_cameras_) + " cameras, " + std::to_string(num_points_) + " points, " +
           std::to_string(num_observations_) + " observations";
  }

  // Value v of item k of a section, or the error that the file ends there.
  Token next(const Section& section, size_t k, int v) {
    std::optional<Token> t = cursor_.next();
    if (!t)
      fail(source_, cursor_.last_line(),
           "expected " + std::to_string(section_count(section)) + " " + std::string(section.name) +
               "s, the file ends after " + std::to_string(k) + " (" + std::string(section.name) +
               " " + std::to_string(k) + " has " + std::to_string(v) + " of its " +
               std::to_string(section.size) + " values: " + std::string(section.layout) +
               "; the header announces " + counts() + ")");
    what_ = {&section, k, v};
    return *t;
  }

  size_t section_count(const Section& section) const {
    return &section == &kObservation ? num_observations_
           : &section == &kCamera    ? num_cameras_
                                     : num_points_;
  }

  // The value being read, for messages: "camera 3 f". Built only for an error: formatting
  // it for every value would be most of the reader's time.
  std::string what() const {
    return std::string(what_.section->name) + " " + std::to_string(what_.item) + " " +
           std::string(what_.section->values[what_.value]);
  }

  double number(const Token& t) const {
    if (const std::optional<double> v = detail::try_parse_number(t.text)) return *v;
    return detail::parse_number(t.text, source_, t.line, what());  // throws
  }

  int32_t index(const Token& t, size_t count, std::string_view things) const {
    const std::optional<int64_t> parsed = detail::try_parse_integer(t.text);
    const int64_t i = parsed ? *parsed : detail::parse_integer(t.text, source_, t.line, what());
    if (i < 0 || static_cast<uint64_t>(i) >= count)
      fail(source_, t.line,
           what() + " is " + std::to_string(i) + ": out of range, " +
               (count == 0 ? std::string("there are none")
                           : "expected 0 to " + std::to_string(count - 1)) +
               " (the header announces " + std::to_string(count) + " " + std::string(things) + ")");
    return static_cast<int32_t>(i);
  }

  BalProblem::Observation observation(size_t k) {
    BalProblem::Observation o;
    o.camera = index(next(kObservation, k, 0), num_cameras_, "cameras");
    o.point = index(next(kObservation, k, 1), num_points_, "points");
    o.xy(0) = number(next(kObservation, k, 2));
    o.xy(1) = number(next(kObservation, k, 3));
    return o;
  }

  detail::LineReader& lines_;
  detail::TokenCursor cursor_;
  std::string_view source_;
  size_t max_values_ = 0;
  size_t num_cameras_ = 0, num_points_ = 0, num_observations_ = 0;
  struct {
    const Section* section = nullptr;
    size_t item = 0;
    int value = 0;
  } what_;  // the value being read (what())
};

[[noreturn]] void cannot_write(const std::string& what) {
  throw Error("cannot write BAL problem: " + what);
}

void check_writable(const BalProblem& p) {
  constexpr size_t int32_limit = std::numeric_limits<int32_t>::max();
  if (p.cameras.size() > int32_limit || p.points.size() > int32_limit)
    cannot_write("more cameras or points than 32-bit indices can name");
  for (size_t k = 0; k < p.observations.size(); ++k) {
    const BalProblem::Observation& o = p.observations[k];
    if (o.camera < 0 || static_cast<size_t>(o.camera) >= p.cameras.size() || o.point < 0 ||
        static_cast<size_t>(o.point) >= p.points.size())
      cannot_write("observation " + std::to_string(k) + " names camera " +
                   std::to_string(o.camera) + " and point " + std::to_string(o.point) +
                   ", out of range of " + std::to_string(p.cameras.size()) + " cameras and " +
                   std::to_string(p.points.size()) + " points");
    if (!o.xy.allFinite()) cannot_write("observation " + std::to_string(k) + " is not finite");
  }
  for (size_t k = 0; k < p.cameras.size(); ++k)
    if (!p.cameras[k].allFinite()) cannot_write("camera " + std::to_string(k) + " is not finite");
  for (size_t k = 0; k < p.points.size(); ++k)
    if (!p.points[k].allFinite()) cannot_write("point " + std::to_string(k) + " is not finite");
}

}  // namespace

BalProblem parse_bal(std::string_view text, std::string_view source_name) {
  detail::LineReader lines(text, source_name, kExpectedLine);
  return Reader(lines).read();
}

BalProblem read_bal(const std::filesystem::path& path) {
  detail::LineReader lines(path, kExpectedLine);
  return Reader(lines).read();
}

BalProblem read_bal(InputFile&& input) {
  detail::LineReader lines(std::move(input), kExpectedLine);
  return Reader(lines).read();
}

namespace {

// The BAL text of `p` (already checked by check_writable), line by line into `out`.
void format_lines(const BalProblem& p, detail::TextOut& out) {
  std::string& text = out.text();  // the same string across flushes
  text += std::to_string(p.cameras.size()) + " " + std::to_string(p.points.size()) + " " +
          std::to_string(p.observations.size());
  out.end_line();
  for (const BalProblem::Observation& o : p.observations) {
    text += std::to_string(o.camera) + " " + std::to_string(o.point) + " ";
    detail::append_double(text, o.xy(0));
    text += ' ';
    detail::append_double(text, o.xy(1));
    out.end_line();
  }
  const auto values = [&](const double* v, int n) {
    for (int k = 0; k < n; ++k) {
      detail::append_double(text, v[k]);
      out.end_line();
    }
  };
  for (const BalCamera& c : p.cameras) values(c.data(), 9);
  for (const Eigen::Vector3d& x : p.points) values(x.data(), 3);
}

}  // namespace

std::string format_bal(const BalProblem& p) {
  check_writable(p);
  detail::TextOut out;
  format_lines(p, out);
  return std::move(out.text());
}

void write_bal(const std::filesystem::path& path, const BalProblem& problem) {
  check_writable(problem);  // before the file is touched
  detail::AtomicFileWriter file(path);
  detail::TextOut out(&file);
  format_lines(problem, out);
  out.flush();
  file.commit();
}

Eigen::Vector3d bal_camera_point(const BalCamera& camera, const Eigen::Vector3d& x) {
  const Eigen::Vector3d w = camera.head<3>();
  const Eigen::Vector3d t = camera.segment<3>(3);
  const double theta2 = w.squaredNorm();
  if (theta2 <= std::numeric_limits<double>::epsilon()) return x + w.cross(x) + t;
  const double theta = std::sqrt(theta2);
  const Eigen::Vector3d axis = w / theta;
  const double c = std::cos(theta), s = std::sin(theta);
  return x * c + axis.cross(x) * s + axis * (axis.dot(x) * (1.0 - c)) + t;
}

Eigen::Vector2d bal_project(const BalCamera& camera, const Eigen::Vector3d& x) {
  const Eigen::Vector3d P = bal_camera_point(camera, x);
  const Eigen::Vector2d p = -P.head<2>() / P(2);
  const double r2 = p.squaredNorm();
  return camera(6) * (1.0 + r2 * (camera(7) + camera(8) * r2)) * p;
}

}  // namespace lsjit::io
