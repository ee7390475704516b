// The LLVM-free kernel loader (kernel_loader.h): the same object loaded by it and by ORC
// computes the same bits on every test graph and mode, and an object that is damaged in
// any way the loader checks is refused with an error that says what is wrong, never
// loaded half-way.
#include <doctest/doctest.h>

#include <elf.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../support/kernel_check.h"
#include "../support/test_function_sampler.h"
#include "../support/test_functions.h"
#include "lsjit/compiler/cache/kernel_loader.h"

using namespace lsjit::testing;
using lsjit::compiler::KernelMode;

namespace {

struct Built {
  lsjit::compiler::KernelLayout layout;
  std::string object;
  std::string symbol;
};

Built build(const lsjit::ir::Trace& traced, KernelMode mode, const std::string& symbol,
            const lsjit::compiler::CompileOptions& options = {}) {
  const lsjit::ir::Trace g = lsjit::compiler::graph_for_mode(traced, mode);
  Built b{lsjit::compiler::make_layout(g.signature, mode), {}, symbol};
  b.object = lsjit::compiler::compile_kernel(g, b.layout, options, symbol).object_code;
  return b;
}

// Runs `kernel` over `in`, returning every output array.
std::vector<std::vector<double>> run(const lsjit::compiler::LoadedKernel& kernel,
                                     const lsjit::compiler::KernelLayout& layout,
                                     const KernelInputs& in, int64_t count) {
  std::vector<const int32_t*> idx;
  std::vector<const double*> vals;
  for (uint32_t s = 0; s < layout.num_vars; ++s) {
    idx.push_back(in.indices[s].data());
    vals.push_back(in.values[s].data());
  }
  KernelOutputs out = make_outputs(layout, count, -777.0);
  lsjit::compiler::KernelArgs args;
  args.begin = 0;
  args.end = count;
  args.indices = idx.data();
  args.values = vals.data();
  args.data = in.data.empty() ? nullptr : in.data.data();
  args.outputs = out.pointers.data();
  args.scatter = out.scatter.data();
  kernel.function()(&args);
  return out.arrays;
}

bool same_bits(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k].size() != b[k].size() ||
        (!a[k].empty() && std::memcmp(a[k].data(), b[k].data(), a[k].size() * sizeof(double)) != 0))
      return false;
  return true;
}

// A real object with libmvec calls (sin, cos, atan2 on vectors) and constant pools.
Built sample_object() {
  for (const TestFunction& t : test_functions())
    if (t.name == "trig") return build(trace_function(t), KernelMode::NormalEquations, "sample");
  FAIL("no test function named trig");
  return {};
}

template <class T>
void put(std::string& bytes, uint64_t offset, T value) {
  REQUIRE(offset + sizeof(T) <= bytes.size());
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}
template <class T>
T get(const std::string& bytes, uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// The section header of the first section of `type` (and, if nonzero, with `flag`).
uint64_t section_header(const std::string& object, uint32_t type, uint64_t flag = 0) {
  const auto eh = get<Elf64_Ehdr>(object, 0);
  for (uint32_t i = 0; i < eh.e_shnum; ++i) {
    const uint64_t at = eh.e_shoff + i * sizeof(Elf64_Shdr);
    const auto sh = get<Elf64_Shdr>(object, at);
    if (sh.sh_type == type && (flag == 0 || (sh.sh_flags & flag))) return at;
  }
  FAIL("no such section");
  return 0;
}

void check_refused(const std::string& object, const std::string& why) {
  CAPTURE(why);
  CHECK_THROWS_WITH_AS(lsjit::compiler::load_object(object, "sample"), doctest::Contains(why.c_str()),
                       lsjit::Error);
}

}  // namespace

TEST_CASE("the native loader and ORC run every test graph to the same bits") {
  REQUIRE(lsjit::compiler::native_loader_supported());
  std::mt19937_64 rng(99);
  for (const TestFunction& t : test_functions()) {
    CAPTURE(t.name);
    const lsjit::ir::Trace traced = trace_function(t);
    for (KernelMode mode : lsjit::compiler::kAllModes) {
      CAPTURE(lsjit::compiler::mode_name(mode));
      const Built b = build(traced, mode, "loader_" + t.name);
      const auto native = lsjit::compiler::load_object(b.object, b.symbol);
      const auto orc = lsjit::compiler::load_kernel_orc(b.object, b.symbol);
      for (int64_t count : {0, 1, 7, 8, 9, 1000}) {
        CAPTURE(count);
        const KernelInputs in = make_kernel_inputs(b.layout, count, sampler_for(t), rng);
        CHECK(same_bits(run(*native, b.layout, in, count), run(*orc, b.layout, in, count)));
      }
    }
  }
}

