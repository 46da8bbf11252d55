#include "core/seccomp_compile.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <memory>
#include <string_view>
#include <utility>

#include "sys/unique_fd.h"

namespace confine {
namespace {

using Ctx = std::unique_ptr<void, decltype(&seccomp_release)>;

std::uint32_t to_libseccomp(const SeccompAction& a) {
  switch (a.kind) {
    case SeccompAction::Kind::allow: return SCMP_ACT_ALLOW;
    case SeccompAction::Kind::error: return SCMP_ACT_ERRNO(static_cast<std::uint16_t>(a.err));
    case SeccompAction::Kind::kill: return SCMP_ACT_KILL_PROCESS;
  }
  return SCMP_ACT_KILL_PROCESS;
}

scmp_arg_cmp to_libseccomp(const ArgCheck& c) {
  switch (c.op) {
    case ArgCheck::Op::masked_eq: return SCMP_CMP(c.arg, SCMP_CMP_MASKED_EQ, c.mask, c.value);
    case ArgCheck::Op::eq: return SCMP_CMP(c.arg, SCMP_CMP_EQ, c.value);
    case ArgCheck::Op::ne: return SCMP_CMP(c.arg, SCMP_CMP_NE, c.value);
    case ArgCheck::Op::lt: return SCMP_CMP(c.arg, SCMP_CMP_LT, c.value);
    case ArgCheck::Op::le: return SCMP_CMP(c.arg, SCMP_CMP_LE, c.value);
    case ArgCheck::Op::gt: return SCMP_CMP(c.arg, SCMP_CMP_GT, c.value);
    case ArgCheck::Op::ge: return SCMP_CMP(c.arg, SCMP_CMP_GE, c.value);
  }
  return SCMP_CMP(c.arg, SCMP_CMP_EQ, c.value);
}

sys::Status add_rule(scmp_filter_ctx ctx, const SeccompPolicy& p, const SeccompRule& r, std::size_t i) {
  int nr = resolve_syscall(r.syscalls[i]);
  if (nr == __NR_SCMP_ERROR) {
    if (r.optional[i]) return sys::ok_status();
    return sys::plain_error(p.source + ": rule `" + r.group + "`: unknown syscall `" + r.syscalls[i] + "`");
  }
  auto action = to_libseccomp(r.action);
  auto fail = [&](int rc) {
    return sys::Error{p.source + ": rule `" + r.group + "`: cannot add `" + r.syscalls[i] + "`", -rc};
  };
  if (r.alternatives.empty()) {
    int rc = seccomp_rule_add(ctx, action, nr, 0);
    return (rc == 0 || (rc == -EDOM && r.optional[i])) ? sys::ok_status() : sys::Status(fail(rc));
  }
  for (const auto& checks : r.alternatives) {
    std::vector<scmp_arg_cmp> cmps;
    for (const auto& c : checks) cmps.push_back(to_libseccomp(c));
    int rc = seccomp_rule_add_array(ctx, action, nr, static_cast<unsigned>(cmps.size()), cmps.data());
    if (rc != 0 && !(rc == -EDOM && r.optional[i])) return fail(rc);
  }
  return sys::ok_status();
}

sys::Result<SeccompProgram> export_program(scmp_filter_ctx ctx) {
  sys::UniqueFd fd(::memfd_create("confine-seccomp", MFD_CLOEXEC));
  if (!fd.valid()) return sys::errno_error("memfd_create");
  if (int rc = seccomp_export_bpf(ctx, fd.get()); rc != 0) return sys::Error{"seccomp_export_bpf", -rc};
  auto size = ::lseek(fd.get(), 0, SEEK_END);
  SeccompProgram prog;
  prog.code.resize(static_cast<std::size_t>(size) / sizeof(struct sock_filter));
  if (::pread(fd.get(), prog.code.data(), static_cast<std::size_t>(size), 0) != size)
    return sys::errno_error("read the exported seccomp program");
  return prog;
}

// Syscalls newer than the libseccomp confine may be built with, by number: a rule must not be lost because the
// library's table is older than the kernel. Since Linux 5.1 a new syscall has one number on every architecture
// with the common table (x86-64 and arm64 included; alpha and mips offset theirs). Numbers from the kernel's
// arch/x86/entry/syscalls/syscall_64.tbl.
constexpr std::pair<std::string_view, int> kNewerSyscalls[] = {
    {"fchmodat2", 452},          // Linux 6.6
    {"statmount", 457},          // Linux 6.8
    {"listmount", 458},          // Linux 6.8
    {"lsm_get_self_attr", 459},  // Linux 6.8
    {"lsm_set_self_attr", 460},  // Linux 6.8
    {"lsm_list_modules", 461},   // Linux 6.8
    {"mseal", 462},              // Linux 6.10
    {"setxattrat", 463},         // Linux 6.13
    {"getxattrat", 464},         // Linux 6.13
    {"listxattrat", 465},        // Linux 6.13
    {"removexattrat", 466},      // Linux 6.13
    {"open_tree_attr", 467},     // Linux 6.15
    {"file_getattr", 468},       // Linux 6.17
    {"file_setattr", 469},       // Linux 6.17
    {"listns", 470},             // Linux 6.19
};

// Runs before the compiled program: a native syscall numbered above `newest` answers ENOSYS. Numbers from 2^30 on
// are left to the program: x32's (which it kills) and the invalid ones such as -1, which the kernel answers itself.
std::vector<struct sock_filter> newer_syscalls_enosys(std::uint32_t newest) {
  constexpr std::uint32_t kX32SyscallBit = 0x40000000;
  // Each jump's false or true offset skips to the compiled program, 6 instructions in.
  return {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, seccomp_native_arch(), 0, 4),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, newest, 0, 2),
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, kX32SyscallBit, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
  };
}

}  // namespace

