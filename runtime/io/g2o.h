// g2o pose graphs: reading and writing the SE2 and SE3:QUAT subset of the g2o text format.
//
// Lines (whitespace-separated; blank lines and '#' comments are ignored):
//   VERTEX_SE2 id x y theta
//   EDGE_SE2 i j dx dy dtheta  I11 I12 I13 I22 I23 I33
//   VERTEX_SE3:QUAT id x y z qx qy qz qw
//   EDGE_SE3:QUAT i j dx dy dz qx qy qz qw  I11 I12 ... I16 I22 ... I66
//   FIX id [id ...]
// The information matrix Ω is given as its upper triangle, row by row, in the tangent order
// of the poses: (x, y, θ) for SE2, (x, y, z, rx, ry, rz) for SE3 (docs/variables.md).
//
// What a returned PoseGraph guarantees:
//   - dimension is 2 or 3; poses2 (dimension 2) or poses3 (dimension 3) has one pose per
//     vertex_ids entry, in file order, and the other pose and edge vectors are empty.
//   - vertex ids are unique (not necessarily contiguous or sorted); every edge endpoint and
//     every FIX id names a vertex. There is at least one vertex.
//   - SE2 angles are wrapped into (-π, π] before their cos and sin are taken.
//   - SE3 quaternions (x y z w in the file) are unit: normalized after reading unless
//     |‖q‖² - 1| <= 8ε already (renormalizing a unit quaternion only moves low bits, and
//     keeping it makes write -> read the identity).
//   - information is symmetric positive definite; sqrt_information is its upper Cholesky
//     factor U (upper triangular, UᵀU = Ω; Eigen's LLT gives L = Uᵀ). The residual of an
//     edge is U·e with e as in docs/architecture.md, "Conventions". With a repair mode
//     (G2oReadOptions), an edge whose Ω as written has no Cholesky factor carries the
//     repaired Ω and its factor, and information_repaired is set; every other edge is the
//     file's, bit for bit, whatever the mode.
//   - Edge::line is the 1-based line the edge came from (0 for edges not read from a file);
//     it is provenance, not content: writing renumbers lines.
//
// Errors: lsjit::Error "FILE:LINE: what was wrong and what was expected" for unknown tags,
// too few or too many numbers, a token that is not a (finite) number or an integer id, a
// duplicate vertex id, an edge or FIX naming a vertex that is defined nowhere in the file
// (vertices may come after the edges that use them; the message names the edge's line and
// `i -> j`), a zero quaternion, an information matrix that is not positive definite (and
// that the options' repair mode does not repair; the message names the mode that would),
// SE2 and SE3 elements in one file, and a file without vertices (at its last line).
// A reader returns a complete graph or throws; there is no partial result.
//
// Writing emits the vertices in vertex_ids order, then the edges, then one FIX line per
// fixed id, with every number in %.17g. It writes `information` (sqrt_information is not
// read). An SE2 angle is atan2(sin, cos) of the pose's rotation, or a double within 2 ulps
// of it whose cos and sin are exactly the rotation's: a graph returned by the reader is
// written and read back to exactly the same numbers. A graph that the reader would not
// return (bad dimension, size mismatch, duplicate or missing ids, non-finite numbers, an Ω
// that is not positive definite, unless G2oWriteOptions allow it) is not written:
// lsjit::Error names what is wrong. A graph read with a repair mode is written with the
// repaired matrices, so it reads back without one.
// Reading streams (text.h, LineReader): a line longer than 4096 bytes is an error at that
// line ("the line is longer than 4096 bytes: expected a g2o line"), a UTF-8 byte order
// mark at the start is skipped, and a path that is a directory or cannot be opened is
// "PATH: cannot read: is a directory" / "PATH: cannot read: <strerror>". Writing goes
// through detail::write_file_atomically, which writes only regular files (text.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lsjit/runtime/lie/lie.h"

