// The AVX-512 assembler of tier 0's machine code (compiler/tier0/x86_avx512.h) against LLVM's
// assembler: a table of encodings llvm-mc 19 gave for one instance of every form, and,
// where llvm-mc is installed (LLVM 19's tools come with llvm-19-dev), every form with
// registers across zmm0-zmm31 and k0-k7 and displacements of every size, assembled by
// llvm-mc in the test and compared byte for byte.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "../support/run_cli.h"
#include "lsjit/compiler/tier0/x86_avx512.h"

using namespace lsjit::compiler::x86;
using lsjit::testing::CliRun;
using lsjit::testing::run_shell;

namespace {

std::string hex(const std::vector<uint8_t>& bytes) {
  std::string s;
  char buf[8];
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s0x%02x", i ? "," : "", bytes[i]);
    s += buf;
  }
  return s;
}

std::string encode(const std::function<void(Assembler&)>& f) {
  Assembler a;
  f(a);
  return hex(a.bytes());
}

Zmm z(int r) { return {static_cast<uint8_t>(r)}; }
Mask k(int r) { return {static_cast<uint8_t>(r)}; }

struct Case {
  std::string text;  // Intel syntax, as llvm-mc reads it
  std::function<void(Assembler&)> emit;
};

// Every form, over registers that set each extension bit (R, X, B, R', V') on and off,
// and displacements of 0, one byte (disp8*64) and four.
std::vector<Case> all_forms() {
  std::vector<Case> cases;
  auto R = [](int r) { return "zmm" + std::to_string(r); };
  const struct {
    const char* name;
    Binary op;
  } binaries[] = {{"vaddpd", Binary::Add}, {"vsubpd", Binary::Sub}, {"vmulpd", Binary::Mul},
                  {"vdivpd", Binary::Div}, {"vminpd", Binary::Min}, {"vmaxpd", Binary::Max},
                  {"vpxorq", Binary::Xor}, {"vpandq", Binary::And}};
  const struct {
    const char* name;
    FmaForm form;
  } fmas[] = {{"vfmadd132pd", FmaForm::F132}, {"vfmadd213pd", FmaForm::F213}, {"vfmadd231pd", FmaForm::F231}};
  const int regs[] = {0, 7, 8, 15, 16, 23, 24, 31};
  const int32_t disps[] = {0, 64, -8192, 8128, 8192, 100, -1048576};
  const Gpr bases[] = {Gpr::rdi, Gpr::rsi, Gpr::rdx, Gpr::rbp, Gpr::rax};
  const char* base_names[] = {"rdi", "rsi", "rdx", "rbp", "rax"};
  auto mem_text = [&](int b, int32_t d) {
    return std::string("zmmword ptr [") + base_names[b] + (d < 0 ? " - " : " + ") + std::to_string(d < 0 ? -d : d) + "]";
  };
  for (int r : regs)
    for (int s : regs) {
      for (int t : {1, 12, 19, 30}) {
        for (const auto& b : binaries)
          cases.push_back({std::string(b.name) + " " + R(r) + ", " + R(s) + ", " + R(t),
                           [=](Assembler& a) { a.binary(b.op, z(r), z(s), z(t)); }});
        for (const auto& f : fmas)
          cases.push_back({std::string(f.name) + " " + R(r) + ", " + R(s) + ", " + R(t),
                           [=](Assembler& a) { a.fma(f.form, z(r), z(s), z(t)); }});
        cases.push_back({"vblendmpd " + R(r) + " {k" + std::to_string(t % 7 + 1) + "}, " + R(s) + ", " + R(t),
                         [=](Assembler& a) { a.blend(z(r), k(t % 7 + 1), z(s), z(t)); }});
      }
      for (int b = 0; b < 5; ++b)
        for (int32_t d : disps) {
          const Mem m{bases[b], d};
          cases.push_back({std::string(binaries[(r + b) % 8].name) + " " + R(r) + ", " + R(s) + ", " + mem_text(b, d),
                           [=](Assembler& a) { a.binary(binaries[(r + b) % 8].op, z(r), z(s), m); }});
          cases.push_back({std::string(fmas[(s + b) % 3].name) + " " + R(r) + ", " + R(s) + ", " + mem_text(b, d),
                           [=](Assembler& a) { a.fma(fmas[(s + b) % 3].form, z(r), z(s), m); }});
        }
      cases.push_back({"vmovapd " + R(r) + ", " + R(s), [=](Assembler& a) { a.move(z(r), z(s)); }});
      cases.push_back({"vmovapd " + R(r) + " {k3}, " + R(s), [=](Assembler& a) { a.move(z(r), z(s), k(3)); }});
      cases.push_back({"vsqrtpd " + R(r) + ", " + R(s), [=](Assembler& a) { a.sqrt(z(r), z(s)); }});
      cases.push_back({"vrndscalepd " + R(r) + ", " + R(s) + ", 9", [=](Assembler& a) { a.round(z(r), z(s), 9); }});
      for (int p : {0x00, 0x11, 0x12, 0x03, 0x04, 0x1e, 0x1d})
        cases.push_back({"vcmppd k" + std::to_string(s % 8) + " {k" + std::to_string(r % 7 + 1) + "}, " + R(r) + ", " +
                             R(s) + ", " + std::to_string(p),
                         [=](Assembler& a) { a.compare(k(s % 8), z(r), z(s), Compare(p), k(r % 7 + 1)); }});
      cases.push_back({"vcmppd k" + std::to_string(r % 8) + ", " + R(s) + ", " + R(r) + ", 3",
                       [=](Assembler& a) { a.compare(k(r % 8), z(s), z(r), Compare::UnordQ); }});
    }
  for (int r : regs)
    for (int b = 0; b < 5; ++b)
      for (int32_t d : disps) {
        const Mem m{bases[b], d};
        cases.push_back({"vmovupd " + R(r) + ", " + mem_text(b, d), [=](Assembler& a) { a.load(z(r), m); }});
        cases.push_back({"vmovupd " + mem_text(b, d) + ", " + R(r), [=](Assembler& a) { a.store(m, z(r)); }});
        cases.push_back({"vmovupd " + R(r) + " {k2} {z}, " + mem_text(b, d),
                         [=](Assembler& a) { a.load_masked_zero(z(r), m, k(2)); }});
        cases.push_back({"vsqrtpd " + R(r) + ", " + mem_text(b, d), [=](Assembler& a) { a.sqrt(z(r), m); }});
        cases.push_back({"vrndscalepd " + R(r) + ", " + mem_text(b, d) + ", 10", [=](Assembler& a) { a.round(z(r), m, 10); }});
        cases.push_back({"vcmppd k1, " + R(r) + ", " + mem_text(b, d) + ", 4",
                         [=](Assembler& a) { a.compare(k(1), z(r), m, Compare::NeqUQ); }});
      }
  for (int a1 = 0; a1 < 8; ++a1)
    for (int b1 : {0, 3, 7})
      for (int c1 : {1, 6})
        cases.push_back({"korw k" + std::to_string(a1) + ", k" + std::to_string(b1) + ", k" + std::to_string(c1),
                         [=](Assembler& a) { a.kor(k(a1), k(b1), k(c1)); }});
  for (int32_t v : {64, -128, 127, 128, 4096})
    cases.push_back({"add rdi, " + std::to_string(v), [=](Assembler& a) { a.add_rdi(v); }});
  cases.push_back({"mov ecx, 16", [](Assembler& a) { a.mov_ecx(16); }});
  cases.push_back({"dec ecx", [](Assembler& a) { a.dec_ecx(); }});
  cases.push_back({"vzeroupper", [](Assembler& a) { a.vzeroupper(); }});
  cases.push_back({"ret", [](Assembler& a) { a.ret(); }});
  return cases;
}

}  // namespace

