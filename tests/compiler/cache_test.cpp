// The kernel cache without LLVM: the key (its parts, their order, what enters it and what
// does not), miss explanations, the disk format, atomic writes, bad entries, and the cache
// logic (memory, disk, recompiles, logs, threads) with a fake compiler backend.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "cache_test_support.h"
#include "lsjit/compiler/cache/cache_key.h"
#include "lsjit/compiler/cache/disk_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/ir/structural_hash.h"

using namespace lsjit;
using namespace lsjit::compiler;
using namespace lsjit::cache_testing;

namespace {

TargetInfo fake_target(uint32_t width = 4) {
  TargetInfo t;
  t.triple = "x86_64-unknown-linux-gnu";
  t.cpu = "znver3";
  t.features = "+avx,+avx2,+fma";
  t.vector_width = width;
  t.llvm_version = "19.1.7";
  return t;
}

CacheKey key_of(const ir::Trace& t, KernelMode mode = KernelMode::ResidualJacobian,
                const CompileOptions& o = {}, const TargetInfo& target = fake_target()) {
  return make_cache_key(t, mode, o, target);
}

std::vector<std::string> differing_parts(const CacheKey& a, const CacheKey& b) {
  std::vector<std::string> names;
  for (const PartDifference& d : diff_keys(a, b)) names.push_back(d.part);
  return names;
}

DiskEntry sample_entry(const std::string& cost = "scaled", double scale = 2.0) {
  DiskEntry e;
  e.key = key_of(trace_scaled(scale, cost));
  e.symbol = kernel_symbol(e.key);
  e.times = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7};
  e.ir_text = "lsjit.ir 1\n...\nend\n";
  e.object_code = std::string("\x7f" "ELF\0\1\2\3 object bytes", 20);
  return e;
}

}  // namespace

// ---------------------------------------------------------------- the key

TEST_CASE("cache key: parts in the documented order / hashed in that order") {
  const ir::Trace t = trace_scaled(2.0);
  const CacheKey k = key_of(t, KernelMode::Residual, {}, fake_target());
  std::vector<std::string> names;
  for (const auto& [n, v] : k.parts) names.push_back(n);
  CHECK(names == std::vector<std::string>{"cost", "kind", "structural_hash", "vars", "data",
                                          "residuals", "mode", "options", "host_cpu",
                                          "host_cpuid", "vector_width", "triple",
                                          "llvm_version", "ir_version"});
  CHECK(k.part("cost") == "scaled");
  CHECK(k.part("kind") == "least_squares");
  CHECK(k.part("structural_hash") == ir::structural_hash(t).hex());
  CHECK(k.part("vars") == "VecVar2(ambient=2,tangent=2)");
  CHECK(k.part("data") == "Vec2(2x1)");
  CHECK(k.part("residuals") == "2");
  CHECK(k.part("mode") == "residual");
  CHECK(k.part("options") == "vector_width=0 fma_contraction=on vector_math=on");
  CHECK(k.part("host_cpu") == "znver3");
  CHECK(k.part("host_cpuid") == "+avx,+avx2,+fma");
  CHECK(k.part("vector_width") == "4");
  CHECK(k.part("triple") == "x86_64-unknown-linux-gnu");
  CHECK(k.part("llvm_version") == "19.1.7");
  CHECK(k.part("ir_version") == std::to_string(kCacheIrVersion));
  CHECK(k.part("no such part").empty());

  CHECK(k.hash == hash_key_parts(k.parts));
  CHECK(k.id() == k.hash.hex());
  CHECK(k.id().size() == 32);
  CHECK(parse_hash_hex(k.id()) == k.hash);
  CHECK(!parse_hash_hex("xyz"));
  CHECK(kernel_symbol(k) == "lsjit_k_" + k.id());

  // The order is part of the hash, and so are the names.
  auto swapped = k.parts;
  std::swap(swapped[0], swapped[1]);
  CHECK(hash_key_parts(swapped) != k.hash);
  auto renamed = k.parts;
  renamed[0].first = "name";
  CHECK(hash_key_parts(renamed) != k.hash);
  // Length-prefixed: moving a character between name and value changes the hash.
  CHECK(hash_key_parts({{"ab", "c"}}) != hash_key_parts({{"a", "bc"}}));
}

