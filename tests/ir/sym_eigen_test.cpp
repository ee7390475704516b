#include <doctest/doctest.h>

#include "lsjit/ir/sym_eigen.h"

using lsjit::Sym;

namespace {
lsjit::ir::Signature signature(uint32_t n) {
  lsjit::ir::Signature s;
  s.name = "eigen";
  s.vars.push_back({"a", "VecVar", n, n});
  return s;
}
}  // namespace

TEST_CASE("Eigen fixed-size algebra traces with Sym") {
  lsjit::Tracer t(signature(9));
  Eigen::Matrix<Sym, 3, 3> m;
  for (int i = 0; i < 9; ++i) m(i / 3, i % 3) = t.var(0, i);
  Eigen::Matrix<Sym, 3, 1> v = m.col(0);
  Eigen::Matrix<Sym, 3, 1> w = m.col(1);
  Eigen::Matrix<Sym, 3, 1> r = (m.transpose() * m).inverse() * v.cross(w).normalized();
  r += 2.0 * v;
  Sym d = v.dot(w) + v.norm();
  Eigen::Matrix<Sym, 4, 4> m4 = Eigen::Matrix<Sym, 4, 4>::Identity();
  m4.topLeftCorner<3, 3>() = m;
  Eigen::Matrix<Sym, 4, 4> m4i = m4.inverse();
  Eigen::Matrix<Sym, 2, 2> m2 = m.topLeftCorner<2, 2>().inverse();
  Eigen::Quaternion<Sym> q(m);
  Eigen::Quaternion<Sym> qn = (q * q.inverse()).normalized();
  Eigen::AngleAxis<Sym> aa(qn);
  Eigen::AngleAxis<Sym> aa2(m);
  Eigen::Matrix<Sym, 3, 1> p = aa.toRotationMatrix() * r + aa2.axis() * aa2.angle();
  Eigen::Matrix<double, 3, 3> md = Eigen::Matrix3d::Identity();
  p = md * p + Eigen::Vector3d(1, 2, 3);
  t.set_residual({p(0), p(1), p(2), d, m4i(0, 0), m2(1, 1)});
  auto trace = t.finish();
  CHECK(trace.graph.op_count() > 50);
  CHECK(trace.signature.residual_dim == 6);
}

TEST_CASE("using a Sym outside a trace is a clear runtime error") {
  CHECK_THROWS_WITH_AS(Sym(1.0), doctest::Contains("outside a trace"), lsjit::Error);
  Sym leaked;
  {
    lsjit::Tracer t(signature(1));
    leaked = t.var(0, 0) * 2.0;
  }
  CHECK_THROWS_WITH_AS(leaked + leaked, doctest::Contains("outside a trace"), lsjit::Error);
  lsjit::Tracer t2(signature(1));
  CHECK_THROWS_WITH_AS(leaked + t2.var(0, 0), doctest::Contains("another trace"), lsjit::Error);
  Sym unset;
  CHECK_THROWS_WITH_AS(unset * 2.0, doctest::Contains("default-constructed"), lsjit::Error);
}