int resolve_syscall(const std::string& name) {
  int nr = seccomp_syscall_resolve_name(name.c_str());
  if (nr != __NR_SCMP_ERROR) return nr;
  for (const auto& [known, number] : kNewerSyscalls)
    if (known == name) return number;
  return __NR_SCMP_ERROR;
}

sys::Result<SeccompProgram> compile_seccomp(const SeccompPolicy& policy, bool log_denials) {
  Ctx ctx(seccomp_init(to_libseccomp(policy.default_action)), &seccomp_release);
  if (!ctx) return sys::plain_error("seccomp_init failed");
  seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  // A binary search over syscall numbers instead of a linear chain: the cost of the filter stays flat.
  seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2);
  for (const auto& rule : policy.rules) {
    // libseccomp refuses a rule with the default's action; it would change nothing anyway.
    if (restates_default(policy, rule)) continue;
    for (std::size_t i = 0; i < rule.syscalls.size(); ++i)
      if (auto s = add_rule(ctx.get(), policy, rule, i); !s) return s.error();
  }
  auto prog = export_program(ctx.get());
  if (!prog) return prog;
  prog->log_denials = log_denials;
  if (policy.newer_syscalls_enosys) {
    auto guard = newer_syscalls_enosys(newest_known_syscall(policy));
    prog->code.insert(prog->code.begin(), guard.begin(), guard.end());
  }
  return prog;
}

std::uint32_t newest_known_syscall(const SeccompPolicy& policy) {
  int newest = 0;
  for (const auto* p : {&builtin_seccomp_policy(), &policy})
    for (const auto& rule : p->rules)
      for (const auto& name : rule.syscalls) newest = std::max(newest, resolve_syscall(name));
  return static_cast<std::uint32_t>(newest);
}

std::uint32_t seccomp_native_arch() { return seccomp_arch_native(); }

std::vector<std::string> unknown_syscalls(const SeccompPolicy& policy) {
  std::vector<std::string> out;
  for (const auto& r : policy.rules)
    for (std::size_t i = 0; i < r.syscalls.size(); ++i)
      if (!r.optional[i] && resolve_syscall(r.syscalls[i]) == __NR_SCMP_ERROR)
        out.push_back(r.syscalls[i]);
  return out;
}

SeccompPolicy rules_of(const SeccompProgram::RuleSource& source) {
  return select_seccomp_rules(source.custom ? *source.custom : builtin_seccomp_policy(), source.allow_nested, source.namespaces);
}

}  // namespace confine