TEST_CASE("cache key: the same for every instance / ID / value / data value and slot name") {
  // The key is a function of the traced graph, the mode, the options and the target; the
  // graph of one cost is the same whichever instance it is traced for, because IDs,
  // values and data are runtime inputs (Input nodes), never numbers in the graph.
  const CacheKey k = key_of(trace_scaled(2.0));
  for (int instances : {1, 10, 100000}) {
    CAPTURE(instances);
    CHECK(key_of(trace_scaled(2.0)) == k);
  }
  // Slot names are cosmetic.
  CHECK(key_of(trace_scaled(2.0, "scaled", "VecVar2", "renamed_var")) == k);
  // No part holds a value of the data or of variables; only the static description.
  for (const auto& [n, v] : k.parts) CHECK(v.find("target") == std::string::npos);
}

TEST_CASE("cache key: each static part changes the key / and diff_keys names it") {
  const ir::Trace t = trace_scaled(2.0);
  const CacheKey k = key_of(t);
  using V = std::vector<std::string>;

  // cost name: only the name part (the structural hash ignores names).
  CHECK(differing_parts(k, key_of(trace_scaled(2.0, "other"))) == V{"cost"});
  // a captured constant: the structural hash.
  CHECK(differing_parts(k, key_of(trace_scaled(3.0))) == V{"structural_hash"});
  // a variable type with the same graph.
  CHECK(differing_parts(k, key_of(trace_scaled(2.0, "scaled", "Point2"))) ==
        V{"structural_hash", "vars"});
  // data shape.
  CHECK(differing_parts(key_of(trace_two_vars("c", 3)), key_of(trace_two_vars("c", 4))) ==
        V{"structural_hash", "data"});
  // cost kind.
  {
    ir::Trace eq = t;
    eq.signature.kind = ir::CostKind::Equality;
    CHECK(differing_parts(k, key_of(eq)) == V{"kind", "structural_hash"});
  }
  // mode.
  CHECK(differing_parts(k, key_of(t, KernelMode::NormalEquations)) == V{"mode"});
  // compile options.
  CompileOptions scalar;
  scalar.vector_width = 1;
  CHECK(differing_parts(k, key_of(t, KernelMode::ResidualJacobian, scalar)) == V{"options"});
  CompileOptions nofma;
  nofma.fma_contraction = false;
  CHECK(differing_parts(k, key_of(t, KernelMode::ResidualJacobian, nofma)) == V{"options"});
  CompileOptions nomvec;
  nomvec.vector_math = false;
  CHECK(differing_parts(k, key_of(t, KernelMode::ResidualJacobian, nomvec)) == V{"options"});
  // target.
  TargetInfo cpu = fake_target();
  cpu.cpu = "skylake-avx512";
  CHECK(differing_parts(k, key_of(t, KernelMode::ResidualJacobian, {}, cpu)) == V{"host_cpu"});
  TargetInfo feat = fake_target();
  feat.features = "+avx";
  CHECK(differing_parts(k, key_of(t, KernelMode::ResidualJacobian, {}, feat)) ==
        V{"host_cpuid"});
  CHECK(differing_parts(k, key_of(t, KernelMode::ResidualJacobian, {}, fake_target(8))) ==
        V{"vector_width"});
  TargetInfo triple = fake_target();
  triple.triple = "aarch64-unknown-linux-gnu";
  CHECK(differing_parts(k, key_of(t, KernelMode::ResidualJacobian, {}, triple)) == V{"triple"});
  TargetInfo llvm = fake_target();
  llvm.llvm_version = "20.1.0";
  CHECK(differing_parts(k, key_of(t, KernelMode::ResidualJacobian, {}, llvm)) == V{"llvm_version"});

  // Every one of those is a different hash.
  CHECK(key_of(t, KernelMode::ResidualJacobian, {}, llvm).hash != k.hash);
  CHECK(key_of(trace_scaled(3.0)).hash != k.hash);

  // A part only one key has.
  CacheKey fewer = k;
  fewer.parts.pop_back();
  const auto d = diff_keys(k, fewer);
  REQUIRE(d.size() == 1);
  CHECK(d[0].part == "ir_version");
  CHECK(d[0].after == "(absent)");
  CHECK(equal_parts(k, fewer) == k.parts.size() - 1);
}

