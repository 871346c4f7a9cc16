//! Loop block devices (drivers/block/loop.c, include/uapi/linux/loop.h): a free device
//! from `/dev/loop-control` (`LOOP_CTL_GET_FREE`), bound to a backing file with
//! `LOOP_CONFIGURE` (Linux 5.8 and later: file, flags and block size in one call) and
//! direct I/O (`LO_FLAGS_DIRECT_IO`: the loop driver then reads and writes the backing
//! file with `O_DIRECT`, so the guest's page cache holds no second copy), and released
//! with `LOOP_CLR_FD`. What the kernel applied is read back from sysfs
//! (`/sys/block/loopN/loop/{backing_file,dio}`).
//!
//! The device is configured with `LO_FLAGS_AUTOCLEAR`: the kernel releases it when its
//! last open file is closed, so a runner killed while holding it leaves no bound device
//! even before the restore journal's entry is undone.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
const LO_FLAGS_AUTOCLEAR: u32 = 4;
const LO_FLAGS_DIRECT_IO: u32 = 16;
const LO_NAME_SIZE: usize = 64;
const LO_KEY_SIZE: usize = 32;

/// `struct loop_info64`.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; LO_NAME_SIZE],
    lo_crypt_name: [u8; LO_NAME_SIZE],
    lo_encrypt_key: [u8; LO_KEY_SIZE],
    lo_init: [u64; 2],
}

/// `struct loop_config`.
#[repr(C)]
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

/// A loop device number the kernel reports free now (another process may take it before
/// it is configured; [`configure`] then fails with `EBUSY`).
pub fn free_number() -> io::Result<u32> {
    let ctl = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/loop-control")?;
    // SAFETY: an argument-less ioctl on a file this function owns.
    let n = unsafe { libc::ioctl(ctl.as_raw_fd(), LOOP_CTL_GET_FREE) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as u32)
}

/// `/dev/loopN`.
pub fn device_path(n: u32) -> PathBuf {
    PathBuf::from(format!("/dev/loop{n}"))
}

/// `/sys/block/loopN`.
pub fn sysfs(n: u32) -> PathBuf {
    PathBuf::from(format!("/sys/block/loop{n}"))
}

/// The number of a `/dev/loopN` path.
pub fn number(device: &Path) -> Option<u32> {
    device
        .file_name()?
        .to_str()?
        .strip_prefix("loop")?
        .parse()
        .ok()
}

/// The file loop device `n` is bound to, if any (a file removed since reads back with
/// ` (deleted)`, which is stripped).
pub fn backing_file(n: u32) -> Option<PathBuf> {
    let text = fs::read_to_string(sysfs(n).join("loop/backing_file")).ok()?;
    let text = text.trim_end_matches('\n');
    let text = text.strip_suffix(" (deleted)").unwrap_or(text);
    (!text.is_empty()).then(|| PathBuf::from(text))
}

/// Whether the loop driver does direct I/O on device `n`'s backing file.
pub fn direct_io(n: u32) -> bool {
    fs::read_to_string(sysfs(n).join("loop/dio")).is_ok_and(|s| s.trim() == "1")
}

/// Bind loop device `n` to `backing` (opened read-write), with direct I/O and
/// autoclear. The returned file is the device, held open: the device stays bound while
/// it (or another open of the device) is open.
pub fn configure(n: u32, backing: &Path) -> io::Result<File> {
    let file = OpenOptions::new().read(true).write(true).open(backing)?;
    let dev = OpenOptions::new()
        .read(true)
        .write(true)
        .open(device_path(n))?;
    // SAFETY: loop_config is plain data; all-zero is its "no settings" value.
    let mut cfg: LoopConfig = unsafe { std::mem::zeroed() };
    cfg.fd = file.as_raw_fd() as u32;
    cfg.info.lo_flags = LO_FLAGS_DIRECT_IO | LO_FLAGS_AUTOCLEAR;
    let name = backing.as_os_str().as_encoded_bytes();
    let k = name.len().min(LO_NAME_SIZE - 1);
    cfg.info.lo_file_name[..k].copy_from_slice(&name[..k]);
    // SAFETY: LOOP_CONFIGURE reads one loop_config, which lives on this frame.
    if unsafe { libc::ioctl(dev.as_raw_fd(), LOOP_CONFIGURE, &cfg) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(dev)
}

/// Release loop device `n` if it is bound to `backing` (and leave it alone if it is
/// free or bound to another file: someone else's). Idempotent.
pub fn release_if_bound(n: u32, backing: &Path) -> io::Result<()> {
    if backing_file(n).as_deref() != Some(backing) {
        return Ok(());
    }
    let dev = OpenOptions::new().read(true).open(device_path(n))?;
    // SAFETY: an argument-less ioctl on a file this function owns.
    if unsafe { libc::ioctl(dev.as_raw_fd(), LOOP_CLR_FD, 0) } != 0 {
        let e = io::Error::last_os_error();
        // ENXIO: released meanwhile (autoclear on the last close).
        if e.raw_os_error() != Some(libc::ENXIO) {
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_structures_have_their_uapi_sizes() {
        assert_eq!(std::mem::size_of::<LoopInfo64>(), 232);
        assert_eq!(std::mem::size_of::<LoopConfig>(), 8 + 232 + 64);
    }

    #[test]
    fn a_device_path_gives_its_number() {
        assert_eq!(number(&device_path(7)), Some(7));
        assert_eq!(number(Path::new("/dev/sda")), None);
    }
}
