//! The seccomp filter sandboxed commands run under: everything a build needs is allowed; the
//! kernel interfaces that only attacks need (tracing other processes, io_uring, new
//! namespaces, kernel modules, raw and exotic sockets) fail with ENOSYS instead. ENOSYS rather
//! than EPERM because glibc falls back from clone3 to clone only on ENOSYS, and programs
//! treat "not implemented" as a feature to do without rather than an error to report.

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};
use std::collections::BTreeMap;

/// Why a filter could not be made (an architecture seccompiler does not know, mostly).
#[derive(Debug, thiserror::Error)]
#[error("seccomp filter: {0}")]
pub struct SeccompError(String);

fn err(e: impl std::fmt::Display) -> SeccompError {
    SeccompError(e.to_string())
}

/// Syscalls denied outright, with their reason.
fn denied() -> Vec<(i64, &'static str)> {
    vec![
        (libc::SYS_ptrace, "reading or steering other processes"),
        (libc::SYS_process_vm_readv, "reading other processes' memory"),
        (libc::SYS_process_vm_writev, "writing other processes' memory"),
        (libc::SYS_io_uring_setup, "io_uring bypasses syscall filtering"),
        (libc::SYS_io_uring_enter, "io_uring"),
        (libc::SYS_io_uring_register, "io_uring"),
        (libc::SYS_bpf, "loading kernel programs"),
        (libc::SYS_perf_event_open, "kernel profiling"),
        (libc::SYS_userfaultfd, "a classic exploit primitive"),
        (libc::SYS_keyctl, "the kernel keyring"),
        (libc::SYS_add_key, "the kernel keyring"),
        (libc::SYS_request_key, "the kernel keyring"),
        (libc::SYS_unshare, "new namespaces"),
        (libc::SYS_setns, "joining namespaces"),
        (libc::SYS_mount, "mounting"),
        (libc::SYS_umount2, "unmounting"),
        (libc::SYS_pivot_root, "changing the root"),
        (libc::SYS_init_module, "kernel modules"),
        (libc::SYS_finit_module, "kernel modules"),
        (libc::SYS_delete_module, "kernel modules"),
        (libc::SYS_kexec_load, "replacing the kernel"),
        (libc::SYS_kexec_file_load, "replacing the kernel"),
        (libc::SYS_open_by_handle_at, "opening files by handle, past mount boundaries"),
        (libc::SYS_name_to_handle_at, "file handles"),
        (libc::SYS_reboot, "rebooting"),
        (libc::SYS_swapon, "swap"),
        (libc::SYS_swapoff, "swap"),
        // glibc falls back to clone(2), whose namespace flags are checked below.
        (libc::SYS_clone3, "clone3 hides its flags from filters"),
    ]
}

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, SeccompError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(err)
}

fn rule(conds: Vec<SeccompCondition>) -> Result<SeccompRule, SeccompError> {
    SeccompRule::new(conds).map_err(err)
}

/// The filter as a BPF program for this machine's architecture.
pub fn program() -> Result<BpfProgram, SeccompError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(err)?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = denied().into_iter().map(|(nr, _)| (nr, Vec::new())).collect();
    // Sockets: Unix, IPv4/IPv6 (loopback only when the network is unshared) and route netlink
    // (Node reads interface addresses with it). Packet, raw-netlink and every other family fail.
    let (unix, inet, inet6, netlink) =
        (libc::AF_UNIX as u64, libc::AF_INET as u64, libc::AF_INET6 as u64, libc::AF_NETLINK as u64);
    let mut socket_rules = vec![
        rule(vec![cond(0, SeccompCmpOp::Lt, unix)?])?,
        rule(vec![cond(0, SeccompCmpOp::Gt, unix)?, cond(0, SeccompCmpOp::Lt, inet)?])?,
        rule(vec![cond(0, SeccompCmpOp::Gt, inet)?, cond(0, SeccompCmpOp::Lt, inet6)?])?,
        rule(vec![cond(0, SeccompCmpOp::Gt, inet6)?, cond(0, SeccompCmpOp::Lt, netlink)?])?,
        rule(vec![cond(0, SeccompCmpOp::Gt, netlink)?])?,
        rule(vec![cond(0, SeccompCmpOp::Eq, netlink)?, cond(2, SeccompCmpOp::Ne, libc::NETLINK_ROUTE as u64)?])?,
    ];
    // Raw sockets even of allowed families.
    socket_rules.push(rule(vec![cond(1, SeccompCmpOp::MaskedEq(0xf), libc::SOCK_RAW as u64)?])?);
    rules.insert(libc::SYS_socket, socket_rules);
    // clone(2) with any namespace flag: a fresh user namespace would hand out capabilities.
    let clone_rules = [
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWNS,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWCGROUP,
    ]
    .into_iter()
    .map(|f| rule(vec![cond(0, SeccompCmpOp::MaskedEq(f as u64), f as u64)?]))
    .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, clone_rules);
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::ENOSYS as u32), arch)
        .map_err(err)?;
    BpfProgram::try_from(filter).map_err(err)
}

/// The program in the byte layout the kernel (and `bwrap --seccomp FD`) reads.
pub fn program_bytes() -> Result<Vec<u8>, SeccompError> {
    let prog = program()?;
    let mut out = Vec::with_capacity(prog.len() * 8);
    for f in &prog {
        out.extend_from_slice(&f.code.to_ne_bytes());
        out.push(f.jt);
        out.push(f.jf);
        out.extend_from_slice(&f.k.to_ne_bytes());
    }
    Ok(out)
}

/// What the filter denies, for `wright doctor`.
pub fn summary() -> &'static str {
    "ptrace and process memory access, io_uring, bpf, perf, userfaultfd, keyrings, new namespaces, \
     mounts, kernel modules, kexec, file handles; sockets other than Unix, IPv4/IPv6 and route netlink; raw sockets"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_compiles_for_this_machine() {
        let bytes = program_bytes().unwrap();
        assert_eq!(bytes.len() % 8, 0);
        assert!(bytes.len() / 8 > denied().len(), "every denied syscall needs at least one instruction");
        assert!(bytes.len() / 8 < 4096, "BPF programs are limited to 4096 instructions");
    }
}
