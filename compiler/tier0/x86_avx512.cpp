#include "lsjit/compiler/tier0/x86_avx512.h"

#include <stdexcept>

namespace lsjit::compiler::x86 {

namespace {

constexpr uint8_t kMap0F = 1, kMap0F38 = 2, kMap0F3A = 3;

uint8_t base_id(const Mem& m) {
  const uint8_t b = static_cast<uint8_t>(m.base);
  if (b == 4) throw std::logic_error("x86 assembler: rsp as a base needs a SIB byte");
  return b;
}

}  // namespace

void Assembler::emit32(uint32_t v) {
  for (int k = 0; k < 4; ++k) bytes_.push_back(static_cast<uint8_t>(v >> (8 * k)));
}

// EVEX: 62, then P0 = R X B R' 0 0 m m, P1 = W vvvv 1 p p, P2 = z L'L b V' a a a, with R,
// X, B, R', vvvv and V' stored inverted. ModRM.reg's bits 3 and 4 go to R and R'; a
// register rm's bits 3 and 4 to B and X; vvvv's bit 4 to V'.
void Assembler::evex(uint8_t map, uint8_t opcode, uint8_t reg, uint8_t vvvv, bool vvvv_used,
                     const Operand& rm, Mask k, bool zeroing) {
  const uint8_t rm_id = rm.is_memory ? base_id(rm.mem) : rm.reg.id;
  uint8_t p0 = map;
  if (!(reg & 8)) p0 |= 0x80;                           // R
  if (rm.is_memory || !(rm_id & 16)) p0 |= 0x40;        // X (no index; or rm bit 4)
  if (!(rm_id & 8)) p0 |= 0x20;                         // B
  if (!(reg & 16)) p0 |= 0x10;                          // R'
  const uint8_t v = vvvv_used ? vvvv : 0;
  const uint8_t p1 = static_cast<uint8_t>(0x80 | ((~v & 15) << 3) | 0x04 | 0x01);  // W1, 66
  uint8_t p2 = static_cast<uint8_t>(0x40 | (k.id & 7));  // L'L = 10: 512 bits
  if (zeroing) p2 |= 0x80;
  if (!(v & 16)) p2 |= 0x08;                            // V'
  bytes_.insert(bytes_.end(), {0x62, p0, p1, p2, opcode});
  modrm(reg, rm);
}

void Assembler::modrm(uint8_t reg, const Operand& rm) {
  if (!rm.is_memory) {
    bytes_.push_back(static_cast<uint8_t>(0xc0 | ((reg & 7) << 3) | (rm.reg.id & 7)));
    return;
  }
  // Every memory operand is a whole 64-byte vector, so EVEX scales an 8-bit displacement by
  // 64 (disp8*N): [base + 64k] for -128 <= k < 128 takes one byte, as assemblers emit it.
  const int32_t d = rm.mem.disp;
  if (d == 0 && rm.mem.base != Gpr::rbp) {  // [base] (mod 00 with rbp would mean rip-relative)
    bytes_.push_back(static_cast<uint8_t>(((reg & 7) << 3) | base_id(rm.mem)));
    return;
  }
  if (d % 64 == 0 && d / 64 >= -128 && d / 64 < 128) {
    bytes_.push_back(static_cast<uint8_t>(0x40 | ((reg & 7) << 3) | base_id(rm.mem)));  // [base + disp8*64]
    bytes_.push_back(static_cast<uint8_t>(static_cast<int8_t>(d / 64)));
    return;
  }
  bytes_.push_back(static_cast<uint8_t>(0x80 | ((reg & 7) << 3) | base_id(rm.mem)));  // [base + disp32]
  emit32(static_cast<uint32_t>(d));
}

void Assembler::load(Zmm dst, Mem src) { evex(kMap0F, 0x10, dst.id, 0, false, src, {0}, false); }
void Assembler::store(Mem dst, Zmm src) { evex(kMap0F, 0x11, src.id, 0, false, dst, {0}, false); }
void Assembler::move(Zmm dst, Zmm src, Mask k) { evex(kMap0F, 0x28, dst.id, 0, false, src, k, false); }
void Assembler::load_masked_zero(Zmm dst, Mem src, Mask k) {
  evex(kMap0F, 0x10, dst.id, 0, false, src, k, true);
}
void Assembler::binary(Binary op, Zmm dst, Zmm src1, Operand src2) {
  evex(kMap0F, static_cast<uint8_t>(op), dst.id, src1.id, true, src2, {0}, false);
}
void Assembler::fma(FmaForm form, Zmm dst, Zmm src1, Operand src2) {
  evex(kMap0F38, static_cast<uint8_t>(form), dst.id, src1.id, true, src2, {0}, false);
}
void Assembler::sqrt(Zmm dst, Operand src) { evex(kMap0F, 0x51, dst.id, 0, false, src, {0}, false); }
void Assembler::round(Zmm dst, Operand src, uint8_t imm) {
  evex(kMap0F3A, 0x09, dst.id, 0, false, src, {0}, false);
  bytes_.push_back(imm);
}
void Assembler::compare(Mask dst, Zmm src1, Operand src2, Compare predicate, Mask k) {
  evex(kMap0F, 0xc2, dst.id, src1.id, true, src2, k, false);
  bytes_.push_back(static_cast<uint8_t>(predicate));
}
void Assembler::blend(Zmm dst, Mask k, Zmm src1, Operand src2) {
  evex(kMap0F38, 0x65, dst.id, src1.id, true, src2, k, false);
}
// VEX.L1.0F.W0 45 /r in the two-byte form: C5, R vvvv L pp (R, vvvv inverted).
void Assembler::kor(Mask dst, Mask a, Mask b) {
  bytes_.insert(bytes_.end(), {0xc5, static_cast<uint8_t>(0x80 | ((~a.id & 15) << 3) | 0x04), 0x45,
                               static_cast<uint8_t>(0xc0 | ((dst.id & 7) << 3) | (b.id & 7))});
}

void Assembler::mov_ecx(uint32_t value) {
  bytes_.push_back(0xb9);
  emit32(value);
}
void Assembler::add_rdi(int32_t value) {
  if (value >= -128 && value < 128) {
    bytes_.insert(bytes_.end(), {0x48, 0x83, 0xc7, static_cast<uint8_t>(static_cast<int8_t>(value))});
    return;
  }
  bytes_.insert(bytes_.end(), {0x48, 0x81, 0xc7});
  emit32(static_cast<uint32_t>(value));
}
void Assembler::dec_ecx() { bytes_.insert(bytes_.end(), {0xff, 0xc9}); }
void Assembler::jnz_back(size_t target) {
  bytes_.insert(bytes_.end(), {0x0f, 0x85});
  const int64_t rel = static_cast<int64_t>(target) - static_cast<int64_t>(bytes_.size() + 4);
  emit32(static_cast<uint32_t>(static_cast<int32_t>(rel)));
}
void Assembler::vzeroupper() { bytes_.insert(bytes_.end(), {0xc5, 0xf8, 0x77}); }
void Assembler::ret() { bytes_.push_back(0xc3); }

}  // namespace lsjit::compiler::x86