TEST_CASE("x86 assembler: one of every form as llvm-mc 19 encodes it") {
  const struct {
    std::function<void(Assembler&)> emit;
    const char* expected;  // llvm-mc -show-encoding, for the instruction in the comment
  } table[] = {
      // vmovupd zmm0, [rdi + 1024]; zmm31, [rdi - 8192]; [rdx + 192], zmm17; zmm9, [rdi]
      {[](Assembler& a) { a.load(z(0), {Gpr::rdi, 1024}); }, "0x62,0xf1,0xfd,0x48,0x10,0x47,0x10"},
      {[](Assembler& a) { a.load(z(31), {Gpr::rdi, -8192}); }, "0x62,0x61,0xfd,0x48,0x10,0x7f,0x80"},
      {[](Assembler& a) { a.store({Gpr::rdx, 192}, z(17)); }, "0x62,0xe1,0xfd,0x48,0x11,0x4a,0x03"},
      {[](Assembler& a) { a.load(z(9), {Gpr::rdi, 0}); }, "0x62,0x71,0xfd,0x48,0x10,0x0f"},
      // vmovupd zmm2, [rbp] (a displacement byte: mod 00 with rbp is rip-relative); zmm5, [rsi + 100]
      {[](Assembler& a) { a.load(z(2), {Gpr::rbp, 0}); }, "0x62,0xf1,0xfd,0x48,0x10,0x55,0x00"},
      {[](Assembler& a) { a.load(z(5), {Gpr::rsi, 100}); }, "0x62,0xf1,0xfd,0x48,0x10,0xae,0x64,0x00,0x00,0x00"},
      // vmovapd zmm16, zmm8; zmm3 {k1}, zmm30; vmovupd zmm12 {k1} {z}, [rsi + 128]
      {[](Assembler& a) { a.move(z(16), z(8)); }, "0x62,0xc1,0xfd,0x48,0x28,0xc0"},
      {[](Assembler& a) { a.move(z(3), z(30), k(1)); }, "0x62,0x91,0xfd,0x49,0x28,0xde"},
      {[](Assembler& a) { a.load_masked_zero(z(12), {Gpr::rsi, 128}, k(1)); }, "0x62,0x71,0xfd,0xc9,0x10,0x66,0x02"},
      // vaddpd zmm1, zmm2, zmm3; zmm20, zmm3, [rsi + 8128]; vsubpd zmm31, zmm16, zmm15
      {[](Assembler& a) { a.binary(Binary::Add, z(1), z(2), z(3)); }, "0x62,0xf1,0xed,0x48,0x58,0xcb"},
      {[](Assembler& a) { a.binary(Binary::Add, z(20), z(3), Mem{Gpr::rsi, 8128}); }, "0x62,0xe1,0xe5,0x48,0x58,0x66,0x7f"},
      {[](Assembler& a) { a.binary(Binary::Sub, z(31), z(16), z(15)); }, "0x62,0x41,0xfd,0x40,0x5c,0xff"},
      // vmulpd zmm8, zmm24, [rdi + 1048576]; vdivpd zmm7, zmm23, zmm9
      {[](Assembler& a) { a.binary(Binary::Mul, z(8), z(24), Mem{Gpr::rdi, 1048576}); },
       "0x62,0x71,0xbd,0x40,0x59,0x87,0x00,0x00,0x10,0x00"},
      {[](Assembler& a) { a.binary(Binary::Div, z(7), z(23), z(9)); }, "0x62,0xd1,0xc5,0x40,0x5e,0xf9"},
      // vminpd zmm0, zmm17, zmm31; vmaxpd zmm18, zmm1, zmm2
      {[](Assembler& a) { a.binary(Binary::Min, z(0), z(17), z(31)); }, "0x62,0x91,0xf5,0x40,0x5d,0xc7"},
      {[](Assembler& a) { a.binary(Binary::Max, z(18), z(1), z(2)); }, "0x62,0xe1,0xf5,0x48,0x5f,0xd2"},
      // vpxorq zmm4, zmm5, [rsi + 64]; vpandq zmm29, zmm13, [rsi]
      {[](Assembler& a) { a.binary(Binary::Xor, z(4), z(5), Mem{Gpr::rsi, 64}); }, "0x62,0xf1,0xd5,0x48,0xef,0x66,0x01"},
      {[](Assembler& a) { a.binary(Binary::And, z(29), z(13), Mem{Gpr::rsi, 0}); }, "0x62,0x61,0x95,0x48,0xdb,0x2e"},
      // vfmadd132pd zmm10, zmm11, zmm12; vfmadd213pd zmm25, zmm26, [rdi + 2048]; vfmadd231pd zmm6, zmm22, zmm30
      {[](Assembler& a) { a.fma(FmaForm::F132, z(10), z(11), z(12)); }, "0x62,0x52,0xa5,0x48,0x98,0xd4"},
      {[](Assembler& a) { a.fma(FmaForm::F213, z(25), z(26), Mem{Gpr::rdi, 2048}); }, "0x62,0x62,0xad,0x40,0xa8,0x4f,0x20"},
      {[](Assembler& a) { a.fma(FmaForm::F231, z(6), z(22), z(30)); }, "0x62,0x92,0xcd,0x40,0xb8,0xf6"},
      // vsqrtpd zmm14, [rdi + 4096]; zmm19, zmm21; vrndscalepd zmm27, zmm28, 9; zmm3, [rdi + 64], 10
      {[](Assembler& a) { a.sqrt(z(14), Mem{Gpr::rdi, 4096}); }, "0x62,0x71,0xfd,0x48,0x51,0x77,0x40"},
      {[](Assembler& a) { a.sqrt(z(19), z(21)); }, "0x62,0xa1,0xfd,0x48,0x51,0xdd"},
      {[](Assembler& a) { a.round(z(27), z(28), 9); }, "0x62,0x03,0xfd,0x48,0x09,0xdc,0x09"},
      {[](Assembler& a) { a.round(z(3), Mem{Gpr::rdi, 64}, 10); }, "0x62,0xf3,0xfd,0x48,0x09,0x5f,0x01,0x0a"},
      // vcmppd k1, zmm2, [rsi + 192], 4; k1 {k1}, zmm18, zmm19, 17; k2, zmm31, zmm0, 3
      {[](Assembler& a) { a.compare(k(1), z(2), Mem{Gpr::rsi, 192}, Compare::NeqUQ); }, "0x62,0xf1,0xed,0x48,0xc2,0x4e,0x03,0x04"},
      {[](Assembler& a) { a.compare(k(1), z(18), z(19), Compare::LtOQ, k(1)); }, "0x62,0xb1,0xed,0x41,0xc2,0xcb,0x11"},
      {[](Assembler& a) { a.compare(k(2), z(31), z(0), Compare::UnordQ); }, "0x62,0xf1,0x85,0x40,0xc2,0xd0,0x03"},
      // vblendmpd zmm7 {k1}, zmm8, [rdi + 512]; korw k1, k1, k2
      {[](Assembler& a) { a.blend(z(7), k(1), z(8), Mem{Gpr::rdi, 512}); }, "0x62,0xf2,0xbd,0x49,0x65,0x7f,0x08"},
      {[](Assembler& a) { a.kor(k(1), k(1), k(2)); }, "0xc5,0xf4,0x45,0xca"},
      // mov ecx, 16; add rdi, 64; add rdi, 4096; dec ecx; vzeroupper; ret
      {[](Assembler& a) { a.mov_ecx(16); }, "0xb9,0x10,0x00,0x00,0x00"},
      {[](Assembler& a) { a.add_rdi(64); }, "0x48,0x83,0xc7,0x40"},
      {[](Assembler& a) { a.add_rdi(4096); }, "0x48,0x81,0xc7,0x00,0x10,0x00,0x00"},
      {[](Assembler& a) { a.dec_ecx(); }, "0xff,0xc9"},
      {[](Assembler& a) { a.vzeroupper(); }, "0xc5,0xf8,0x77"},
      {[](Assembler& a) { a.ret(); }, "0xc3"},
  };
  for (const auto& row : table) CHECK(encode(row.emit) == row.expected);
}