TEST_CASE("the native loader links libmvec calls, and scalar libm calls without vector math") {
  const Built vector = sample_object();
  const std::string rel = vector.object;
  CHECK(rel.find("_ZGV") != std::string::npos);  // the sample does call libmvec
  CHECK(reinterpret_cast<void*>(lsjit::compiler::load_object(vector.object, "sample")->function()) != nullptr);
  lsjit::compiler::CompileOptions scalar_math;
  scalar_math.vector_math = false;
  for (const TestFunction& t : test_functions())
    if (t.name == "trig") {
      const Built b = build(trace_function(t), KernelMode::Residual, "scalar_math", scalar_math);
      std::mt19937_64 rng(3);
      const KernelInputs in = make_kernel_inputs(b.layout, 21, sampler_for(t), rng);
      CHECK(same_bits(run(*lsjit::compiler::load_object(b.object, b.symbol), b.layout, in, 21),
                      run(*lsjit::compiler::load_kernel_orc(b.object, b.symbol), b.layout, in, 21)));
    }
}

TEST_CASE("the native loader refuses damaged objects and says why") {
  const Built b = sample_object();
  const std::string good = b.object;
  REQUIRE(lsjit::compiler::load_object(good, "sample") != nullptr);

  check_refused("", "too short for its ELF header");
  check_refused(good.substr(0, 40), "too short for its ELF header");
  std::string s = good;
  s[0] = 'X';
  check_refused(s, "not an ELF file");
  s = good;
  s[EI_CLASS] = ELFCLASS32;
  check_refused(s, "not a little-endian ELF64 object");
  s = good;
  put<uint16_t>(s, offsetof(Elf64_Ehdr, e_type), ET_DYN);
  check_refused(s, "not a relocatable object");
  s = good;
  put<uint16_t>(s, offsetof(Elf64_Ehdr, e_machine), EM_AARCH64);
  check_refused(s, "not for x86-64");
  s = good;
  put<uint64_t>(s, offsetof(Elf64_Ehdr, e_shoff), good.size() - 8);
  check_refused(s, "section table past its end");
  s = good;
  put<uint16_t>(s, offsetof(Elf64_Ehdr, e_shstrndx), 0xfff0);
  check_refused(s, "section-name table it lacks");

  const uint64_t text = section_header(good, SHT_PROGBITS, SHF_EXECINSTR);
  s = good;
  put<uint64_t>(s, text + offsetof(Elf64_Shdr, sh_size), uint64_t{1} << 40);
  check_refused(s, "past its end");
  s = good;
  put<uint64_t>(s, text + offsetof(Elf64_Shdr, sh_flags), SHF_ALLOC | SHF_EXECINSTR | SHF_WRITE);
  check_refused(s, "writable");
  s = good;
  put<uint64_t>(s, text + offsetof(Elf64_Shdr, sh_addralign), 3);
  check_refused(s, "alignment");

  const uint64_t rela = section_header(good, SHT_RELA);
  const auto rh = get<Elf64_Shdr>(good, rela);
  REQUIRE(rh.sh_size >= sizeof(Elf64_Rela));
  const uint64_t first = rh.sh_offset;
  const auto r0 = get<Elf64_Rela>(good, first);
  s = good;
  put<uint64_t>(s, first + offsetof(Elf64_Rela, r_offset), uint64_t{1} << 50);
  check_refused(s, "relocation past the end of its section");
  s = good;
  put<uint64_t>(s, first + offsetof(Elf64_Rela, r_info), ELF64_R_INFO(100000, ELF64_R_TYPE(r0.r_info)));
  check_refused(s, "symbol 100000, which it lacks");
  s = good;
  put<uint64_t>(s, first + offsetof(Elf64_Rela, r_info), ELF64_R_INFO(ELF64_R_SYM(r0.r_info), R_X86_64_TPOFF32));
  check_refused(s, "relocation type");
  s = good;
  put<uint32_t>(s, rela + offsetof(Elf64_Shdr, sh_type), SHT_REL);
  check_refused(s, "REL relocations");

  s = good;
  const uint64_t symtab = section_header(good, SHT_SYMTAB);
  put<uint32_t>(s, symtab + offsetof(Elf64_Shdr, sh_type), SHT_PROGBITS);
  check_refused(s, "no symbol table");

  // An undefined function the process lacks: rename the libmvec symbol's first letter.
  s = good;
  const size_t at = s.find("_ZGV");
  REQUIRE(at != std::string::npos);
  s[at + 1] = 'Q';
  check_refused(s, "which this process does not have");

  check_refused(good.substr(0, 0), "too short");
  CHECK_THROWS_WITH_AS(lsjit::compiler::load_object(good, "absent"),
                       doctest::Contains("does not define the function 'absent'"), lsjit::Error);
}

TEST_CASE("the native loader survives random damage: each try loads or throws lsjit::Error") {
  const Built b = sample_object();
  std::mt19937_64 rng(11);
  int refused = 0, loaded = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string s = b.object;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) s[rng() % s.size()] = static_cast<char>(rng());
    if (round % 10 == 0) s.resize(rng() % s.size());
    try {
      // Loaded code is not run: a flipped byte in .text is still valid to map.
      if (lsjit::compiler::load_object(s, "sample")) ++loaded;
    } catch (const lsjit::Error&) {
      ++refused;
    }
  }
  CHECK(refused + loaded == 3000);
  CHECK(refused > 0);
}