TEST_CASE("miss explanation: a captured constant is named with both values") {
  const ir::Trace a = trace_scaled(2.0), b = trace_scaled(3.5);
  const GraphDifference g = compare_graphs(a.graph, b.graph);
  REQUIRE(g.kind == GraphDifference::Kind::Constants);
  REQUIRE(g.constants.size() == 1);
  CHECK(a.graph[g.constants[0].node].is_const(2.0));
  CHECK(g.constants[0].before == 2.0);
  CHECK(g.constants[0].after == 3.5);

  const std::string text = explain_key_difference(key_of(a), key_of(b), &a, &b, "> ");
  CAPTURE(text);
  CHECK(text.find("> structural_hash: ") != std::string::npos);
  CHECK(text.find("a captured constant differs") != std::string::npos);
  CHECK(text.find("constant %" + std::to_string(g.constants[0].node) + ": 2 -> 3.5") !=
        std::string::npos);
  CHECK(text.find("as data") != std::string::npos);
  CHECK(compare_graphs(a.graph, trace_scaled(2.0).graph).kind == GraphDifference::Kind::Same);
}

TEST_CASE("miss explanation: a different op graph / and a different signature") {
  // The same signature, one op changed (as a branch on a captured value would do).
  const ir::Trace a = trace_scaled(2.0);
  ir::Trace changed = a;
  ir::NodeId mul = 0;
  while (changed.graph.nodes[mul].op != ir::Op::Mul) ++mul;
  changed.graph.nodes[mul].op = ir::Op::Add;
  const GraphDifference g = compare_graphs(a.graph, changed.graph);
  CHECK(g.kind == GraphDifference::Kind::OpGraph);
  CHECK(g.detail.find("node %" + std::to_string(mul) + " = mul ") != std::string::npos);
  CHECK(g.detail.find("is now %" + std::to_string(mul) + " = add ") != std::string::npos);
  std::string text = explain_key_difference(key_of(a), key_of(changed), &a, &changed);
  CAPTURE(text);
  CHECK(text.find("the op graph differs") != std::string::npos);
  CHECK(text.find("as data") != std::string::npos);
  // More nodes.
  ir::Trace longer = a;
  longer.graph.nodes.push_back(longer.graph.nodes.back());
  CHECK(compare_graphs(a.graph, longer.graph).kind == GraphDifference::Kind::OpGraph);

  const ir::Trace p = trace_scaled(2.0, "scaled", "Point2");
  text = explain_key_difference(key_of(a), key_of(p), &a, &p);
  CHECK(text.find("vars: VecVar2(ambient=2,tangent=2) -> Point2(ambient=2,tangent=2)") !=
        std::string::npos);
  CHECK(text.find("signature") != std::string::npos);

  // Without the traced graphs, constants cannot be told from ops.
  text = explain_key_difference(key_of(a), key_of(trace_scaled(3.0)), nullptr, nullptr);
  CHECK(text.find("op graph or a captured constant") != std::string::npos);

  text = explain_key_difference(key_of(a), key_of(a, KernelMode::Residual), &a, &a);
  CHECK(text.find("mode: residual_jacobian -> residual") != std::string::npos);
  CHECK(text.find("constant") == std::string::npos);
}

// ---------------------------------------------------------------- the disk format

TEST_CASE("disk format: encode and decode round trip") {
  const AuthKey key = test_key();
  const DiskEntry e = sample_entry();
  const std::string bytes = encode_entry(e, key);
  CHECK(bytes.substr(0, 8) == kDiskMagic);
  const DecodeResult r = decode_entry(bytes, &key);
  REQUIRE(r.status == EntryStatus::Ok);
  CHECK(r.entry->key == e.key);
  CHECK(r.entry->symbol == e.symbol);
  CHECK(r.entry->times.trace_s == 0.1);
  CHECK(r.entry->times.differentiate_s == 0.2);
  CHECK(r.entry->times.simplify_s == 0.3);
  CHECK(r.entry->times.llvm_ir_s == 0.4);
  CHECK(r.entry->times.optimize_s == 0.5);
  CHECK(r.entry->times.codegen_s == 0.6);
  CHECK(r.entry->times.link_s == 0.7);
  CHECK(r.entry->ir_text == e.ir_text);
  CHECK(r.entry->object_code == e.object_code);
  CHECK(encode_entry(*r.entry, key) == bytes);  // deterministic
}

