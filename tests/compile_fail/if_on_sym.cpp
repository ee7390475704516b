// Compiled twice by expect_compile_failure.cmake: with LSJIT_CONTROL it uses lsjit::select
// and must compile; without it, it branches on a traced comparison and must not.
#include <lsjit/ir/sym.h>

lsjit::Sym clamp_low(const lsjit::Sym& a, const lsjit::Sym& b) {
#ifdef LSJIT_CONTROL
  return lsjit::select(a < b, b, a);
#else
  if (a < b) return b;
  return a;
#endif
}
