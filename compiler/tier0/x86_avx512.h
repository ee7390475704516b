// A minimal x86-64 assembler for the AVX-512 instructions tier 0's machine code uses
// (tier0_x86.h): packed-double arithmetic on zmm registers, compares into mask registers,
// masked moves, and the few general-purpose instructions of a counted loop.
//
// Why not LLVM's MC layer: tier 0 exists to run before (or without) LLVM, and a process
// whose kernels come from the disk cache never loads libLLVM. The instructions are few and
// regular (one EVEX prefix format), so encoding them here is a page of code; the tests check
// every form against llvm-mc's encodings (tests/compiler/x86_avx512_test.cpp).
//
// Operands: zmm0-zmm31, k0-k7, and memory as [base + disp32] with a base register other
// than rsp (which would need a SIB byte) and below r8. Every memory operand is a whole
// 64-byte vector, so displacements that are multiples of 64 within ±8 KiB take one byte
// (EVEX's disp8*N), others four. Nothing here checks that the CPU has AVX-512: callers do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lsjit::compiler::x86 {

enum class Gpr : uint8_t { rax = 0, rcx = 1, rdx = 2, rbx = 3, rbp = 5, rsi = 6, rdi = 7 };

struct Zmm {
  uint8_t id;  // 0..31
};
struct Mask {
  uint8_t id;  // k0..k7; as a write mask, k0 means "no mask"
};
struct Mem {
  Gpr base;
  int32_t disp;
};

// The second source of an EVEX instruction: a register or memory.
struct Operand {
  bool is_memory;
  Zmm reg;
  Mem mem;
  Operand(Zmm z) : is_memory(false), reg(z), mem{Gpr::rax, 0} {}  // NOLINT: implicit by design
  Operand(Mem m) : is_memory(true), reg{0}, mem(m) {}               // NOLINT
};

// vcmppd predicates (imm8), named as the SDM does.
enum class Compare : uint8_t {
  EqOQ = 0x00,
  LtOQ = 0x11,
  LeOQ = 0x12,
  UnordQ = 0x03,
  NeqUQ = 0x04,
  GtOQ = 0x1e,
  GeOQ = 0x1d,
};

// Packed-double ops of the form dst = op(src1, src2) (map 0F, prefix 66, W1).
enum class Binary : uint8_t {
  Add = 0x58,
  Mul = 0x59,
  Sub = 0x5c,
  Min = 0x5d,  // src1 < src2 ? src1 : src2 (x86's minpd)
  Div = 0x5e,
  Max = 0x5f,  // src1 > src2 ? src1 : src2
  Xor = 0xef,  // vpxorq
  And = 0xdb,  // vpandq
};

// The three FMA forms (map 0F38, W1): which operands multiply and which is added.
enum class FmaForm : uint8_t {
  F132 = 0x98,  // dst = dst * src2 + src1
  F213 = 0xa8,  // dst = src1 * dst + src2
  F231 = 0xb8,  // dst = src1 * src2 + dst
};

class Assembler {
 public:
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }

  // zmm
  void load(Zmm dst, Mem src);                               // vmovupd dst, [src]
  void store(Mem dst, Zmm src);                              // vmovupd [dst], src
  void move(Zmm dst, Zmm src, Mask k = {0});                 // vmovapd dst{k}, src
  void load_masked_zero(Zmm dst, Mem src, Mask k);           // vmovupd dst{k}{z}, [src]
  void binary(Binary op, Zmm dst, Zmm src1, Operand src2);
  void fma(FmaForm form, Zmm dst, Zmm src1, Operand src2);
  void sqrt(Zmm dst, Operand src);                           // vsqrtpd
  void round(Zmm dst, Operand src, uint8_t imm);             // vrndscalepd
  void compare(Mask dst, Zmm src1, Operand src2, Compare predicate, Mask k = {0});  // vcmppd dst{k}
  void blend(Zmm dst, Mask k, Zmm src1, Operand src2);       // vblendmpd dst{k}: k ? src2 : src1
  void kor(Mask dst, Mask a, Mask b);                        // korw

  // general purpose
  void mov_ecx(uint32_t value);           // mov ecx, imm32
  void add_rdi(int32_t value);            // add rdi, imm32
  void dec_ecx();                         // dec ecx
  void jnz_back(size_t target);           // jnz to the byte offset `target` (earlier)
  void vzeroupper();
  void ret();

 private:
  // One EVEX-encoded instruction: map (1 = 0F, 2 = 0F38, 3 = 0F3A), the 66 prefix always,
  // W1, 512 bits; `reg` the ModRM.reg field (a zmm or mask number), `vvvv` the second
  // register (0 when unused, encoded as 1111), `rm` the last operand.
  void evex(uint8_t map, uint8_t opcode, uint8_t reg, uint8_t vvvv, bool vvvv_used, const Operand& rm,
            Mask k, bool zeroing);
  void modrm(uint8_t reg, const Operand& rm);
  void emit32(uint32_t v);
  std::vector<uint8_t> bytes_;
};

}  // namespace lsjit::compiler::x86