TEST_CASE("disk format: every truncation / every flipped byte / foreign versions are detected") {
  const AuthKey key = test_key();
  const std::string bytes = encode_entry(sample_entry(), key);
  for (size_t n = 0; n < bytes.size(); ++n) {
    const DecodeResult r = decode_entry(std::string_view(bytes).substr(0, n), &key);
    CAPTURE(n);
    CHECK(r.status == EntryStatus::Truncated);
    CHECK(!r.entry);
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    CAPTURE(i);
    CHECK(decode_entry(bad, &key).status != EntryStatus::Ok);
  }
  for (char old_version : {1, 2}) {  // 1 had no tag, 2 one tag: foreign-version misses
    std::string old = bytes;
    old[8] = old_version;
    const DecodeResult r = decode_entry(old, &key);
    CHECK(r.status == EntryStatus::ForeignVersion);
    CHECK(r.message.find("version " + std::to_string(old_version)) != std::string::npos);
    CHECK(decode_entry(old, &key, DecodeScope::Load).status == EntryStatus::ForeignVersion);
  }
  CHECK(decode_entry(bytes + "x", &key).status == EntryStatus::Corrupt);
  CHECK(decode_entry("GIF89a, not an entry", &key).status == EntryStatus::NotAnEntry);
}

TEST_CASE("disk format: a load checks every byte it uses and skips the IR text") {
  const AuthKey key = test_key(), other = test_key(8);
  const DiskEntry e = sample_entry();
  const std::string bytes = encode_entry(e, key);
  const DecodeResult r = decode_entry(bytes, &key, DecodeScope::Load);
  REQUIRE(r.status == EntryStatus::Ok);
  CHECK(r.entry->key == e.key);
  CHECK(r.entry->symbol == e.symbol);
  CHECK(r.entry->object_code == e.object_code);
  CHECK(r.entry->times.link_s == 0.7);
  CHECK(r.entry->ir_text.empty());
  // The load section: header, payload and its tag, up to where the IR text starts.
  const size_t ir_begin = bytes.size() - 16 - kAuthTagSize - e.ir_text.size();
  REQUIRE(bytes.compare(ir_begin, e.ir_text.size(), e.ir_text) == 0);
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    CAPTURE(i);
    const EntryStatus s = decode_entry(bad, &key, DecodeScope::Load).status;
    if (i < ir_begin) {
      CHECK(s != EntryStatus::Ok);
      // Damage is told from a forgery as a whole decode tells it.
      if (i >= 28) CHECK(s == EntryStatus::Corrupt);
    } else {
      CHECK(s == EntryStatus::Ok);  // not used by a load; `lsjit cache verify` finds it
      CHECK(decode_entry(bad, &key).status != EntryStatus::Ok);
    }
  }
  for (size_t n = 0; n < bytes.size(); ++n)
    CHECK(decode_entry(std::string_view(bytes).substr(0, n), &key, DecodeScope::Load).status ==
          EntryStatus::Truncated);
  CHECK(decode_entry(bytes + "x", &key, DecodeScope::Load).status == EntryStatus::Corrupt);
  CHECK(decode_entry(bytes, &other, DecodeScope::Load).status == EntryStatus::Unauthenticated);
  CHECK(decode_entry(bytes, nullptr, DecodeScope::Load).status == EntryStatus::Unauthenticated);
  // Someone else's entry with a valid checksum: its load tag is refused.
  const std::string forged = encode_entry(e, other);
  CHECK(decode_entry(forged, &key, DecodeScope::Load).status == EntryStatus::Unauthenticated);
}

TEST_CASE("disk format: an entry is authenticated by its key - every tag byte and any other key fail") {
  const AuthKey key = test_key(), other = test_key(8);
  const std::string bytes = encode_entry(sample_entry(), key);
  CHECK(decode_entry(bytes, &key).status == EntryStatus::Ok);
  const DecodeResult wrong = decode_entry(bytes, &other);
  CHECK(wrong.status == EntryStatus::Unauthenticated);
  CHECK(!wrong.entry);
  CHECK(wrong.message.find("authentication tag") != std::string::npos);
  CHECK(decode_entry(bytes, nullptr).status == EntryStatus::Unauthenticated);
  for (size_t i = bytes.size() - kAuthTagSize; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 1);
    CAPTURE(i);
    CHECK(decode_entry(bad, &key).status == EntryStatus::Unauthenticated);
  }
  CHECK(entry_status_name(EntryStatus::Unauthenticated) == "unauthenticated");
}

