// The LLVM-free object loader of kernel_loader.h. Reads top to bottom as the load does:
// check the header and section table, lay the allocated sections out in one mapping
// (code, then call stubs, then on the next page read-only data and GOT slots), copy,
// relocate, protect, look the function up.
#include "lsjit/compiler/cache/kernel_loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "lsjit/common/error.h"
#include "lsjit/compiler/llvm/jit.h"

namespace lsjit::compiler {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kStubSize = 16;  // jmp *0(%rip); .quad target; 2 bytes of int3

uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// Every read of the object goes through here, bounds-checked, so no offset taken from the
// object is trusted before it is compared with the object's size.
class Reader {
 public:
  Reader(std::string_view bytes, const std::string& symbol) : bytes_(bytes), symbol_(symbol) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw Error("lsjit kernel loader: the object of kernel '" + symbol_ + "' " + message);
  }
  bool contains(uint64_t offset, uint64_t size) const {
    return offset <= bytes_.size() && size <= bytes_.size() - offset;
  }
  template <class T>
  T read(uint64_t offset, const char* what) const {
    if (!contains(offset, sizeof(T))) fail(std::string("is too short for its ") + what);
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }
  const char* data(uint64_t offset) const { return bytes_.data() + offset; }

 private:
  std::string_view bytes_;
  const std::string& symbol_;
};

// The owned mapping; unmapped unless released to a LoadedKernel.
class Mapping {
 public:
  explicit Mapping(size_t size) : size_(size) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw Error("lsjit kernel loader: cannot map " + std::to_string(size) +
                                     " bytes: " + std::strerror(errno));
    base_ = static_cast<char*>(p);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (base_) munmap(base_, size_);
  }
  char* base() const { return base_; }
  size_t size() const { return size_; }

 private:
  char* base_ = nullptr;
  size_t size_ = 0;
};

class NativeKernel final : public LoadedKernel {
 public:
  NativeKernel(std::unique_ptr<Mapping> mapping, KernelFn fn)
      : mapping_(std::move(mapping)), fn_(fn) {}
  KernelFn function() const override { return fn_; }

 private:
  std::unique_ptr<Mapping> mapping_;
  KernelFn fn_;
};

// Resolves an undefined symbol in the process. libm and libmvec are loaded first (kept
// loaded), as jit.cpp does, so that kernels find them even when the executable does not
// link them.
void* resolve_in_process(const std::string& name) {
  // Never destroyed: a background compile may load a kernel while exit() runs destructors.
  static const std::vector<void*>* libraries = new std::vector<void*>([] {
    std::vector<void*> handles;
    for (const char* library : {"libm.so.6", "libmvec.so.1"})
      if (void* h = dlopen(library, RTLD_NOW | RTLD_GLOBAL)) handles.push_back(h);
    return handles;
  }());
  for (void* h : *libraries)
    if (void* address = dlsym(h, name.c_str())) return address;
  return dlsym(RTLD_DEFAULT, name.c_str());
}

bool is_got_relocation(uint32_t type) {
  return type == R_X86_64_GOTPCREL || type == R_X86_64_GOTPCRELX ||
         type == R_X86_64_REX_GOTPCRELX;
}

struct Placed {
  bool allocated = false;
  bool code = false;
  uint64_t offset = 0;  // in the mapping
};

class ObjectLinker {
 public:
  ObjectLinker(std::string_view bytes, const std::string& symbol) : in_(bytes, symbol), symbol_(symbol) {}

  ObjectSymbols symbols() {
    read_header();
    read_sections();
    read_symbol_table();
    ObjectSymbols out;
    for (const Elf64_Sym& sym : symbols_) {
      const unsigned bind = ELF64_ST_BIND(sym.st_info);
      if (bind != STB_GLOBAL && bind != STB_WEAK) continue;
      const std::string_view name = symbol_name(sym);
      if (name.empty()) continue;
      (sym.st_shndx == SHN_UNDEF ? out.undefined : out.defined).emplace_back(name);
    }
    return out;
  }

  std::shared_ptr<LoadedKernel> link() {
    read_header();
    read_sections();
    read_symbol_table();
    plan_stubs_and_got();
    lay_out();
    copy_sections();
    relocate();
    fill_stubs_and_got();
    protect();
    const KernelFn fn = find_function();
    return std::make_shared<NativeKernel>(std::move(mapping_), fn);
  }

