#include "core/seccomp_verdict.h"

#include <cerrno>

#include <linux/seccomp.h>

#include <algorithm>
#include <cstring>

#include "core/seccomp_compile.h"

namespace confine {
namespace {

// A 32-bit word of seccomp_data at `offset`, as BPF_LD|BPF_ABS reads it; nullopt where the kernel refuses the load.
std::optional<std::uint32_t> load_word(const SeccompCall& c, std::uint32_t offset) {
  struct seccomp_data d {};
  d.nr = c.nr;
  d.arch = c.arch;
  d.instruction_pointer = c.ip;
  std::memcpy(d.args, c.args, sizeof d.args);
  if (offset % 4 != 0 || offset > sizeof d - 4) return std::nullopt;
  std::uint32_t w;
  std::memcpy(&w, reinterpret_cast<const unsigned char*>(&d) + offset, 4);
  return w;
}

std::optional<std::uint32_t> alu(std::uint16_t op, std::uint32_t a, std::uint32_t src) {
  switch (op) {
    case BPF_ADD: return a + src;
    case BPF_SUB: return a - src;
    case BPF_MUL: return a * src;
    case BPF_DIV: return src == 0 ? std::nullopt : std::optional<std::uint32_t>(a / src);
    case BPF_MOD: return src == 0 ? std::nullopt : std::optional<std::uint32_t>(a % src);
    case BPF_AND: return a & src;
    case BPF_OR: return a | src;
    case BPF_XOR: return a ^ src;
    case BPF_LSH: return src >= 32 ? 0 : a << src;
    case BPF_RSH: return src >= 32 ? 0 : a >> src;
    case BPF_NEG: return -a;
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<std::uint32_t> seccomp_verdict(const std::vector<struct sock_filter>& prog, const SeccompCall& call) {
  std::uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {};
  // Jumps only go forward, so the loop ends: at a return, or past the end (a program the kernel refuses).
  for (std::size_t pc = 0; pc < prog.size(); ++pc) {
    const auto& in = prog[pc];
    std::uint32_t src = BPF_SRC(in.code) == BPF_X ? x : in.k;
    switch (BPF_CLASS(in.code)) {
      case BPF_LD:
      case BPF_LDX: {
        std::optional<std::uint32_t> v;
        if (BPF_MODE(in.code) == BPF_ABS && BPF_CLASS(in.code) == BPF_LD) v = load_word(call, in.k);
        else if (BPF_MODE(in.code) == BPF_IMM) v = in.k;
        else if (BPF_MODE(in.code) == BPF_MEM && in.k < BPF_MEMWORDS) v = mem[in.k];
        else if (BPF_MODE(in.code) == BPF_LEN) v = static_cast<std::uint32_t>(sizeof(struct seccomp_data));
        if (!v) return std::nullopt;
        (BPF_CLASS(in.code) == BPF_LD ? a : x) = *v;
        break;
      }
      case BPF_ST:
      case BPF_STX:
        if (in.k >= BPF_MEMWORDS) return std::nullopt;
        mem[in.k] = BPF_CLASS(in.code) == BPF_ST ? a : x;
        break;
      case BPF_ALU: {
        auto v = alu(BPF_OP(in.code), a, src);
        if (!v) return std::nullopt;
        a = *v;
        break;
      }
      case BPF_JMP: {
        bool taken = false;
        switch (BPF_OP(in.code)) {
          case BPF_JA: pc += in.k; continue;
          case BPF_JEQ: taken = a == src; break;
          case BPF_JGT: taken = a > src; break;
          case BPF_JGE: taken = a >= src; break;
          case BPF_JSET: taken = (a & src) != 0; break;
          default: return std::nullopt;
        }
        pc += taken ? in.jt : in.jf;
        break;
      }
      case BPF_RET: return BPF_RVAL(in.code) == BPF_A ? a : in.k;
      case BPF_MISC:
        if (BPF_MISCOP(in.code) == BPF_TAX) x = a;
        else a = x;
        break;
      default: return std::nullopt;
    }
  }
  return std::nullopt;
}

std::vector<struct sock_filter> refusals_notified(std::vector<struct sock_filter> program) {
  for (auto& in : program)
    if (BPF_CLASS(in.code) == BPF_RET && BPF_RVAL(in.code) == BPF_K &&
        (in.k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO && (in.k & SECCOMP_RET_DATA) != ENOSYS)
      in.k = SECCOMP_RET_USER_NOTIF;
  return program;
}

namespace {

bool check_holds(const ArgCheck& c, const std::uint64_t (&args)[6]) {
  std::uint64_t v = args[c.arg];
  switch (c.op) {
    case ArgCheck::Op::masked_eq: return (v & c.mask) == c.value;
    case ArgCheck::Op::eq: return v == c.value;
    case ArgCheck::Op::ne: return v != c.value;
    case ArgCheck::Op::lt: return v < c.value;
    case ArgCheck::Op::le: return v <= c.value;
    case ArgCheck::Op::gt: return v > c.value;
    case ArgCheck::Op::ge: return v >= c.value;
  }
  return false;
}

}  // namespace

bool rule_matches(const SeccompRule& r, const std::uint64_t (&args)[6]) {
  if (r.alternatives.empty()) return true;
  return std::any_of(r.alternatives.begin(), r.alternatives.end(), [&](const std::vector<ArgCheck>& alt) {
    return std::all_of(alt.begin(), alt.end(), [&](const ArgCheck& c) { return check_holds(c, args); });
  });
}

const SeccompRule* refusing_rule(const SeccompPolicy& policy, int nr, const std::uint64_t (&args)[6]) {
  for (const auto& r : policy.rules) {
    if (r.action.kind == SeccompAction::Kind::allow) continue;
    bool names = std::any_of(r.syscalls.begin(), r.syscalls.end(), [&](const std::string& s) { return resolve_syscall(s) == nr; });
    if (names && rule_matches(r, args)) return &r;
  }
  return nullptr;
}

}  // namespace confine
