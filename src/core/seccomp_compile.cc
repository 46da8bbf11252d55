#include "core/seccomp_compile.h"

#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

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
// with the common table (x86-64 included).
constexpr std::pair<std::string_view, int> kNewerSyscalls[] = {
    {"fchmodat2", 452},   // Linux 6.6
    {"setxattrat", 463},  // Linux 6.13
};

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
  for (const auto& rule : policy.rules)
    for (std::size_t i = 0; i < rule.syscalls.size(); ++i)
      if (auto s = add_rule(ctx.get(), policy, rule, i); !s) return s.error();
  auto prog = export_program(ctx.get());
  if (prog) prog->log_denials = log_denials;
  return prog;
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