TEST_CASE("disk cache: write / read / list / find - no temporary file is left") {
  TempDir dir("write_read");
  const DiskCache disk(dir / "sub" / "dir");  // created on the first write
  CHECK(disk.list().empty());
  const DiskEntry e = sample_entry();
  CHECK(read_entry(disk, e.key.hash).status == EntryStatus::Missing);
  write_entry(disk, e);
  write_entry(disk, e);  // over an existing entry
  const DecodeResult r = read_entry(disk, e.key.hash);
  REQUIRE(r.status == EntryStatus::Ok);
  CHECK(r.entry->object_code == e.object_code);
  CHECK(disk.entry_path(e.key.hash).filename() == e.key.id() + ".lsjitk");
  const auto files = disk.list();
  REQUIRE(files.size() == 1);
  CHECK(files[0].id == e.key.id());
  CHECK(disk.find(e.key.id().substr(0, 4)).size() == 1);
  CHECK(disk.find("zz").empty());
  size_t n = 0;
  for (const auto& f : fs::directory_iterator(disk.directory()))
    n += f.path().filename() != kAuthKeyFileName;
  CHECK(n == 1);

  // A file whose stored id is not its name is not trusted.
  const DiskEntry other = sample_entry("other");
  fs::copy_file(disk.entry_path(e.key.hash), disk.entry_path(other.key.hash));
  CHECK(read_entry(disk, other.key.hash).status == EntryStatus::Malformed);
}

TEST_CASE("disk cache: concurrent writers of one key from threads and processes all succeed - "
          "readers never see a partial file") {
  TempDir dir("concurrent");
  const DiskCache disk(dir.path);
  DiskEntry e = sample_entry();
  e.object_code = std::string(1 << 20, 'x');  // 1 MiB: writes take a while
  write_entry(disk, e);

  std::vector<pid_t> children;
  for (int p = 0; p < 3; ++p) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      try {
        for (int i = 0; i < 10; ++i) write_entry(DiskCache(dir.path), e);
      } catch (...) {
        code = 1;
      }
      ::_exit(code);
    }
    children.push_back(pid);
  }
  // Threads start after the forks (a child of a multi-threaded process may only do
  // async-signal-safe work).
  std::atomic<bool> stop{false};
  std::atomic<int> bad_reads{0}, reads{0};
  std::thread reader([&] {
    while (!stop) {
      const DecodeResult r = read_entry(disk, e.key.hash);
      ++reads;
      if (r.status != EntryStatus::Ok) ++bad_reads;
    }
  });
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int w = 0; w < 3; ++w)
    writers.emplace_back([&] {
      for (int i = 0; i < 10; ++i) try {
          write_entry(disk, e);
        } catch (...) {
          ++failures;
        }
    });
  for (auto& w : writers) w.join();
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  stop = true;
  reader.join();
  CHECK(failures == 0);
  CHECK(reads > 0);
  CHECK(bad_reads == 0);
  CHECK(read_entry(disk, e.key.hash).status == EntryStatus::Ok);
  CHECK(disk.list().size() == 1);
  for (const auto& f : fs::directory_iterator(dir.path))
    CHECK_MESSAGE((f.path().filename().string()[0] != '.' || f.path().filename() == kAuthKeyFileName),
                  "temporary file left: " << f.path());
}

TEST_CASE("disk cache: gc removes least recently used entries - clear removes only entries") {
  TempDir dir("gc");
  const DiskCache disk(dir.path);
  std::vector<DiskEntry> entries;
  const auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < 4; ++i) {
    entries.push_back(sample_entry("cost" + std::to_string(i)));
    write_entry(disk, entries.back());
    // cost0 is the oldest.
    fs::last_write_time(disk.entry_path(entries.back().key.hash), now - std::chrono::hours(10 - i));
  }
  // Reading cost0 makes it the most recently used.
  REQUIRE(load_entry(disk, entries[0].key.hash).status == EntryStatus::Ok);
  write_bytes(dir / "notes.txt", "not ours");
  write_bytes(dir / "README.lsjitk", "not an id");
  const std::string stale_temp = "." + entries[0].key.id() + ".lsjitk.tmp.123.abc";
  write_bytes(dir / stale_temp, "half");
  fs::last_write_time(dir / stale_temp, now - std::chrono::hours(2));

  const uint64_t one = disk.list()[0].size;
  const DiskCache::RemoveResult r = disk.gc(2 * one);
  CHECK(r.removed == 3);  // cost1, cost2 and the stale temporary file
  CHECK(r.kept == 2);
  CHECK(r.kept_bytes == 2 * one);
  CHECK(!fs::exists(dir / stale_temp));
  CHECK(read_entry(disk, entries[0].key.hash).status == EntryStatus::Ok);
  CHECK(read_entry(disk, entries[1].key.hash).status == EntryStatus::Missing);
  CHECK(read_entry(disk, entries[2].key.hash).status == EntryStatus::Missing);
  CHECK(read_entry(disk, entries[3].key.hash).status == EntryStatus::Ok);

  const DiskCache::RemoveResult c = disk.clear();
  CHECK(c.removed == 2);
  CHECK(disk.list().empty());
  CHECK(fs::exists(dir / "notes.txt"));
  CHECK(fs::exists(dir / "README.lsjitk"));
}

