// The supernodal Cholesky's loops (runtime/solve/linear/supernodal_kernels.h) for every instruction
// set the host can run, against straightforward loops: the whole-factorization tests
// (linear_supernodal_test.cpp) exercise only the host's choice. Shapes cover the vector
// widths' remainders (1..17 rows, 1..9 columns) and the padded reads past each column.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "lsjit/common/cpu.h"
#include "lsjit/runtime/solve/linear/supernodal_kernels.h"

namespace linear_supernodal_kernels_test {  // its using-directives stay in this file (tests are unity-built)
using namespace lsjit::linear;
using namespace lsjit::linear::supernodal;

namespace {

constexpr Isa kIsas[] = {Isa::Generic, Isa::Avx2, Isa::Avx512};

const char* isa_name(Isa isa) {
  return isa == Isa::Generic ? "generic" : isa == Isa::Avx2 ? "avx2" : "avx512";
}

// A panel of n columns and n + m rows (leading dimension ld = n + m) filled with random
// values, the diagonal block made dominant so that it has a Cholesky factor, and
// kProductRowPad doubles of padding after it (NaN: a loop that used them would show).
std::vector<double> random_panel(int64_t n, int64_t m, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  const int64_t ld = n + m;
  std::vector<double> panel(ld * n + kProductRowPad, std::nan(""));
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < ld; ++r) panel[c * ld + r] = u(rng);
  for (int64_t c = 0; c < n; ++c) panel[c * ld + c] = 2.0 * static_cast<double>(n) + 1;
  return panel;
}

// The factor in the first n columns of `panel` (leading dimension ld) times its
// transpose reproduces `original` in those columns' rows [c, rows), to a relative tolerance.
template <class T>
void check_factor(const std::vector<T>& panel, const std::vector<double>& original, int64_t n,
                  int64_t rows, int64_t ld, double tolerance) {
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = c; r < rows; ++r) {
      double sum = 0;
      for (int64_t l = 0; l <= c; ++l) sum += double(panel[l * ld + r]) * panel[l * ld + c];
      CHECK(sum == doctest::Approx(original[c * ld + r]).epsilon(tolerance));
    }
}

// solve_diagonal and solve_diagonal_transposed on the factored diagonal block of `panel`:
// L x = y and Lᵀ x = y, multiplied back in double, to `tolerance` of y's scale (1).
template <class T>
void check_diagonal_solves(const KernelsOf<T>& k, const std::vector<T>& panel, int64_t n, int64_t ld,
                           double tolerance, std::mt19937_64& rng) {
  std::vector<T> y(n);
  for (T& v : y) v = static_cast<T>(std::uniform_real_distribution<double>(-1, 1)(rng));
  std::vector<T> x = y;
  k.solve_diagonal(panel.data(), n, ld, x.data());
  for (int64_t r = 0; r < n; ++r) {
    double sum = 0;
    for (int64_t c = 0; c <= r; ++c) sum += double(panel[c * ld + r]) * x[c];
    CHECK(sum == doctest::Approx(y[r]).epsilon(tolerance).scale(1.0));
  }
  x = y;
  k.solve_diagonal_transposed(panel.data(), n, ld, x.data());
  for (int64_t c = 0; c < n; ++c) {
    double sum = 0;
    for (int64_t r = c; r < n; ++r) sum += double(panel[c * ld + r]) * x[r];
    CHECK(sum == doctest::Approx(y[c]).epsilon(tolerance).scale(1.0));
  }
}

}  // namespace

