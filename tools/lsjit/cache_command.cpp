// lsjit cache: inspect and maintain the on-disk kernel cache (compiler/cache/disk_cache.h).
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cache_export.h"
#include "commands.h"
#include "lsjit/common/error.h"
#include "lsjit/common/json.h"
#include "lsjit/compiler/cache/cache_key.h"
#include "lsjit/compiler/cache/disk_cache.h"
#include "lsjit/compiler/cache/recompile_check.h"

namespace lsjit::cli {
namespace {

using compiler::DecodeResult;
using compiler::DiskCache;
using compiler::EntryStatus;
namespace fs = std::filesystem;

constexpr const char* kCacheUsage = R"(usage: lsjit cache <command> [--dir DIR] [--json]

commands:
  list                 every entry: id prefix, cost, mode, size, compile time. Data entries
                       (what a solve derives from a problem's structure alone, such as the
                       sparse Cholesky's block ordering) show (data) and their kind
  show KEY             an entry's key parts, stage times, symbol, and the IR text of the
                       graph it compiles (a data entry: its kind and size)
  diff KEY1 KEY2       the key parts that differ between two entries
  stats                number of entries, total size, bad entries
  verify [--remove-bad]
                       check every entry: that it is a regular file of this user, header,
                       format version, checksum, authentication tag (an entry not written
                       with this user's key is bad and never loaded), that its id is
                       the hash of its key parts and its symbol the key's; then recompile
                       the IR it stores and run the stored and the new code on the same
                       random inputs: every output must be bit-identical. Entries built for
                       another CPU, LLVM or IR version are checked but not recompiled, and
                       data entries have nothing to recompile. Bad
                       entries are reported (exit status 1) and, with --remove-bad, deleted.
  gc [--max-size SIZE] delete least recently used entries until the total size is at most
                       SIZE (bytes, or with a K, M or G suffix: 500M, 2G; 1G by default),
                       and temporary files of writers that died
  clear                delete every entry (only the cache's own *.lsjitk files that start
                       with its magic number) and its temporary files
  export [KEY...] [--from-log FILE] [--all] --name NAME --out DIR
                       write kernels as a static library DIR/libNAME.a and a registration
                       source DIR/NAME.cpp (with DIR/NAME.h): a program that links both and
                       calls register_NAME() before analyze() runs those kernels without
                       compiling, reading the cache or loading LLVM. --from-log takes the
                       kernels named in the log of a run with LSJIT_LOG_COMPILES=1 (what
                       one program used); --all takes every entry. Entries must
                       authenticate; the CPU they were compiled for is part of their key

A missing, unreadable or untrusted directory (not owned by you, or writable by group or
others) is an error (exit status 1).

options:
  --dir DIR            the cache directory (default: $LSJIT_CACHE_DIR, else
                       $XDG_CACHE_HOME/lsjit, else ~/.cache/lsjit)
  --json               print one JSON document instead of text

KEY is an entry id (32 hex digits) or a prefix of one that names a single entry.
)";

std::string ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", s * 1e3);
  return buf;
}

std::string mtime_text(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "?";
  std::tm tm{};
  ::localtime_r(&st.st_mtime, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// Seconds the original compile took: every stage but tracing.
double compile_seconds(const compiler::StageTimes& t) { return t.total() - t.trace_s; }

struct Loaded {
  DiskCache::FileInfo file;
  DecodeResult result;
  bool ok() const { return result.status == EntryStatus::Ok; }
  bool data() const { return ok() && compiler::is_data_key(result.entry->key); }
  // A data entry's cost is "(data)" and its mode the data's kind.
  std::string cost() const {
    return data() ? "(data)" : ok() ? std::string(result.entry->key.part("cost")) : "";
  }
  std::string mode() const {
    return !ok() ? "" : std::string(result.entry->key.part(data() ? "data" : "mode"));
  }
};

// The directory's key, or nullptr if it has none yet (then no entry authenticates).
const compiler::AuthKey* g_key = nullptr;

DecodeResult read_entry(const fs::path& path) { return DiskCache::read_file(path, g_key); }

std::vector<Loaded> load_all(const DiskCache& disk) {
  std::vector<Loaded> out;
  for (DiskCache::FileInfo& f : disk.list()) {
    DecodeResult r = read_entry(f.path);  // not read(): listing is not a use
    out.push_back({std::move(f), std::move(r)});
  }
  std::sort(out.begin(), out.end(), [](const Loaded& a, const Loaded& b) {
    return std::make_tuple(a.result.status, a.cost(), a.mode(), a.file.id) <
           std::make_tuple(b.result.status, b.cost(), b.mode(), b.file.id);
  });
  return out;
}

std::string bad_reason(const DecodeResult& r) {
  return std::string(compiler::entry_status_name(r.status)) + ": " + r.message;
}

// The entry named by `key` (an id or a unique prefix), or an error on `err`.
std::optional<DiskCache::FileInfo> resolve(const DiskCache& disk, const std::string& key,
                                           std::ostream& err) {
  try {
    return disk.find_one(key);
  } catch (const Error& e) {
    err << "lsjit cache: " << e.what() << "\n";
    return std::nullopt;
  }
}

int list_command(const DiskCache& disk, bool json, std::ostream& out) {
  const std::vector<Loaded> all = load_all(disk);
  if (json) {
    out << "{\"directory\": " << json_string(disk.directory().string()) << ", \"entries\": [";
    for (size_t i = 0; i < all.size(); ++i) {
      const Loaded& l = all[i];
      out << (i ? ",\n  " : "\n  ") << "{\"id\": " << json_string(l.file.id)
          << ", \"size\": " << l.file.size << ", \"ok\": " << (l.ok() ? "true" : "false");
      if (l.ok())
        out << ", \"cost\": " << json_string(l.cost()) << ", \"mode\": " << json_string(l.mode())
            << ", \"compile_s\": " << json_number(compile_seconds(l.result.entry->times));
      else
        out << ", \"error\": " << json_string(bad_reason(l.result));
      out << "}";
    }
    out << (all.empty() ? "]}\n" : "\n]}\n");
    return 0;
  }
  if (all.empty()) {
    out << "no entries in " << disk.directory().string() << "\n";
    return 0;
  }
  char line[512];
  std::snprintf(line, sizeof line, "%-12s  %-24s  %-18s  %10s  %10s\n", "ID", "COST", "MODE", "SIZE",
                "COMPILE");
  out << line;
  for (const Loaded& l : all) {
    if (l.ok())
      std::snprintf(line, sizeof line, "%-12s  %-24s  %-18s  %10s  %10s\n", l.file.id.substr(0, 12).c_str(),
                    l.cost().c_str(), l.mode().c_str(), compiler::format_size(l.file.size).c_str(),
                    ms(compile_seconds(l.result.entry->times)).c_str());
    else
      std::snprintf(line, sizeof line, "%-12s  BAD (%s)  %10s\n", l.file.id.substr(0, 12).c_str(),
                    bad_reason(l.result).c_str(), compiler::format_size(l.file.size).c_str());
    out << line;
  }
  return 0;
}

void times_json(std::ostream& out, const compiler::StageTimes& t) {
  out << "{\"trace_s\": " << json_number(t.trace_s) << ", \"differentiate_s\": " << json_number(t.differentiate_s)
      << ", \"simplify_s\": " << json_number(t.simplify_s) << ", \"llvm_ir_s\": " << json_number(t.llvm_ir_s)
      << ", \"optimize_s\": " << json_number(t.optimize_s) << ", \"codegen_s\": " << json_number(t.codegen_s)
      << ", \"link_s\": " << json_number(t.link_s) << "}";
}

int show_command(const DiskCache& disk, const std::string& key, bool json, std::ostream& out,
                 std::ostream& err) {
  const auto file = resolve(disk, key, err);
  if (!file) return 1;
  const DecodeResult r = read_entry(file->path);
  if (r.status != EntryStatus::Ok) {
    err << "lsjit cache: entry " << file->id << " is bad (" << bad_reason(r) << ")\n";
    return 1;
  }
  const compiler::DiskEntry& e = *r.entry;
  const bool data = compiler::is_data_key(e.key);
  if (json) {
    out << "{\"id\": " << json_string(file->id) << ", \"path\": " << json_string(file->path.string())
        << ", \"size\": " << file->size << ", \"modified\": " << json_string(mtime_text(file->path));
    if (data)
      out << ", \"data\": " << json_string(std::string(e.key.part("data")))
          << ", \"data_size\": " << e.object_code.size();
    else
      out << ", \"symbol\": " << json_string(e.symbol) << ", \"object_size\": " << e.object_code.size();
    out << ",\n \"parts\": {";
    for (size_t i = 0; i < e.key.parts.size(); ++i)
      out << (i ? ", " : "") << json_string(e.key.parts[i].first) << ": "
          << json_string(e.key.parts[i].second);
    out << "}";
    if (data) {
      out << "}\n";
      return 0;
    }
    out << ",\n \"times\": ";
    times_json(out, e.times);
    out << ",\n \"compile_s\": " << json_number(compile_seconds(e.times))
        << ",\n \"ir\": " << json_string(e.ir_text) << "}\n";
    return 0;
  }
  char line[256];
  out << "id        " << file->id << "\n"
      << "file      " << file->path.string() << "\n"
      << "size      " << compiler::format_size(file->size) << "\n"
      << "modified  " << mtime_text(file->path) << "\n";
  if (data)
    out << "data      " << e.key.part("data") << ", " << e.object_code.size() << " bytes\n";
  else
    out << "symbol    " << e.symbol << "\n"
        << "object    " << e.object_code.size() << " bytes\n";
  out << "key parts:\n";
  for (const auto& [name, value] : e.key.parts) {
    std::snprintf(line, sizeof line, "  %-16s ", name.c_str());
    out << line << value << "\n";
  }
  if (data) return 0;
  const compiler::StageTimes& t = e.times;
  out << "stage times of the compile that made it:\n";
  for (const auto& [name, s] :
       std::initializer_list<std::pair<const char*, double>>{
           {"trace", t.trace_s}, {"differentiate", t.differentiate_s}, {"simplify", t.simplify_s},
           {"llvm_ir", t.llvm_ir_s}, {"optimize", t.optimize_s}, {"codegen", t.codegen_s},
           {"link", t.link_s}}) {
    std::snprintf(line, sizeof line, "  %-16s %10.3f ms\n", name, s * 1e3);
    out << line;
  }
  std::snprintf(line, sizeof line, "  %-16s %10.3f ms\n", "compile total", compile_seconds(t) * 1e3);
  out << line << "IR of the compiled graph:\n" << e.ir_text;
  if (!e.ir_text.empty() && e.ir_text.back() != '\n') out << "\n";
  return 0;
}

int diff_command(const DiskCache& disk, const std::string& k1, const std::string& k2, bool json,
                 std::ostream& out, std::ostream& err) {
  const auto f1 = resolve(disk, k1, err);
  const auto f2 = resolve(disk, k2, err);
  if (!f1 || !f2) return 1;
  const DecodeResult r1 = read_entry(f1->path), r2 = read_entry(f2->path);
  for (const auto* p : {&r1, &r2})
    if (p->status != EntryStatus::Ok) {
      err << "lsjit cache: entry " << (p == &r1 ? f1->id : f2->id) << " is bad (" << bad_reason(*p) << ")\n";
      return 1;
    }
  const auto diffs = compiler::diff_keys(r1.entry->key, r2.entry->key);
  if (json) {
    out << "{\"a\": " << json_string(f1->id) << ", \"b\": " << json_string(f2->id) << ", \"differences\": [";
    for (size_t i = 0; i < diffs.size(); ++i)
      out << (i ? ", " : "") << "{\"part\": " << json_string(diffs[i].part)
          << ", \"a\": " << json_string(diffs[i].before) << ", \"b\": " << json_string(diffs[i].after) << "}";
    out << "]}\n";
    return 0;
  }
  out << "a: " << f1->id << "\nb: " << f2->id << "\n";
  if (diffs.empty()) {
    out << "the keys are equal\n";
    return 0;
  }
  for (const auto& d : diffs) {
    out << d.part << ":\n  a: " << d.before << "\n  b: " << d.after << "\n";
  }
  return 0;
}

int stats_command(const DiskCache& disk, bool json, std::ostream& out) {
  const std::vector<Loaded> all = load_all(disk);
  uint64_t total = 0;
  size_t bad = 0;
  double compile_s = 0;
  for (const Loaded& l : all) {
    total += l.file.size;
    if (!l.ok()) ++bad;
    else compile_s += compile_seconds(l.result.entry->times);
  }
  if (json) {
    out << "{\"directory\": " << json_string(disk.directory().string()) << ", \"entries\": " << all.size()
        << ", \"bad_entries\": " << bad << ", \"total_bytes\": " << total
        << ", \"compile_s\": " << json_number(compile_s) << "}\n";
    return 0;
  }
  out << "directory     " << disk.directory().string() << "\n"
      << "entries       " << all.size() << "\n"
      << "bad entries   " << bad << "\n"
      << "total size    " << compiler::format_size(total) << " (" << total << " bytes)\n"
      << "compile time  " << ms(compile_s) << " (saved on every hit)\n";
  return 0;
}

// One entry's outcome under `lsjit cache verify`.
struct Verdict {
  std::string id, cost, mode, problem;
  std::string skipped;  // why the recompile was skipped, if it was
  bool removed = false;
  bool data = false;  // a data entry: intact, nothing to recompile
};

// Checks one entry (see kCacheUsage's verify) and, with `remove_bad`, deletes it if bad.
Verdict verify_entry(const Loaded& l, bool remove_bad) {
  Verdict v{l.file.id, l.cost(), l.mode(), "", "", false, false};
  if (!l.ok()) {
    v.problem = bad_reason(l.result);
  } else {
    const compiler::DiskEntry& e = *l.result.entry;
    try {
      if (!(compiler::hash_key_parts(e.key.parts) == e.key.hash))
        throw Error("its id is not the hash of its key parts (" +
                    compiler::hash_key_parts(e.key.parts).hex() + ")");
      if (l.data()) {  // no code: the checks above are all there is (its user checks the data)
        v.data = true;
        return v;
      }
      if (e.symbol != compiler::kernel_symbol(e.key))
        throw Error("its symbol " + e.symbol + " is not " + compiler::kernel_symbol(e.key));
      const compiler::RecompileCheck check = compiler::recompile_check(e);
      if (check.outcome == compiler::RecompileCheck::Outcome::Different)
        v.problem = "recompiled, its output differs from the stored code's: " + check.detail;
      else if (check.outcome == compiler::RecompileCheck::Outcome::Skipped)
        v.skipped = check.detail;
    } catch (const std::exception& ex) {
      v.problem = ex.what();
    }
  }
  if (!v.problem.empty() && remove_bad) {
    std::error_code ec;
    v.removed = fs::remove(l.file.path, ec) && !ec;
  }
  return v;
}

void verdicts_json(const DiskCache& disk, const std::vector<Verdict>& verdicts, size_t bad,
                   size_t skipped, std::ostream& out) {
  out << "{\"directory\": " << json_string(disk.directory().string()) << ", \"entries\": " << verdicts.size()
      << ", \"bad\": " << bad << ", \"not_recompiled\": " << skipped << ", \"results\": [";
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const Verdict& v = verdicts[i];
    out << (i ? ",\n  " : "\n  ") << "{\"id\": " << json_string(v.id)
        << ", \"ok\": " << (v.problem.empty() ? "true" : "false")
        << ", \"recompiled\": " << (v.problem.empty() && v.skipped.empty() && !v.data ? "true" : "false");
    if (!v.cost.empty())
      out << ", \"cost\": " << json_string(v.cost) << ", \"mode\": " << json_string(v.mode);
    if (v.data) out << ", \"data_entry\": true";
    if (!v.skipped.empty()) out << ", \"not_recompiled_because\": " << json_string(v.skipped);
    if (!v.problem.empty())
      out << ", \"problem\": " << json_string(v.problem)
          << ", \"removed\": " << (v.removed ? "true" : "false");
    out << "}";
  }
  out << (verdicts.empty() ? "]}\n" : "\n]}\n");
}

void verdicts_text(const std::vector<Verdict>& verdicts, size_t bad, size_t skipped, bool remove_bad,
                   std::ostream& out) {
  for (const Verdict& v : verdicts) {
    if (!v.problem.empty())
      out << "BAD  " << v.id.substr(0, 12) << "  " << (v.cost.empty() ? "" : v.cost + " " + v.mode + ": ")
          << v.problem << (v.removed ? " (removed)" : "") << "\n";
    else if (!v.skipped.empty())
      out << "ok   " << v.id.substr(0, 12) << "  " << v.cost << " " << v.mode
          << " (intact; not recompiled: " << v.skipped << ")\n";
    else if (v.data)
      out << "ok   " << v.id.substr(0, 12) << "  " << v.cost << " " << v.mode
          << " (intact; a data entry: nothing to recompile)\n";
    else
      out << "ok   " << v.id.substr(0, 12) << "  " << v.cost << " " << v.mode
          << " (recompiled: same output)\n";
  }
  out << verdicts.size() << " entries, " << verdicts.size() - bad << " ok, " << bad << " bad";
  if (skipped) out << ", " << skipped << " not recompiled (built for another target or version)";
  if (bad && !remove_bad) out << " (lsjit cache verify --remove-bad deletes them)";
  out << "\n";
}

int verify_command(const DiskCache& disk, bool json, bool remove_bad, std::ostream& out) {
  std::vector<Verdict> verdicts;
  for (const Loaded& l : load_all(disk)) verdicts.push_back(verify_entry(l, remove_bad));
  const size_t bad = std::count_if(verdicts.begin(), verdicts.end(),
                                   [](const Verdict& v) { return !v.problem.empty(); });
  const size_t skipped = std::count_if(verdicts.begin(), verdicts.end(),
                                       [](const Verdict& v) { return !v.skipped.empty(); });
  if (json) {
    verdicts_json(disk, verdicts, bad, skipped, out);
    return bad ? 1 : 0;
  }
  verdicts_text(verdicts, bad, skipped, remove_bad, out);
  return bad ? 1 : 0;
}

void removal_report(const DiskCache::RemoveResult& r, bool json, std::ostream& out) {
  if (json) {
    out << "{\"removed\": " << r.removed << ", \"removed_bytes\": " << r.removed_bytes
        << ", \"kept\": " << r.kept << ", \"kept_bytes\": " << r.kept_bytes << "}\n";
    return;
  }
  out << "removed " << r.removed << " files (" << compiler::format_size(r.removed_bytes) << "), kept "
      << r.kept << " (" << compiler::format_size(r.kept_bytes) << ")\n";
}

// The flags and operands of `lsjit cache <command>`.
struct CacheArgs {
  std::optional<fs::path> dir;
  std::optional<std::string> max_size;
  bool json = false, remove_bad = false;
  ExportRequest export_request;
  bool export_option = false;
  std::vector<std::string> positional;
};

// Reads the arguments after the command into `c`; returns 0, or the exit code after a usage error.
int parse_cache_args(const Args& args, CacheArgs* c, std::ostream& err) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* what) -> std::optional<std::string> {
      if (i + 1 >= args.size()) {
        err << "lsjit cache: " << printable(a) << " needs " << what << "\n";
        return std::nullopt;
      }
      return args[++i];
    };
    if (a == "--dir") {
      const auto v = value("a directory");
      if (!v) return 2;
      c->dir = *v;
    } else if (a == "--json") {
      c->json = true;
    } else if (a == "--max-size") {
      c->max_size = value("a size (e.g. 500M)");
      if (!c->max_size) return 2;
    } else if (a == "--remove-bad") {
      c->remove_bad = true;
    } else if (a == "--name" || a == "--out" || a == "--from-log") {
      const auto v = value(a == "--name" ? "a name" : a == "--out" ? "a directory" : "a log file");
      if (!v) return 2;
      if (a == "--name") c->export_request.name = *v;
      else if (a == "--out") c->export_request.out_dir = *v;
      else c->export_request.from_log = fs::path(*v);
      c->export_option = true;
    } else if (a == "--all") {
      c->export_request.all = c->export_option = true;
    } else if (!a.empty() && a[0] == '-') {
      err << "lsjit cache: unknown option '" << printable(a) << "'\n";
      return 2;
    } else {
      c->positional.push_back(a);
    }
  }
  return 0;
}

