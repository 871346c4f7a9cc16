//! Scheduling attributes of a real thread through `sched_setattr(2)` /
//! `sched_getattr(2)` (include/uapi/linux/sched/types.h `struct sched_attr`, the first
//! version of 48 bytes, and include/uapi/linux/sched.h's policy numbers), so that a
//! thread's policy is set and then read back: what the kernel applied is what is
//! reported.

use std::io;

/// `struct sched_attr` (SCHED_ATTR_SIZE_VER0).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedAttr {
    pub size: u32,
    pub policy: u32,
    pub flags: u64,
    pub nice: i32,
    pub priority: u32,
    pub runtime_ns: u64,
    pub deadline_ns: u64,
    pub period_ns: u64,
}

/// Policy numbers of include/uapi/linux/sched.h.
pub const SCHED_OTHER: u32 = 0;
pub const SCHED_FIFO: u32 = 1;
pub const SCHED_RR: u32 = 2;
pub const SCHED_BATCH: u32 = 3;
pub const SCHED_IDLE: u32 = 5;
pub const SCHED_DEADLINE: u32 = 6;

/// Each policy by schedlab's spec name.
pub const POLICIES: &[(&str, u32)] = &[
    ("SCHED_OTHER", SCHED_OTHER),
    ("SCHED_BATCH", SCHED_BATCH),
    ("SCHED_IDLE", SCHED_IDLE),
    ("SCHED_FIFO", SCHED_FIFO),
    ("SCHED_RR", SCHED_RR),
    ("SCHED_DEADLINE", SCHED_DEADLINE),
];

const SIZE_VER0: u32 = std::mem::size_of::<SchedAttr>() as u32;

impl SchedAttr {
    /// The attributes of `policy` with a priority (FIFO/RR), a nice value (the others)
    /// or a reservation (DEADLINE).
    pub fn new(policy: u32) -> Self {
        Self {
            size: SIZE_VER0,
            policy,
            ..Self::default()
        }
    }
}

/// `sched_setattr(tid, attr, 0)`; tid 0 is the calling thread.
pub fn set(tid: libc::pid_t, attr: &SchedAttr) -> io::Result<()> {
    let mut a = *attr;
    a.size = SIZE_VER0;
    // SAFETY: the kernel reads `size` bytes of the struct this frame owns.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setattr, tid, &a as *const SchedAttr, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `sched_getattr(tid, attr, size, 0)`.
pub fn get(tid: libc::pid_t) -> io::Result<SchedAttr> {
    let mut a = SchedAttr::new(SCHED_OTHER);
    // SAFETY: the kernel writes at most `size` bytes into the struct this frame owns.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            tid,
            &mut a as *mut SchedAttr,
            SIZE_VER0,
            0,
        )
    };
    if rc == 0 {
        Ok(a)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether this kernel lets the caller give a thread `policy`: tried on a thread of its
/// own (which then exits, so nothing stays changed), and read back. `Err` holds the
/// kernel's refusal, or what it applied instead.
pub fn try_policy(policy: u32) -> Result<(), String> {
    let mut attr = SchedAttr::new(policy);
    match policy {
        SCHED_FIFO | SCHED_RR => attr.priority = 1,
        SCHED_DEADLINE => {
            attr.runtime_ns = 1_000_000;
            attr.deadline_ns = 10_000_000;
            attr.period_ns = 10_000_000;
        }
        _ => {}
    }
    std::thread::spawn(move || {
        set(0, &attr).map_err(|e| e.to_string())?;
        let back = get(0).map_err(|e| e.to_string())?;
        if back.policy != policy {
            return Err(format!(
                "asked for policy {policy}, the kernel applied {}",
                back.policy
            ));
        }
        Ok(())
    })
    .join()
    .unwrap_or_else(|_| Err("the probing thread panicked".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_struct_has_the_kernels_first_size() {
        assert_eq!(SIZE_VER0, 48);
    }

    #[test]
    fn sched_other_is_always_allowed_and_reads_back() {
        assert_eq!(try_policy(SCHED_OTHER), Ok(()));
    }
}
