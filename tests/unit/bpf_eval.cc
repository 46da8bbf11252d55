#include "bpf_eval.h"

#include <cstring>
#include <stdexcept>

namespace confine::test {
namespace {

std::uint32_t load_word(const SeccompData& d, std::uint32_t offset) {
  unsigned char bytes[sizeof(SeccompData)];
  std::memcpy(bytes, &d, sizeof d);
  if (offset % 4 != 0 || offset + 4 > 64) throw std::runtime_error("bad load offset");
  std::uint32_t w;
  std::memcpy(&w, bytes + offset, 4);
  return w;
}

}  // namespace

std::uint32_t run_bpf(const std::vector<struct sock_filter>& prog, const SeccompData& d) {
  std::uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {};
  for (std::size_t pc = 0; pc < prog.size(); ++pc) {
    const auto& in = prog[pc];
    std::uint32_t src = BPF_SRC(in.code) == BPF_X ? x : in.k;
    switch (BPF_CLASS(in.code)) {
      case BPF_LD:
        if (BPF_MODE(in.code) == BPF_ABS) a = load_word(d, in.k);
        else if (BPF_MODE(in.code) == BPF_IMM) a = in.k;
        else if (BPF_MODE(in.code) == BPF_MEM) a = mem[in.k % BPF_MEMWORDS];
        else if (BPF_MODE(in.code) == BPF_LEN) a = sizeof(SeccompData);
        else throw std::runtime_error("bad ld");
        break;
      case BPF_LDX:
        if (BPF_MODE(in.code) == BPF_IMM) x = in.k;
        else if (BPF_MODE(in.code) == BPF_MEM) x = mem[in.k % BPF_MEMWORDS];
        else if (BPF_MODE(in.code) == BPF_LEN) x = sizeof(SeccompData);
        else throw std::runtime_error("bad ldx");
        break;
      case BPF_ST: mem[in.k % BPF_MEMWORDS] = a; break;
      case BPF_STX: mem[in.k % BPF_MEMWORDS] = x; break;
      case BPF_ALU:
        switch (BPF_OP(in.code)) {
          case BPF_ADD: a += src; break;
          case BPF_SUB: a -= src; break;
          case BPF_MUL: a *= src; break;
          case BPF_AND: a &= src; break;
          case BPF_OR: a |= src; break;
          case BPF_XOR: a ^= src; break;
          case BPF_LSH: a <<= src; break;
          case BPF_RSH: a >>= src; break;
          case BPF_NEG: a = -a; break;
          default: throw std::runtime_error("bad alu");
        }
        break;
      case BPF_JMP: {
        if (BPF_OP(in.code) == BPF_JA) {
          pc += in.k;
          break;
        }
        bool taken = false;
        switch (BPF_OP(in.code)) {
          case BPF_JEQ: taken = a == src; break;
          case BPF_JGT: taken = a > src; break;
          case BPF_JGE: taken = a >= src; break;
          case BPF_JSET: taken = (a & src) != 0; break;
          default: throw std::runtime_error("bad jmp");
        }
        pc += taken ? in.jt : in.jf;
        break;
      }
      case BPF_RET: return BPF_RVAL(in.code) == BPF_A ? a : in.k;
      case BPF_MISC:
        if (BPF_MISCOP(in.code) == BPF_TAX) x = a;
        else a = x;
        break;
      default: throw std::runtime_error("bad class");
    }
  }
  throw std::runtime_error("fell off the end of the program");
}

}  // namespace confine::test