// Checks that `command` exists and takes the operands and options given (export takes the
// operands as its keys); returns 0, or the exit code after a usage error.
int check_cache_usage(const std::string& command, CacheArgs* c, std::ostream& err) {
  size_t wanted = 0;
  if (command == "show") wanted = 1;
  else if (command == "diff") wanted = 2;
  else if (command != "list" && command != "stats" && command != "verify" && command != "gc" &&
           command != "clear" && command != "export") {
    err << "lsjit cache: unknown command '" << printable(command) << "'\n" << kCacheUsage;
    return 2;
  }
  if (command == "export") {
    c->export_request.keys = c->positional;
  } else if (c->export_option) {
    err << "lsjit cache: --name, --out, --from-log and --all are options of export\n";
    return 2;
  } else if (c->positional.size() != wanted) {
    err << "lsjit cache " << command << ": expected " << wanted << " entr" << (wanted == 1 ? "y" : "ies")
        << " (id or prefix), got " << c->positional.size() << "\n";
    return 2;
  }
  if (c->max_size && command != "gc") {
    err << "lsjit cache: --max-size is an option of gc\n";
    return 2;
  }
  if (c->remove_bad && command != "verify") {
    err << "lsjit cache: --remove-bad is an option of verify\n";
    return 2;
  }
  return 0;
}