TEST_CASE("x86 assembler: a backward jnz lands on its target") {
  Assembler a;
  a.mov_ecx(3);
  const size_t top = a.size();
  a.add_rdi(64);
  a.dec_ecx();
  a.jnz_back(top);
  // jnz rel32 = 0f 85 and the distance from the end of the jump back to `top`: -(4+2+6).
  CHECK(hex(a.bytes()) == "0xb9,0x03,0x00,0x00,0x00,0x48,0x83,0xc7,0x40,0xff,0xc9,0x0f,0x85,0xf4,0xff,0xff,0xff");
}

TEST_CASE("x86 assembler: every form and register as llvm-mc encodes it") {
#ifndef LSJIT_TEST_LLVM_MC
  MESSAGE("llvm-mc was not found when lsjit was configured: the table test above is the check");
#else
  const std::vector<Case> cases = all_forms();
  const std::string dir = std::string(LSJIT_TEST_TMP_DIR) + "/x86_forms_" + std::to_string(::getpid());
  {
    std::ofstream s(dir + ".s");
    s << ".intel_syntax noprefix\n";
    for (const Case& c : cases) s << c.text << "\n";
  }
  const CliRun r = run_shell(std::string(LSJIT_TEST_LLVM_MC) + " -triple=x86_64 -mattr=+avx512f -show-encoding " + dir +
                             ".s 2>&1");
  std::remove((dir + ".s").c_str());
  REQUIRE_MESSAGE(r.exit_code == 0, r.out.substr(0, 2000));
  std::vector<std::string> expected;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (const size_t at = line.find("encoding: ["); at != std::string::npos)
      expected.push_back(line.substr(at + 11, line.find(']', at) - at - 11));
  REQUIRE(expected.size() == cases.size());
  size_t differ = 0;
  for (size_t i = 0; i < cases.size(); ++i)
    if (encode(cases[i].emit) != expected[i] && differ++ < 10)
      FAIL_CHECK(cases[i].text << ": " << encode(cases[i].emit) << ", llvm-mc " << expected[i]);
  CHECK(differ == 0);
  CHECK(cases.size() > 2000);
#endif
}