 private:
  void read_header() {
    header_ = in_.read<Elf64_Ehdr>(0, "ELF header");
    const unsigned char* id = header_.e_ident;
    if (std::memcmp(id, ELFMAG, SELFMAG) != 0) in_.fail("is not an ELF file");
    if (id[EI_CLASS] != ELFCLASS64 || id[EI_DATA] != ELFDATA2LSB || id[EI_VERSION] != EV_CURRENT)
      in_.fail("is not a little-endian ELF64 object");
    if (header_.e_type != ET_REL) in_.fail("is not a relocatable object (ET_REL)");
    if (header_.e_machine != EM_X86_64) in_.fail("is not for x86-64");
    if (header_.e_shentsize != sizeof(Elf64_Shdr) || header_.e_shnum == 0)
      in_.fail("has no section table of ELF64 entries");
    if (header_.e_shstrndx >= header_.e_shnum) in_.fail("names a section-name table it lacks");
  }

  void read_sections() {
    const uint64_t table = header_.e_shoff;
    if (!in_.contains(table, uint64_t{header_.e_shnum} * sizeof(Elf64_Shdr)))
      in_.fail("has a section table past its end");
    for (uint32_t i = 0; i < header_.e_shnum; ++i) {
      const auto s = in_.read<Elf64_Shdr>(table + uint64_t{i} * sizeof(Elf64_Shdr), "section");
      if (s.sh_type != SHT_NULL && s.sh_type != SHT_NOBITS && !in_.contains(s.sh_offset, s.sh_size))
        in_.fail("has section " + std::to_string(i) + " past its end");
      sections_.push_back(s);
    }
    placed_.resize(sections_.size());
  }

  void read_symbol_table() {
    for (uint32_t i = 0; i < sections_.size(); ++i) {
      if (sections_[i].sh_type != SHT_SYMTAB) continue;
      if (symtab_index_ != 0) in_.fail("has two symbol tables");
      symtab_index_ = i;
    }
    if (symtab_index_ == 0) in_.fail("has no symbol table");
    const Elf64_Shdr& s = sections_[symtab_index_];
    if (s.sh_entsize != sizeof(Elf64_Sym) || s.sh_size % sizeof(Elf64_Sym) != 0)
      in_.fail("has a symbol table of odd entries");
    if (s.sh_link == 0 || s.sh_link >= sections_.size() ||
        sections_[s.sh_link].sh_type != SHT_STRTAB)
      in_.fail("has a symbol table without its string table");
    for (uint64_t k = 0; k < s.sh_size / sizeof(Elf64_Sym); ++k)
      symbols_.push_back(in_.read<Elf64_Sym>(s.sh_offset + k * sizeof(Elf64_Sym), "symbol"));
  }

  std::string_view symbol_name(const Elf64_Sym& sym) const {
    const Elf64_Shdr& strings = sections_[sections_[symtab_index_].sh_link];
    if (sym.st_name >= strings.sh_size) in_.fail("has a symbol name past its string table");
    const char* begin = in_.data(strings.sh_offset + sym.st_name);
    const void* nul = std::memchr(begin, '\0', strings.sh_size - sym.st_name);
    if (!nul) in_.fail("has an unterminated symbol name");
    return {begin, static_cast<size_t>(static_cast<const char*>(nul) - begin)};
  }

  const Elf64_Sym& symbol_at(uint64_t index) const {
    if (index >= symbols_.size()) in_.fail("relocates against symbol " + std::to_string(index) + ", which it lacks");
    return symbols_[index];
  }

  // The RELA sections that patch allocated sections; anything else that would patch code
  // or data (REL sections) is refused.
  std::vector<uint32_t> relocation_sections() const {
    std::vector<uint32_t> result;
    for (uint32_t i = 0; i < sections_.size(); ++i) {
      const Elf64_Shdr& s = sections_[i];
      if (s.sh_type != SHT_RELA && s.sh_type != SHT_REL) continue;
      if (s.sh_info >= sections_.size()) in_.fail("has relocations for a section it lacks");
      if (!(sections_[s.sh_info].sh_flags & SHF_ALLOC)) continue;  // debug info and the like
      if (s.sh_type == SHT_REL) in_.fail("has REL relocations (only RELA is accepted)");
      if (s.sh_link != symtab_index_) in_.fail("has relocations against another symbol table");
      if (s.sh_entsize != sizeof(Elf64_Rela) || s.sh_size % sizeof(Elf64_Rela) != 0)
        in_.fail("has a relocation section of odd entries");
      result.push_back(i);
    }
    return result;
  }

  Elf64_Rela relocation(const Elf64_Shdr& s, uint64_t k) const {
    return in_.read<Elf64_Rela>(s.sh_offset + k * sizeof(Elf64_Rela), "relocation");
  }