// Refuses an untrusted directory, then sets g_key to the directory's key; returns 0, or the
// exit code after a refusal.
int open_directory(const DiskCache& disk, std::ostream& err) {
  // Nothing is listed, loaded or removed in a directory the cache itself would refuse:
  // a missing, unreadable or untrusted folder is an error, not an empty listing.
  if (const compiler::DirectoryCheck check = disk.check_directory();
      check.status != compiler::DirectoryStatus::Trusted) {
    err << "lsjit cache: " << check.message << "\n";
    return 1;
  }
  const compiler::KeyResult key = disk.auth_key(false);
  if (!key.refusal.empty()) {
    err << "lsjit cache: " << key.refusal << "\n";
    return 1;
  }
  g_key = key.key ? &*key.key : nullptr;
  return 0;
}

// gc's size without --max-size: about 50,000 kernels of ~20 KiB, or a few hundred
// factorization structures of large problems, and a size nobody minds on a disk.
constexpr const char* kDefaultGcSize = "1G";

int gc_command(const DiskCache& disk, const std::optional<std::string>& max_size, bool json,
               std::ostream& out, std::ostream& err) {
  const auto bytes = compiler::parse_size(max_size.value_or(kDefaultGcSize));
  if (!bytes) {
    err << "lsjit cache gc: cannot read the size '" << printable(*max_size)
        << "': expected a number of bytes with an optional K, M or G suffix\n";
    return 2;
  }
  removal_report(disk.gc(*bytes), json, out);
  return 0;
}

}  // namespace

int cache_command(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    (args.empty() ? err : out) << kCacheUsage;
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  CacheArgs c;
  if (const int status = parse_cache_args(args, &c, err)) return status;
  if (const int status = check_cache_usage(command, &c, err)) return status;
  if (!c.dir) c.dir = compiler::default_cache_dir();
  if (!c.dir) {
    err << "lsjit cache: no cache directory: pass --dir or set LSJIT_CACHE_DIR, XDG_CACHE_HOME or HOME\n";
    return 2;
  }
  const DiskCache disk(*c.dir);
  if (const int status = open_directory(disk, err)) return status;

  if (command == "list") return list_command(disk, c.json, out);
  if (command == "export") return export_command(disk, g_key, c.export_request, out, err);
  if (command == "show") return show_command(disk, c.positional[0], c.json, out, err);
  if (command == "diff") return diff_command(disk, c.positional[0], c.positional[1], c.json, out, err);
  if (command == "stats") return stats_command(disk, c.json, out);
  if (command == "verify") return verify_command(disk, c.json, c.remove_bad, out);
  if (command == "gc") return gc_command(disk, c.max_size, c.json, out, err);
  removal_report(disk.clear(), c.json, out);  // clear
  return 0;
}

}  // namespace lsjit::cli
