// BAL (Bundle Adjustment in the Large, Agarwal et al.) problems: reading and writing.
//
// The file is whitespace-separated tokens; line breaks and blank lines carry no meaning
// (both the one-value-per-line and the grouped variants read the same), lines only locate
// errors:
//   num_cameras num_points num_observations
//   camera point x y           num_observations times (0-based indices)
//   rx ry rz tx ty tz f k1 k2  9 values per camera: angle-axis rotation, translation,
//                              focal length, radial distortion
//   X Y Z                      3 values per point
// and nothing after the last point.
//
// Camera model (Snavely; docs/architecture.md, "Conventions"): P = R·X + t with R the
// rotation of the angle-axis r (Rodrigues), p = -P.xy / P.z, pred = f·(1 + k1‖p‖² +
// k2‖p‖⁴)·p, and the residual of an observation is pred - xy. Points in front of a camera
// have P.z < 0.
//
// Reading returns a complete problem or throws lsjit::Error "FILE:LINE: ..." for: a header
// that is not three non-negative integers (or counts beyond 32-bit indices), a camera or
// point index out of range, a token that is not a (finite) number or an integer index, a
// file that ends early (the message says which section - observation k, camera k, point k,
// 0-based - and how many values were expected), and any token after the last point.
//
// Writing emits the header, one "camera point x y" line per observation, then one value
// per line for the cameras and the points, every number in %.17g: read(write(p)) == p
// exactly. A problem the reader would not return (an index out of range, a non-finite
// value) is not written: lsjit::Error says what is wrong.
// Reading streams (text.h, LineReader): a line longer than 4096 bytes is an error at that
// line ("the line is longer than 4096 bytes: expected a BAL line"), a UTF-8 byte order
// mark at the start is skipped, and a path that is a directory or cannot be opened is
// "PATH: cannot read: is a directory" / "PATH: cannot read: <strerror>". Writing goes
// through detail::write_file_atomically, which writes only regular files (text.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

namespace lsjit::io {

class InputFile;

using BalCamera = Eigen::Matrix<double, 9, 1>;  // rx ry rz tx ty tz f k1 k2

struct BalProblem {
  struct Observation {
    int32_t camera = 0, point = 0;  // indices into cameras and points
    Eigen::Vector2d xy = Eigen::Vector2d::Zero();
  };
  std::vector<Observation> observations;
  std::vector<BalCamera> cameras;
  std::vector<Eigen::Vector3d> points;
};

BalProblem read_bal(const std::filesystem::path& path);
// The same from an input opened once (input_file.h: a pipe, a FIFO or "-", standard input).
BalProblem read_bal(InputFile&& input);
// source_name stands for the file name in error messages.
BalProblem parse_bal(std::string_view text, std::string_view source_name);

std::string format_bal(const BalProblem& problem);
// Atomic: a temporary file in the same directory, renamed over `path`.
void write_bal(const std::filesystem::path& path, const BalProblem& problem);

// The point in the camera's frame, P = R·X + t, with R from the angle-axis by Rodrigues'
// formula (first order, X + r × X, below θ² = ε, as Ceres' AngleAxisRotatePoint).
Eigen::Vector3d bal_camera_point(const BalCamera& camera, const Eigen::Vector3d& point);
// The predicted observation f·(1 + k1‖p‖² + k2‖p‖⁴)·p with p = -P.xy / P.z.
Eigen::Vector2d bal_project(const BalCamera& camera, const Eigen::Vector3d& point);

}  // namespace lsjit::io