  void plan_stubs_and_got() {
    for (uint32_t r : relocation_sections()) {
      const Elf64_Shdr& s = sections_[r];
      for (uint64_t k = 0; k < s.sh_size / sizeof(Elf64_Rela); ++k) {
        const Elf64_Rela rela = relocation(s, k);
        const uint32_t type = ELF64_R_TYPE(rela.r_info);
        const uint64_t index = ELF64_R_SYM(rela.r_info);
        const Elf64_Sym& sym = symbol_at(index);
        if (type == R_X86_64_PLT32 && sym.st_shndx == SHN_UNDEF) stubs_.emplace(index, 0);
        if (is_got_relocation(type)) got_.emplace(index, 0);
      }
    }
  }

  void lay_out() {
    uint64_t code = 0, data = 0;
    for (uint32_t i = 0; i < sections_.size(); ++i) {
      const Elf64_Shdr& s = sections_[i];
      if (!(s.sh_flags & SHF_ALLOC)) continue;
      if (s.sh_type != SHT_PROGBITS && s.sh_type != SHT_X86_64_UNWIND)
        in_.fail("has allocated section " + std::to_string(i) + " that is not PROGBITS");
      if (s.sh_flags & (SHF_WRITE | SHF_TLS))
        in_.fail("has a writable or thread-local section (" + std::to_string(i) + ")");
      const uint64_t alignment = s.sh_addralign == 0 ? 1 : s.sh_addralign;
      if ((alignment & (alignment - 1)) != 0 || alignment > kPage)
        in_.fail("has section " + std::to_string(i) + " with alignment " + std::to_string(alignment));
      Placed& p = placed_[i];
      p.allocated = true;
      p.code = (s.sh_flags & SHF_EXECINSTR) != 0;
      uint64_t& cursor = p.code ? code : data;
      p.offset = align_up(cursor, alignment);
      cursor = p.offset + s.sh_size;
    }
    if (code == 0) in_.fail("has no code");
    uint64_t next = align_up(code, kStubSize);
    for (auto& [index, offset] : stubs_) offset = std::exchange(next, next + kStubSize);
    code_size_ = align_up(next, kPage);
    next = align_up(data, 8);
    for (auto& [index, offset] : got_) offset = std::exchange(next, next + 8);
    data_size_ = align_up(next, kPage);
    // Data follows the code pages: shift its offsets.
    for (Placed& p : placed_)
      if (p.allocated && !p.code) p.offset += code_size_;
    for (auto& [index, offset] : got_) offset += code_size_;
    mapping_ = std::make_unique<Mapping>(code_size_ + data_size_);
  }

  void copy_sections() {
    for (uint32_t i = 0; i < sections_.size(); ++i)
      if (placed_[i].allocated)
        std::memcpy(mapping_->base() + placed_[i].offset, in_.data(sections_[i].sh_offset),
                    sections_[i].sh_size);
  }

  uint64_t symbol_address(uint64_t index) {
    const Elf64_Sym& sym = symbol_at(index);
    if (sym.st_shndx == SHN_UNDEF) {
      const std::string name(symbol_name(sym));
      if (name.empty()) in_.fail("relocates against an unnamed undefined symbol");
      auto [it, inserted] = resolved_.emplace(name, 0);
      if (inserted) it->second = reinterpret_cast<uint64_t>(resolve_in_process(name));
      if (it->second == 0) in_.fail("calls '" + name + "', which this process does not have");
      return it->second;
    }
    if (sym.st_shndx == SHN_ABS) return sym.st_value;
    if (sym.st_shndx >= sections_.size() || !placed_[sym.st_shndx].allocated)
      in_.fail("relocates against a symbol outside its loaded sections");
    if (sym.st_value > sections_[sym.st_shndx].sh_size)
      in_.fail("has a symbol past the end of its section");
    return reinterpret_cast<uint64_t>(mapping_->base()) + placed_[sym.st_shndx].offset + sym.st_value;
  }

