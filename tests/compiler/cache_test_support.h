// Helpers for the kernel cache tests: per-test temporary directories, costs traced with
// lsjit::Tracer, and a fake compiler backend that lets the cache logic run without LLVM.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "lsjit/common/error.h"
#include "lsjit/compiler/cache/disk_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/ir/sym.h"

namespace lsjit::cache_testing {

namespace fs = std::filesystem;
using compiler::KernelCache;
using compiler::KernelMode;

// A fresh, empty directory under the build tree's test folder, removed afterwards.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) {
    path = fs::path(LSJIT_TEST_TMP_DIR) / ("cache_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path operator/(const std::string& s) const { return path / s; }
};

inline std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

inline size_t count_lines(const std::string& text, const std::string& needle) {
  size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) ++n;
  return n;
}

// r = scale * (x ⊞ δ - target), x a 2-vector variable, target 2-vector data. `scale` is
// a captured constant, baked into the graph.
inline ir::Trace trace_scaled(double scale, const std::string& name = "scaled",
                              const std::string& var_type = "VecVar2",
                              const std::string& var_name = "x") {
  ir::Signature sig;
  sig.name = name;
  sig.vars = {{var_name, var_type, 2, 2}};
  sig.data = {{"target", "Vec2", 2, 1}};
  sig.residual_dim = 2;
  Tracer t(sig);
  std::vector<Sym> r;
  for (uint32_t c = 0; c < 2; ++c) r.push_back((t.var(0, c) + t.tangent(0, c) - t.data(0, c)) * scale);
  t.set_residual(r);
  return t.finish();
}

// A cost with two variables and a 3-vector data slot: r = [sin(a0) * b1 - d0, a1 * a1 + d1 * b0, d2].
inline ir::Trace trace_two_vars(const std::string& name = "two_vars", uint32_t data_rows = 3) {
  ir::Signature sig;
  sig.name = name;
  sig.vars = {{"a", "VecVar2", 2, 2}, {"b", "VecVar2", 2, 2}};
  sig.data = {{"d", "Vec" + std::to_string(data_rows), data_rows, 1}};
  sig.residual_dim = 3;
  Tracer t(sig);
  auto a = [&](uint32_t c) { return t.var(0, c) + t.tangent(0, c); };
  auto b = [&](uint32_t c) { return t.var(1, c) + t.tangent(1, c); };
  t.set_residual({sin(a(0)) * b(1) - t.data(0, 0), a(1) * a(1) + t.data(0, 1) * b(0),
                  t.data(0, data_rows - 1) * 1.0 + 0.0 * a(0)});
  return t.finish();
}

// --- a fake compiler: "object code" is text naming the symbol; the kernel does nothing.
struct FakeLoaded final : compiler::LoadedKernel {
  compiler::KernelFn fn;
  explicit FakeLoaded(compiler::KernelFn f) : fn(f) {}
  compiler::KernelFn function() const override { return fn; }
};

inline void fake_kernel_function(const compiler::KernelArgs*) {}

struct FakeCounters {
  std::atomic<int> compiles{0};
  std::atomic<int> loads{0};
  int compile_sleep_ms = 0;
};

inline KernelCache::Backend fake_backend(std::shared_ptr<FakeCounters> counters) {
  KernelCache::Backend b;
  b.target = [](const compiler::CompileOptions& o) {
    compiler::TargetInfo t;
    t.triple = "x86_64-unknown-linux-gnu";
    t.cpu = "fakecpu";
    t.features = "+fake,+sse2";
    t.vector_width = o.vector_width ? o.vector_width : 4;
    t.llvm_version = "19.1.0";
    return t;
  };
  b.compile = [counters](const ir::Trace&, const compiler::KernelLayout&,
                         const compiler::CompileOptions&, const std::string& symbol) {
    if (counters->compile_sleep_ms) ::usleep(counters->compile_sleep_ms * 1000);
    ++counters->compiles;
    compiler::CompiledObject o;
    o.symbol = symbol;
    o.object_code = "FAKE-OBJECT " + symbol;
    o.times.llvm_ir_s = 0.001;
    o.times.optimize_s = 0.002;
    o.times.codegen_s = 0.003;
    return o;
  };
  b.load = [counters](const std::string& object, const std::string& symbol)
      -> std::shared_ptr<compiler::LoadedKernel> {
    ++counters->loads;
    if (object != "FAKE-OBJECT " + symbol) throw Error("fake jit: the object does not define " + symbol);
    return std::make_shared<FakeLoaded>(&fake_kernel_function);
  };
  return b;
}

inline KernelCache::Options memory_only() {
  KernelCache::Options o;
  o.use_disk = false;
  return o;
}

struct FakeCache {
  std::shared_ptr<FakeCounters> counters = std::make_shared<FakeCounters>();
  std::ostringstream log;
  std::unique_ptr<KernelCache> cache;

  explicit FakeCache(const fs::path& dir, KernelCache::Options o = {}) {
    o.directory = dir;
    o.log = &log;
    o.backend = fake_backend(counters);
    cache = std::make_unique<KernelCache>(std::move(o));
  }
  KernelCache* operator->() { return cache.get(); }
};