// The kernels of scalar type T against plain loops in double, to a relative tolerance
// (float kernels: float's rounding).
template <class T>
void check_kernels(double tolerance) {
  std::mt19937_64 rng(7);
  for (Isa isa : kIsas) {
    if (!isa_supported(isa)) continue;
    const KernelsOf<T>& k = kernels<T>(isa);
    for (int64_t n = 1; n <= 9; n += 2) {
      for (int64_t m = 1; m <= 17; ++m) {
        CAPTURE(isa_name(isa));
        CAPTURE(n);
        CAPTURE(m);
        const int64_t ld = n + m;
        const std::vector<double> original = random_panel(n, m, rng);
        std::vector<T> panel(original.begin(), original.end());

        // factor: L11 L11ᵀ reproduces the diagonal block's lower triangle.
        REQUIRE(k.factor(panel.data(), n, ld) == -1);
        check_factor(panel, original, n, n, ld, tolerance);

        // solve: B L11ᵀ reproduces the block below.
        k.solve(panel.data(), n, m, ld);
        for (int64_t c = 0; c < n; ++c)
          for (int64_t r = 0; r < m; ++r) {
            double sum = 0;
            for (int64_t l = 0; l <= c; ++l) sum += panel[l * ld + n + r] * panel[l * ld + c];
            CHECK(sum == doctest::Approx(original[c * ld + n + r]).epsilon(tolerance));
          }

        // factor_panel: the same panel as factor then solve, bit for bit.
        std::vector<T> fused(original.begin(), original.end());
        REQUIRE(k.factor_panel(fused.data(), n, ld) == -1);
        for (int64_t c = 0; c < n; ++c)
          for (int64_t r = c; r < ld; ++r) CHECK(fused[c * ld + r] == panel[c * ld + r]);

        // product: W's lower triangle is B Bᵀ.
        const int64_t ldw = product_leading_dimension(m);
        std::vector<T> W(ldw * ldw, T{0});
        k.product(panel.data() + n, n, m, ld, W.data(), ldw);
        for (int64_t c = 0; c < m; ++c)
          for (int64_t r = c; r < m; ++r) {
            double sum = 0;
            for (int64_t l = 0; l < n; ++l) sum += panel[l * ld + n + r] * panel[l * ld + n + c];
            CHECK(W[c * ldw + r] == doctest::Approx(sum).epsilon(tolerance));
          }

        // multiply and multiply_transposed: g = B y and y − Bᵀ g.
        std::vector<T> y(n), g(m), y2(n);
        for (T& v : y) v = static_cast<T>(std::uniform_real_distribution<double>(-1, 1)(rng));
        k.multiply(panel.data() + n, n, m, ld, y.data(), g.data());
        for (int64_t r = 0; r < m; ++r) {
          double sum = 0;
          for (int64_t c = 0; c < n; ++c) sum += panel[c * ld + n + r] * y[c];
          CHECK(g[r] == doctest::Approx(sum).epsilon(tolerance));
        }
        y2 = y;
        k.multiply_transposed(panel.data() + n, n, m, ld, g.data(), y2.data());
        for (int64_t c = 0; c < n; ++c) {
          double sum = y[c];
          for (int64_t r = 0; r < m; ++r) sum -= panel[c * ld + n + r] * g[r];
          CHECK(y2[c] == doctest::Approx(sum).epsilon(tolerance));
        }
      }
    }
  }
}

// factor_blocked on panels wider than its 16-column blocks and than one register tile
// (its remainders of rows past ld and of columns past n included): L Lᵀ reproduces the
// panel's lower part, the diagonal block and every row below it. The NaN padding past the
// panel may be read, never used.
template <class T>
void check_blocked(double tolerance) {
  std::mt19937_64 rng(13);
  for (Isa isa : kIsas) {
    if (!isa_supported(isa)) continue;
    for (int64_t n : {1, 7, 16, 17, 23, 32, 33, 41, 70})
      for (int64_t m : {0, 1, 5, 8, 16, 19, 45}) {
        CAPTURE(isa_name(isa));
        CAPTURE(n);
        CAPTURE(m);
        const int64_t ld = n + m;
        const std::vector<double> original = random_panel(n, m, rng);
        std::vector<T> panel(original.begin(), original.end());
        REQUIRE(kernels<T>(isa).factor_blocked(panel.data(), n, ld) == -1);
        check_factor(panel, original, n, ld, ld, tolerance);
        check_diagonal_solves(kernels<T>(isa), panel, n, ld, tolerance, rng);
        // Nothing written past the panel.
        for (int64_t k = ld * n; k < ld * n + kProductRowPad; ++k) CHECK(std::isnan(panel[k]));
      }
  }
}