  void relocate() {
    const uint64_t base = reinterpret_cast<uint64_t>(mapping_->base());
    for (uint32_t r : relocation_sections()) {
      const Elf64_Shdr& s = sections_[r];
      const Elf64_Shdr& target = sections_[s.sh_info];
      const uint64_t target_address = base + placed_[s.sh_info].offset;
      for (uint64_t k = 0; k < s.sh_size / sizeof(Elf64_Rela); ++k) {
        const Elf64_Rela rela = relocation(s, k);
        const uint32_t type = ELF64_R_TYPE(rela.r_info);
        const uint64_t index = ELF64_R_SYM(rela.r_info);
        const uint64_t width = type == R_X86_64_64 ? 8 : 4;
        if (rela.r_offset > target.sh_size || target.sh_size - rela.r_offset < width)
          in_.fail("has a relocation past the end of its section");
        const uint64_t place = target_address + rela.r_offset;
        const int64_t addend = rela.r_addend;
        switch (type) {
          case R_X86_64_64:
            write<uint64_t>(place, symbol_address(index) + addend);
            break;
          case R_X86_64_PC32:
          case R_X86_64_PLT32: {
            const auto stub = stubs_.find(index);
            const uint64_t to = (type == R_X86_64_PLT32 && stub != stubs_.end())
                                    ? base + stub->second
                                    : symbol_address(index);
            write_pc32(place, to + addend);
            break;
          }
          case R_X86_64_GOTPCREL:
          case R_X86_64_GOTPCRELX:
          case R_X86_64_REX_GOTPCRELX:
            write_pc32(place, base + got_.at(index) + addend);
            break;
          default:
            in_.fail("uses relocation type " + std::to_string(type) +
                     " (accepted: R_X86_64_64, PC32, PLT32, GOTPCREL[X])");
        }
      }
    }
  }

  template <class T>
  static void write(uint64_t place, T value) {
    std::memcpy(reinterpret_cast<void*>(place), &value, sizeof(T));
  }
  void write_pc32(uint64_t place, uint64_t to) {
    const int64_t delta = static_cast<int64_t>(to - place);
    if (delta < INT32_MIN || delta > INT32_MAX) in_.fail("has a PC-relative reference out of range");
    write<int32_t>(place, static_cast<int32_t>(delta));
  }

  void fill_stubs_and_got() {
    char* base = mapping_->base();
    for (const auto& [index, offset] : stubs_) {
      static constexpr unsigned char kJump[6] = {0xff, 0x25, 0, 0, 0, 0};  // jmp *0(%rip)
      std::memcpy(base + offset, kJump, sizeof kJump);
      write<uint64_t>(reinterpret_cast<uint64_t>(base + offset + 6), symbol_address(index));
      std::memset(base + offset + 14, 0xcc, 2);
    }
    for (const auto& [index, offset] : got_)
      write<uint64_t>(reinterpret_cast<uint64_t>(base + offset), symbol_address(index));
  }

  void protect() {
    char* base = mapping_->base();
    if (mprotect(base, code_size_, PROT_READ | PROT_EXEC) != 0 ||
        (data_size_ > 0 && mprotect(base + code_size_, data_size_, PROT_READ) != 0))
      throw Error("lsjit kernel loader: cannot make kernel '" + symbol_ +
                  "' executable: " + std::strerror(errno));
  }

  KernelFn find_function() {
    for (uint64_t k = 0; k < symbols_.size(); ++k) {
      const Elf64_Sym& sym = symbols_[k];
      const unsigned bind = ELF64_ST_BIND(sym.st_info);
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || (bind != STB_GLOBAL && bind != STB_WEAK))
        continue;
      if (symbol_name(sym) != symbol_) continue;
      if (sym.st_shndx >= sections_.size() || !placed_[sym.st_shndx].code ||
          sym.st_value >= sections_[sym.st_shndx].sh_size)
        in_.fail("defines '" + symbol_ + "' outside its code");
      return reinterpret_cast<KernelFn>(symbol_address(k));
    }
    in_.fail("does not define the function '" + symbol_ + "'");
  }

  Reader in_;
  const std::string& symbol_;
  Elf64_Ehdr header_{};
  std::vector<Elf64_Shdr> sections_;
  std::vector<Placed> placed_;
  uint32_t symtab_index_ = 0;
  std::vector<Elf64_Sym> symbols_;
  std::map<uint64_t, uint64_t> stubs_;  // undefined symbol index -> stub offset
  std::map<uint64_t, uint64_t> got_;    // symbol index -> GOT slot offset
  std::map<std::string, uint64_t> resolved_;
  uint64_t code_size_ = 0, data_size_ = 0;
  std::unique_ptr<Mapping> mapping_;
};

}  // namespace

bool native_loader_supported() {
#if defined(__x86_64__) && defined(__linux__)
  return true;
#else
  return false;
#endif
}

std::shared_ptr<LoadedKernel> load_object(std::string_view object_code, const std::string& symbol) {
  if (!native_loader_supported())
    throw Error("lsjit kernel loader: this host is not x86-64 Linux; kernels load through ORC");
  return ObjectLinker(object_code, symbol).link();
}

ObjectSymbols object_symbols(std::string_view object_code, const std::string& symbol) {
  return ObjectLinker(object_code, symbol).symbols();
}

std::shared_ptr<LoadedKernel> load_kernel(const std::string& object_code, const std::string& symbol) {
  if (native_loader_supported()) return load_object(object_code, symbol);
  return load_kernel_orc(object_code, symbol);
}

}  // namespace lsjit::compiler