TEST_CASE("sizes and the default directory") {
  CHECK(parse_size("0") == 0u);
  CHECK(parse_size("1234") == 1234u);
  CHECK(parse_size("10K") == 10240u);
  CHECK(parse_size("10k") == 10240u);
  CHECK(parse_size("100M") == 100u * 1024 * 1024);
  CHECK(parse_size("100MB") == 100u * 1024 * 1024);
  CHECK(parse_size("100MiB") == 100u * 1024 * 1024);
  CHECK(parse_size("2G") == 2ull * 1024 * 1024 * 1024);
  CHECK(parse_size("1.5K") == 1536u);
  CHECK(!parse_size(""));
  CHECK(!parse_size("M"));
  CHECK(!parse_size("12X"));
  CHECK(!parse_size("-5"));
  CHECK(format_size(512) == "512 B");
  CHECK(format_size(1536) == "1.5 KiB");

  struct Env {
    std::string name;
    std::optional<std::string> old;
    explicit Env(const char* n) : name(n) {
      if (const char* v = std::getenv(n)) old = v;
    }
    ~Env() {
      if (old) ::setenv(name.c_str(), old->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  } e1("LSJIT_CACHE_DIR"), e2("XDG_CACHE_HOME"), e3("HOME");
  ::setenv("LSJIT_CACHE_DIR", "/tmp/a", 1);
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  ::setenv("HOME", "/tmp/home", 1);
  CHECK(default_cache_dir() == fs::path("/tmp/a"));
  ::unsetenv("LSJIT_CACHE_DIR");
  CHECK(default_cache_dir() == fs::path("/tmp/xdg/lsjit"));
  ::setenv("XDG_CACHE_HOME", "relative", 1);
  CHECK(default_cache_dir() == fs::path("/tmp/home/.cache/lsjit"));
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("HOME");
  CHECK(!default_cache_dir());
}

// ---------------------------------------------------------------- entries and seeds

TEST_CASE("disk cache: an entry past kMaxEntryBytes is not written") {
  TempDir dir("oversized_write");
  FakeCache probe(dir.path, memory_only());
  DiskEntry e;
  e.key = probe->key_for(trace_scaled(2.0), KernelMode::Residual);
  e.symbol = kernel_symbol(e.key);
  e.object_code.assign(kMaxEntryBytes, 'x');  // the header and the rest make it larger
  const DiskCache disk(dir.path);
  CHECK_THROWS_AS(disk.write(e, dir_key(disk)), EntryBlocked);
  CHECK_FALSE(fs::exists(disk.entry_path(e.key.hash)));
}

TEST_CASE("disk format: the fuzzer's seed entries are current (tests/fuzz/corpus/cache_entry)") {
  // fuzz_cache_entry.cpp's key; a format change must come with new seeds, or the fuzzer
  // would start from entries that no longer reach the payload parser.
  const AuthKey fuzz_key = test_key(0x42);
  const fs::path seeds = fs::path(LSJIT_SOURCE_DIR) / "tests/fuzz/corpus/cache_entry";
  CHECK(decode_entry(read_bytes(seeds / "valid.lsjitk"), &fuzz_key).status == EntryStatus::Ok);
  CHECK(decode_entry(read_bytes(seeds / "empty_fields.lsjitk"), &fuzz_key).status == EntryStatus::Ok);
  CHECK(decode_entry(read_bytes(seeds / "bad_other_key.lsjitk"), &fuzz_key).status ==
        EntryStatus::Unauthenticated);
}