TEST_CASE("supernodal kernels: every instruction set matches plain loops, in double and in float") {
  check_kernels<double>(1e-12);
  check_kernels<float>(2e-5);  // mixed-precision solves (supernodal_cholesky.h)
  check_blocked<double>(1e-12);
  check_blocked<float>(2e-5);
}

TEST_CASE("supernodal kernels: subtract_update follows the row runs from the diagonal down") {
  // W is 7 x 7 (rows and columns 0..6 of the workspace); the update covers W's columns 2..4,
  // which are the target's columns 10..12 (rows[w] - column_begin = w - 2). Two runs: W rows
  // 2..4 land on target rows 0..2 and W rows 5..6 on target rows 6..7.
  const int64_t ldw = product_leading_dimension(7), target_ld = 9, column_begin = 10;
  const std::vector<int64_t> rows = {0, 0, 10, 11, 12, 40, 41};
  const std::vector<SupernodalAnalysis::RowRun> runs = {{2, 0, 3}, {5, 6, 2}};
  for (Isa isa : kIsas) {
    if (!isa_supported(isa)) continue;
    CAPTURE(isa_name(isa));
    std::vector<double> W(ldw * ldw);
    for (size_t i = 0; i < W.size(); ++i) W[i] = 1.0 + static_cast<double>(i);
    std::vector<double> target(target_ld * 3, 100.0), expected = target;
    for (int64_t w = 2; w <= 4; ++w)
      for (const auto& run : runs)
        for (int64_t r = std::max<int64_t>(run.source_row, w); r < run.source_row + run.length; ++r)
          expected[(w - 2) * target_ld + run.target_row + (r - run.source_row)] -= W[w * ldw + r];
    kernels(isa).subtract(W.data(), ldw, 2, 5, rows.data(), column_begin, target.data(), target_ld,
                          runs.data(), static_cast<int64_t>(runs.size()));
    CHECK(target == expected);
    // Above the diagonal nothing moves: column 12 (w = 4) keeps target rows 0 and 1.
    CHECK(target[2 * target_ld + 0] == 100.0);
    CHECK(target[2 * target_ld + 1] == 100.0);
  }
}

TEST_CASE("supernodal kernels: factor_panel reports the first bad pivot, NaN included") {
  std::mt19937_64 rng(11);
  for (Isa isa : kIsas) {
    if (!isa_supported(isa)) continue;
    CAPTURE(isa_name(isa));
    for (double bad : {-1.0, 0.0, std::nan("")}) {
      std::vector<double> panel = random_panel(5, 4, rng);
      panel[3 * 9 + 3] = bad;  // column 3's pivot, before the earlier columns subtract
      // Columns 0-2 subtract from it, so a negative or zero start stays not positive.
      for (int64_t l = 0; l < 3; ++l) panel[l * 9 + 3] = 0;
      std::vector<double> copy = panel;
      CHECK(kernels(isa).factor_panel(panel.data(), 5, 9) == 3);
      CHECK(kernels(isa).factor_blocked(copy.data(), 5, 9) == 3);
      // In the second block of 16 columns, after the first block's tiles updated it.
      std::vector<double> wide = random_panel(40, 6, rng);
      wide[21 * 46 + 21] = bad;
      for (int64_t l = 0; l < 21; ++l) wide[l * 46 + 21] = 0;
      CHECK(kernels(isa).factor_blocked(wide.data(), 40, 46) == 21);
    }
  }
}

namespace {
int threads_of_this_process() {
  int n = 0;
  for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}
}  // namespace

// OpenBLAS' pthread build: nonzero while its worker threads exist (they are started by its
// library constructor when the machine has more than one core). Weak: lsjit loads OpenBLAS
// with dlopen and does not link it, so this is null unless something else links it.
extern "C" int blas_server_avail __attribute__((weak));

bool openblas_mapped() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("libopenblas") != std::string::npos) return true;
  return false;
}