// Ways to damage an entry file, each with the words its warning must contain; `tag` names
// a per-damage directory.
struct Damage {
  const char* name;
  const char* tag;
  std::function<void(std::string&)> apply;
  const char* expect;
};
inline std::vector<Damage> entry_damages() {
  return {
      {"truncated", "truncated", [](std::string& b) { b.resize(b.size() / 2); }, "is truncated"},
      {"corrupt", "corrupt", [](std::string& b) { b[b.size() / 2] ^= 1; }, "is corrupt"},
      {"foreign", "foreign", [](std::string& b) { b[8] = 99; }, "is foreign format version"},
      {"empty", "empty", [](std::string& b) { b.clear(); }, "is truncated"},
      {"not ours", "notours", [](std::string& b) { b = "#!/bin/sh\necho hello\n"; }, "is not a cache entry"},
  };
}

// The entry file a fresh cache over `dir` writes for `t`'s residual kernel (the cache is
// gone when this returns).
inline fs::path residual_entry_written(const fs::path& dir, const ir::Trace& t) {
  FakeCache c(dir);
  return compiler::DiskCache(dir).entry_path(c->get(t, KernelMode::Residual)->key.hash);
}

}  // namespace lsjit::cache_testing

namespace lsjit::cache_testing {

// --- entries as the cache reads and writes them, with the directory's key (made if missing).
inline compiler::AuthKey dir_key(const compiler::DiskCache& disk) {
  const compiler::KeyResult k = disk.auth_key(true);
  REQUIRE_MESSAGE(k.key.has_value(), k.refusal);
  return *k.key;
}
// The whole entry, IR text included (DiskCache::read decodes only what a load uses).
inline compiler::DecodeResult read_entry(const compiler::DiskCache& disk, const Hash128& id) {
  const compiler::AuthKey key = dir_key(disk);
  return compiler::DiskCache::read_file(disk.entry_path(id), &key);
}
// As a kernel load reads it (no IR text), refreshing its modification time (LRU).
inline compiler::DecodeResult load_entry(const compiler::DiskCache& disk, const Hash128& id) {
  const compiler::AuthKey key = dir_key(disk);
  return disk.read(id, &key);
}
// Where an entry's payload, whose last field is the object code, ends: 28 + the header's
// payload size (compiler/cache/disk_cache.h).
inline size_t payload_end(const std::string& bytes) {
  uint64_t size = 0;
  for (int k = 0; k < 8; ++k) size |= uint64_t{static_cast<unsigned char>(bytes.at(12 + k))} << (8 * k);
  return 28 + static_cast<size_t>(size);
}
inline compiler::DecodeResult read_entry_file(const fs::path& path) {
  const compiler::AuthKey key = dir_key(compiler::DiskCache(path.parent_path()));
  return compiler::DiskCache::read_file(path, &key);
}
inline void write_entry(const compiler::DiskCache& disk, const compiler::DiskEntry& e) {
  disk.write(e, dir_key(disk));
}
inline std::string encode_for(const compiler::DiskCache& disk, const compiler::DiskEntry& e) {
  return compiler::encode_entry(e, dir_key(disk));
}

// A fixed key for tests of the format alone.
inline compiler::AuthKey test_key(unsigned char fill = 7) {
  compiler::AuthKey k{};
  k.fill(fill);
  return k;
}

// --- the attack on the disk cache: machine code planted by someone who can write the
// directory but does not hold the user's key.

// A relocatable object, built by the compiler that built the tests (LSJIT_TEST_CXX), that
// creates `marker` both from a static constructor (run if the object is ever linked with
// its initializers) and from a function named `symbol` (run if the kernel is ever called).
inline std::string marker_object(const std::string& symbol, const fs::path& marker,
                                 const fs::path& work_dir) {
  const fs::path source = work_dir / (symbol + ".cpp"), object = work_dir / (symbol + ".o");
  write_bytes(source, "#include <fcntl.h>\n#include <unistd.h>\n"
                      "static void mark() { int fd = ::open(\"" + marker.string() +
                          "\", O_WRONLY | O_CREAT, 0644); if (fd >= 0) ::close(fd); }\n"
                      "__attribute__((constructor)) static void at_load() { mark(); }\n"
                      "extern \"C\" void " + symbol + "(const void*) { mark(); }\n");
  const std::string command = std::string(LSJIT_TEST_CXX) + " -c -fPIC -O1 -o " + object.string() +
                              " " + source.string();
  REQUIRE_MESSAGE(std::system(command.c_str()) == 0, command);
  return read_bytes(object);
}

// Replaces the object code of every entry in `dir` by marker_object(its symbol), and
// re-encodes it with a valid checksum (StableHasher is public) but signed with a key that is
// not the directory's: what an attacker who can write the directory but not read the key
// file can do. Returns how many entries it rewrote.
inline size_t plant_marker_objects(const fs::path& dir, const fs::path& marker, const fs::path& work_dir) {
  size_t planted = 0;
  const compiler::DiskCache disk(dir);
  for (const auto& f : disk.list()) {
    compiler::DecodeResult r = read_entry_file(f.path);
    REQUIRE(r.status == compiler::EntryStatus::Ok);
    compiler::DiskEntry e = *r.entry;
    if (compiler::is_data_key(e.key)) continue;  // no code to plant (a solve's block ordering)
    e.object_code = marker_object(e.symbol, marker, work_dir);
    compiler::AuthKey attackers_key{};
    attackers_key.fill(0x5a);
    write_bytes(f.path, compiler::encode_entry(e, attackers_key));
    ++planted;
  }
  return planted;
}

}  // namespace lsjit::cache_testing
