// lsjit::Values' index from (type, ID) to row, against a std::map of what was set: any
// int64 IDs, in any order, growing past every rehash; copies that stay independent; and the
// solver's bulk copies in and out (rows_of, set_params_rows), in and out of order.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "lsjit/lsjit.h"

using namespace lsjit;

namespace {

const VariableType* vec2() { return variable_type<VecVar<2>>(); }

std::vector<double> row(double a) { return {a, -a}; }

void check_holds(const Values& v, const std::map<int64_t, double>& expected) {
  CHECK(v.size() == expected.size());
  for (const auto& [id, a] : expected) {
    CAPTURE(id);
    const double* p = v.params("Vec2", id);
    REQUIRE(p != nullptr);
    CHECK(p[0] == a);
    CHECK(p[1] == -a);
  }
}

}  // namespace

TEST_CASE("Values: any IDs, set in any order, are found again after every growth") {
  std::mt19937_64 rng(3);
  Values v;
  std::map<int64_t, double> expected;
  const int64_t extremes[] = {0, -1, 1, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  for (int64_t id : extremes) {
    v.set_params(vec2(), id, row(static_cast<double>(expected.size())).data());
    expected[id] = static_cast<double>(expected.size());
  }
  for (int k = 0; k < 5000; ++k) {
    // Consecutive runs, strides and random IDs, some set twice (the second value wins).
    const int64_t id = k % 3 == 0 ? k : k % 3 == 1 ? int64_t{k} * 1024 : static_cast<int64_t>(rng() % 4000);
    const double a = 0.5 * k;
    v.set_params(vec2(), id, row(a).data());
    expected[id] = a;
    if (k % 997 == 0) check_holds(v, expected);
  }
  check_holds(v, expected);
  CHECK(v.params("Vec2", 4001 * 1024 + 1) == nullptr);
  CHECK(v.params("Vec3", 0) == nullptr);

  // A copy is independent of the original.
  Values copy = v;
  copy.set_params(vec2(), 0, row(99).data());
  copy.set_params(vec2(), -77, row(98).data());
  check_holds(v, expected);
  std::map<int64_t, double> copied = expected;
  copied[0] = 99;
  copied[-77] = 98;
  check_holds(copy, copied);
}

TEST_CASE("Values: a type's rows in bulk, out and in, in the order first set") {
  Values v;
  const std::vector<int64_t> ids = {9, 3, 7};
  for (int64_t id : ids) v.set_params(vec2(), id, row(static_cast<double>(id)).data());
  const Values::TypeRows rows = v.rows_of("Vec2");
  CHECK(std::vector<int64_t>(rows.ids.begin(), rows.ids.end()) == ids);
  CHECK(std::vector<double>(rows.params.begin(), rows.params.end()) == std::vector<double>{9, -9, 3, -3, 7, -7});
  CHECK(v.rows_of("SE3").ids.empty());

  // The same IDs in the same order: one copy.
  const std::vector<double> same = {1, 2, 3, 4, 5, 6};
  v.set_params_rows(vec2(), ids, same.data());
  CHECK(std::vector<double>(v.rows_of("Vec2").params.begin(), v.rows_of("Vec2").params.end()) == same);
  // Another order, and an ID not yet set: each row to its own variable.
  const std::vector<int64_t> other = {7, 11, 9};
  const std::vector<double> values = {10, 20, 30, 40, 50, 60};
  v.set_params_rows(vec2(), other, values.data());
  CHECK(v.size() == 4);
  CHECK(v.params("Vec2", 7)[0] == 10);
  CHECK(v.params("Vec2", 11)[1] == 40);
  CHECK(v.params("Vec2", 9)[0] == 50);
  CHECK(v.params("Vec2", 3)[0] == 3);  // untouched
  // A type not yet present.
  Values w;
  w.set_params_rows(vec2(), other, values.data());
  CHECK(w.size() == 3);
  CHECK(w.params("Vec2", 9)[1] == 60);
}