// An idle OpenBLAS worker spins in sched_yield for about 0.1 s: in a short lsjit process it
// held the second core that the cold solve's compiles need. init_blas() joins the workers,
// and a later BLAS call does not start them again. The thread count is checked relative to
// the start, so that threads left by other test cases in the same process do not matter.
// ctest runs each test case in a process of its own, where nothing has loaded OpenBLAS yet;
// run in one process with others, the first half cannot be checked and is skipped.
TEST_CASE("supernodal kernels: OpenBLAS is loaded on the first large panel, not before") {
  if (openblas_mapped()) {
    MESSAGE("OpenBLAS was loaded by an earlier test case in this process: run this one alone");
  } else {
    // Panels within our own kernels' sizes never load it.
    const int64_t n = 8, ld = 12;
    std::vector<double> small(n * ld, 0.0);
    for (int64_t c = 0; c < n; ++c) small[c * ld + c] = 4.0;
    REQUIRE(lsjit::linear::supernodal::factor_panel(small.data(), n, ld) == -1);
    CHECK_FALSE(openblas_mapped());
  }
  const int64_t n = 1024, ld = 1100;  // past kOwnPanelEntries: OpenBLAS' potrf and trsm
  std::vector<double> panel(n * ld, 0.0);
  for (int64_t c = 0; c < n; ++c) panel[c * ld + c] = 4.0;
  REQUIRE(lsjit::linear::supernodal::factor_panel(panel.data(), n, ld) == -1);
  CHECK(openblas_mapped());
  CHECK(panel[0] == 2.0);
}

TEST_CASE("supernodal kernels: prefer_avx512_blas keeps a user's OPENBLAS_CORETYPE and picks SkylakeX only on Zen 5") {
  const char* saved = std::getenv("OPENBLAS_CORETYPE");
  const std::string restore = saved ? saved : "";
  setenv("OPENBLAS_CORETYPE", "Haswell", 1);
  lsjit::linear::supernodal::prefer_avx512_blas();
  CHECK(std::string(std::getenv("OPENBLAS_CORETYPE")) == "Haswell");
  unsetenv("OPENBLAS_CORETYPE");
  lsjit::linear::supernodal::prefer_avx512_blas();
  const lsjit::HostCpu& cpu = lsjit::host_cpu();
  const bool zen5_like = cpu.name.rfind("AuthenticAMD", 0) == 0 && cpu.x86_64_level >= 4 &&
                         !lsjit::cpu_splits_512_bit_operations();
  CAPTURE(cpu.name);
  const char* chosen = std::getenv("OPENBLAS_CORETYPE");
  if (zen5_like) CHECK((chosen && std::string(chosen) == "SkylakeX"));
  else CHECK(chosen == nullptr);
  if (saved) setenv("OPENBLAS_CORETYPE", restore.c_str(), 1);
  else unsetenv("OPENBLAS_CORETYPE");
}

TEST_CASE("supernodal kernels: init_blas leaves no BLAS worker threads behind") {
  const int before = threads_of_this_process();
  lsjit::linear::supernodal::init_blas();
  const int after = threads_of_this_process();
  CHECK(after <= before);
  if (&blas_server_avail != nullptr) CHECK(blas_server_avail == 0);
  lsjit::linear::supernodal::init_blas();  // once only: a second call changes nothing
  CHECK(threads_of_this_process() == after);
  // A panel past kOwnPanelEntries goes to OpenBLAS (potrf, trsm): 4 I on the diagonal
  // block, ones below.
  const int64_t n = 1024, ld = 1100;
  std::vector<double> panel(n * ld, 0.0);
  for (int64_t c = 0; c < n; ++c) {
    panel[c * ld + c] = 4.0;
    for (int64_t r = n; r < ld; ++r) panel[c * ld + r] = 1.0;
  }
  REQUIRE(lsjit::linear::supernodal::factor_panel(panel.data(), n, ld) == -1);
  CHECK(panel[0] == 2.0);
  CHECK(panel[n] == 0.5);  // below row n of column 0: 1 / 2
  CHECK(threads_of_this_process() == after);
  if (&blas_server_avail != nullptr) CHECK(blas_server_avail == 0);
}
}  // namespace linear_supernodal_kernels_test