namespace lsjit::io {

class InputFile;

// What the reader does with an information matrix Ω that has no Cholesky factor. Some
// widely used public files have such matrices (SE-Sync's 3D datasets, through their
// translation-rotation coupling terms). The residual U·e needs the factor, so by default
// such an edge is an error; a repair is opt in, and changes only the edges that need it.
enum class InformationRepair {
  None,  // Ω as written; an Ω without a Cholesky factor is an error (the default)
  // Zero the translation-rotation coupling: SE2 Ω(0:2, 2) and Ω(2, 0:2) (the x, y - θ
  // terms), SE3 the off-diagonal 3x3 blocks Ω(0:3, 3:6) and Ω(3:6, 0:3). The diagonal
  // blocks are kept as written. What Ceres-based benchmark harnesses do for these files.
  // An Ω whose diagonal blocks are not positive definite stays an error.
  BlockDiagonal,
  // Ω = V·diag(λ)·Vᵀ (symmetric eigendecomposition) becomes V·diag(max(λ, δ))·Vᵀ with
  // δ = kNearestPdFloor · λmax: the nearest matrix (in the Frobenius norm) whose
  // eigenvalues are all >= δ. The floor keeps the factor's condition number at most
  // 1/√kNearestPdFloor ≈ 3e4, far from where a double Cholesky breaks down, while
  // leaving eigenvalues above it alone. An Ω whose largest eigenvalue is not > 0 or not
  // finite stays an error (there is no scale to clamp against).
  NearestPD,
};
inline constexpr double kNearestPdFloor = 1e-9;

// "none", "block-diagonal", "nearest-pd": the names the CLI (--repair-information) and
// SolveSummary use.
std::string_view information_repair_name(InformationRepair mode);
// The mode of one of those names, or nullopt.
std::optional<InformationRepair> information_repair_from_name(std::string_view name);

struct G2oReadOptions {
  // Applied to an edge only when its Ω as written has no Cholesky factor.
  InformationRepair repair_information = InformationRepair::None;
};

struct G2oWriteOptions {
  // Write information matrices that are symmetric and finite but not positive definite
  // (files for testing the repair modes; the reader returns such a graph only with a repair
  // mode). Such an edge's sqrt_information is not looked at.
  bool allow_indefinite_information = false;
};

struct PoseGraph {
  struct Edge2 {
    int64_t from = 0, to = 0;
    SE2d measurement;
    Eigen::Matrix3d information = Eigen::Matrix3d::Identity();
    Eigen::Matrix3d sqrt_information = Eigen::Matrix3d::Identity();
    size_t line = 0;
    // The file's Ω had no Cholesky factor; information is its repair (information_repair).
    bool information_repaired = false;
  };
  struct Edge3 {
    int64_t from = 0, to = 0;
    SE3d measurement;
    Eigen::Matrix<double, 6, 6> information = Eigen::Matrix<double, 6, 6>::Identity();
    Eigen::Matrix<double, 6, 6> sqrt_information = Eigen::Matrix<double, 6, 6>::Identity();
    size_t line = 0;
    bool information_repaired = false;  // as Edge2's
  };

  int dimension = 0;                // 2: VERTEX_SE2/EDGE_SE2; 3: VERTEX_SE3:QUAT/EDGE_SE3:QUAT
  std::vector<int64_t> vertex_ids;  // file order
  std::vector<SE2d> poses2;         // dimension 2: poses2[k] is vertex vertex_ids[k]
  std::vector<SE3d> poses3;         // dimension 3: likewise
  std::vector<Edge2> edges2;
  std::vector<Edge3> edges3;
  std::vector<int64_t> fixed;  // ids on FIX lines, in file order
  // The file had edges but no VERTEX lines (as several of SE-Sync's data sets do): the
  // vertices are the ids its edges and FIX lines name, ascending, at identity poses, which
  // are no estimate. initialize_chordal replaces them and clears this; `lsjit solve` does
  // so whatever --init says, and the report says so. Not written (write_g2o writes the
  // vertices it has).
  bool vertices_from_edges = false;
  // The repair mode the graph was read with (G2oReadOptions); provenance, not written.
  InformationRepair information_repair = InformationRepair::None;

  size_t num_vertices() const { return vertex_ids.size(); }
  size_t num_edges() const { return dimension == 3 ? edges3.size() : edges2.size(); }
  // Edges with information_repaired set.
  size_t num_repaired_edges() const;
  // id -> position in vertex_ids. Build it once to resolve many edges.
  std::unordered_map<int64_t, size_t> vertex_index() const;
  // Position of `id` in vertex_ids, or -1 (a linear search).
  std::ptrdiff_t index_of(int64_t id) const;
  // The vertices a solver holds constant (docs/architecture.md, "Conventions"): the FIX
  // ids if there are any, else the lowest vertex id. Empty only for a graph without
  // vertices.
  std::vector<int64_t> held_constant() const;
};

PoseGraph read_g2o(const std::filesystem::path& path, const G2oReadOptions& options = {});
// The same from an input opened once (input_file.h: a pipe, a FIFO or "-", standard input).
PoseGraph read_g2o(InputFile&& input, const G2oReadOptions& options = {});
// source_name stands for the file name in error messages.
PoseGraph parse_g2o(std::string_view text, std::string_view source_name,
                    const G2oReadOptions& options = {});

std::string format_g2o(const PoseGraph& graph, const G2oWriteOptions& options = {});
// Atomic: a temporary file in the same directory, renamed over `path`.
void write_g2o(const std::filesystem::path& path, const PoseGraph& graph,
               const G2oWriteOptions& options = {});

// The upper Cholesky factor U (UᵀU = Ω, zeros below the diagonal) of a symmetric positive
// definite Ω, or nullopt when Ω is not symmetric, not finite or not positive definite.
std::optional<Eigen::Matrix3d> upper_cholesky(const Eigen::Matrix3d& information);
std::optional<Eigen::Matrix<double, 6, 6>> upper_cholesky(
    const Eigen::Matrix<double, 6, 6>& information);

// Ω repaired by `mode` (InformationRepair; None returns Ω itself), applied whatever Ω is:
// the reader calls it only for an Ω without a Cholesky factor. nullopt when the mode's own
// precondition fails (BlockDiagonal: never; NearestPD: the largest eigenvalue is not > 0 or
// not finite). The result is exactly symmetric; whether it has a Cholesky factor is the
// caller's to check (upper_cholesky).
std::optional<Eigen::Matrix3d> repair_information(const Eigen::Matrix3d& information,
                                                  InformationRepair mode);
std::optional<Eigen::Matrix<double, 6, 6>> repair_information(
    const Eigen::Matrix<double, 6, 6>& information, InformationRepair mode);

// θ in (-π, π]: θ itself when it is already there, else θ minus the nearest multiple of 2π.
double wrap_angle(double theta);

}  // namespace lsjit::io
