//! The spec's block devices as loop devices over files on this machine's disk, through
//! the restore journal: per device a backing file is created and written in full (so
//! that reads reach the disk, not a hole), bound to a free loop device with direct I/O
//! (`crate::loopdev`), the device's I/O scheduler and tunables are written to its queue
//! and read back, and the caches are dropped before the run. The journal undoes it all,
//! newest first: tunables and scheduler put back, the device released, the file removed.
//!
//! A caller may give a loop device it bound itself for a spec device
//! ([`super::RunOptions::devices`]: the fio cross-check runs fio and the host runner on
//! one device); it is used as it is, its scheduler written (journalled) only when it
//! differs from the spec's.
//!
//! A device's size is what the spec can touch on it: the whole `size_bytes` when a task
//! does I/O on the device itself, else the end of its last file. The spec's device model
//! (`null_blk`, `hdd`, `ssd`) is not used: the costs are this machine's disk's, as the
//! run's notes say.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use schedlab_core::result::DeviceResult;
use schedlab_core::stats::{Histogram, Summary};
use schedlab_spec::model::{Event, IoTarget, Spec};

use crate::journal::{Format, Journal};
use crate::loopdev;

/// The largest backing file a run creates.
pub const MAX_BACKING_BYTES: u64 = 8 << 30;

/// Where backing files go unless `SCHEDLAB_LOOP_DIR` names another directory: on a disk
/// (`/tmp` may be a tmpfs, whose pages are memory).
pub const DEFAULT_LOOP_DIR: &str = "/var/tmp";

/// One spec device as a bound loop device.
pub struct LoopDevice {
    /// `/dev/loopN`.
    pub path: PathBuf,
    pub number: u32,
    pub backing: PathBuf,
    pub size: u64,
    pub scheduler: String,
    /// The device's `stat` counters when the run started.
    stat_before: Vec<u64>,
    /// The device held open, so that it stays bound for the run (autoclear).
    _held: File,
}

/// The run's devices, by spec device id (`None`: no task uses it).
pub struct Devices {
    pub devs: Vec<Option<LoopDevice>>,
}

/// What a spec does with each device: whether a task does I/O on it, and on the device
/// itself (not only through files).
fn usage(spec: &Spec) -> Vec<(bool, bool)> {
    let mut used = vec![(false, false); spec.resources.devices.len()];
    let files = &spec.resources.files;
    for e in spec
        .tasks
        .iter()
        .flat_map(|t| &t.phases)
        .flat_map(|p| &p.events)
    {
        let (dev, whole) = match e {
            Event::Io { dev, .. } => (*dev, true),
            Event::IoBatch(io) => match io.target {
                IoTarget::Dev(d) => (d, true),
                IoTarget::File(f) => (files[f as usize].dev, false),
            },
            Event::Fsync { file } => (files[*file as usize].dev, false),
            _ => continue,
        };
        let u = &mut used[dev as usize];
        u.0 = true;
        u.1 |= whole;
    }
    used
}

impl Devices {
    /// No devices.
    pub fn none(spec: &Spec) -> Self {
        Devices {
            devs: (0..spec.resources.devices.len()).map(|_| None).collect(),
        }
    }

    /// Whether some task does block I/O.
    pub fn needed(spec: &Spec) -> bool {
        usage(spec).iter().any(|u| u.0)
    }

    /// Whether making the devices changes the system (so needs the journal): a device
    /// to make, or a given one whose scheduler is not the spec's.
    pub fn changes(spec: &Spec, given: &[(String, PathBuf)]) -> bool {
        (spec.resources.devices.iter().zip(usage(spec))).any(|(d, (used, _))| {
            used && match given.iter().find(|(n, _)| *n == d.name) {
                None => true,
                Some((_, path)) => loopdev::number(path).is_none_or(|n| {
                    let file = loopdev::sysfs(n).join("queue/scheduler");
                    let now = fs::read_to_string(file).map(|t| Format::Choice.current(&t));
                    now.ok().as_deref() != Some(d.scheduler.as_str())
                }),
            }
        })
    }

    /// Make a loop device for every device a task uses (or take the one `given` for
    /// it), journalled; `journal` is needed when [`Devices::changes`] says so. An error
    /// names the device by its JSON path.
    pub fn make(
        spec: &Spec,
        mut journal: Option<&mut Journal>,
        given: &[(String, PathBuf)],
    ) -> Result<Self, String> {
        if let Some((name, _)) = given
            .iter()
            .find(|(n, _)| !spec.resources.devices.iter().any(|d| d.name == *n))
        {
            return Err(format!(
                "the device given for {name}: the spec has no device {name} (schedlab.devices)"
            ));
        }
        let dir = std::env::var_os("SCHEDLAB_LOOP_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_LOOP_DIR));
        let mut devs = Vec::new();
        for (i, (d, (used, whole))) in spec.resources.devices.iter().zip(usage(spec)).enumerate() {
            if !used {
                devs.push(None);
                continue;
            }
            let at = format!("$.schedlab.devices.{}", d.name);
            let size = if whole {
                d.model.size_bytes()
            } else {
                (spec.resources.files.iter())
                    .filter(|f| f.dev as usize == i)
                    .map(|f| f.offset + f.bytes)
                    .max()
                    .unwrap_or(0)
            };
            if let Some((_, path)) = given.iter().find(|(n, _)| *n == d.name) {
                let l = given_device(path, size, &d.name)?;
                if Devices::changes(spec, given) {
                    let j = journal.as_deref_mut().expect("a journal for the changes");
                    set_scheduler(
                        j,
                        &loopdev::sysfs(l.number).join("queue"),
                        &d.scheduler,
                        &at,
                    )?;
                }
                devs.push(Some(LoopDevice {
                    scheduler: d.scheduler.clone(),
                    ..l
                }));
                continue;
            }
            offered_anywhere(&d.scheduler, &at)?;
            let journal = journal.as_deref_mut().expect("a journal for the changes");
            if size > MAX_BACKING_BYTES {
                return Err(format!(
                    "{at}: the host runner backs this device with a file of {size} bytes (what \
                     the spec can touch on it); at most {MAX_BACKING_BYTES} are made"
                ));
            }
            let backing = dir.join(format!("schedlab-{}-dev{i}.img", std::process::id()));
            let mut file = journal
                .create_file(&backing)
                .map_err(|e| format!("{at}: backing file {}: {e}", backing.display()))?;
            fill(&mut file, size)
                .map_err(|e| format!("{at}: writing {}: {e}", backing.display()))?;
            drop(file);
            let (n, held) = journal.bind_loop(&backing).map_err(|e| {
                format!("{at}: binding a loop device to {}: {e}", backing.display())
            })?;
            if !loopdev::direct_io(n) {
                return Err(format!(
                    "{at}: the kernel did not turn direct I/O on for loop{n} (its backing file \
                     is on a file system without O_DIRECT?)"
                ));
            }
            let queue = loopdev::sysfs(n).join("queue");
            set_scheduler(journal, &queue, &d.scheduler, &at)?;
            for (k, v) in &d.params {
                let file = match k.strip_prefix("queue/") {
                    Some(q) => queue.join(q),
                    None => queue.join("iosched").join(k),
                };
                let applied = journal
                    .write(&file, v, Format::Plain)
                    .map_err(|e| format!("{at}.params.{k}: {}: {e}", file.display()))?;
                if !applied.as_requested() {
                    return Err(format!(
                        "{at}.params.{k}: the kernel applied {} instead of {v}",
                        applied.actual
                    ));
                }
            }
            devs.push(Some(LoopDevice {
                path: loopdev::device_path(n),
                number: n,
                backing,
                size,
                scheduler: d.scheduler.clone(),
                stat_before: Vec::new(),
                _held: held,
            }));
        }
        drop_caches().map_err(|e| format!("/proc/sys/vm/drop_caches: {e}"))?;
        for l in devs.iter_mut().flatten() {
            l.stat_before = stat(l.number);
        }
        Ok(Devices { devs })
    }

    /// Each used device's totals over the run, from the deltas of its `stat` file
    /// (Documentation/block/stat.rst): requests and merges of both directions, sectors
    /// as bytes, `io_ticks` as busy time. The kernel keeps no per-request latency there:
    /// `latency_ns` is empty.
    pub fn results(&self, spec: &Spec) -> Vec<DeviceResult> {
        (spec.resources.devices.iter().zip(&self.devs))
            .filter_map(|(d, l)| {
                let l = l.as_ref()?;
                let now = stat(l.number);
                let delta = |i: usize| {
                    let (a, b) = (now.get(i).copied(), l.stat_before.get(i).copied());
                    a.unwrap_or(0).saturating_sub(b.unwrap_or(0))
                };
                Some(DeviceResult {
                    name: d.name.clone(),
                    scheduler: l.scheduler.clone(),
                    requests: delta(0) + delta(4),
                    merges: delta(1) + delta(5),
                    bytes_read: delta(2) * 512,
                    bytes_written: delta(6) * 512,
                    busy_ns: delta(9) * 1_000_000,
                    latency_ns: Summary::of_histogram(&Histogram::new()),
                })
            })
            .collect()
    }

    /// What the run's notes say of each device.
    pub fn notes(&self, spec: &Spec) -> Vec<String> {
        (spec.resources.devices.iter().zip(&self.devs))
            .filter_map(|(d, l)| {
                let l = l.as_ref()?;
                Some(format!(
                    "host run: device {} is {} (direct I/O, over the file {}; the spec touches \
                     {} bytes of it), scheduler {} as read back; the spec's device model is \
                     not used: the costs are this machine's disk's; caches were dropped before \
                     the run; its devices[] entry is the deltas of its stat file (no latency)",
                    d.name,
                    l.path.display(),
                    l.backing.display(),
                    l.size,
                    l.scheduler
                ))
            })
            .collect()
    }
}

/// A loop device the caller bound ([`super::RunOptions::devices`]): bound to a file, and at least
/// as large as what the spec touches on it.
fn given_device(path: &Path, size: u64, name: &str) -> Result<LoopDevice, String> {
    let at = format!("device {name} given as {}", path.display());
    let n = loopdev::number(path).ok_or_else(|| {
        format!(
            "{at}: not a loop device (/dev/loopN); the host runner writes \
                               only to loop devices"
        )
    })?;
    let backing =
        loopdev::backing_file(n).ok_or_else(|| format!("{at}: loop{n} is not bound to a file"))?;
    let sectors: u64 = fs::read_to_string(loopdev::sysfs(n).join("size"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    if sectors * 512 < size {
        return Err(format!(
            "{at}: loop{n} holds {} bytes; the spec touches {size} on device {name}",
            sectors * 512
        ));
    }
    let held = OpenOptions::new()
        .read(true)
        .open(path)
        .map_err(|e| format!("{at}: {e}"))?;
    Ok(LoopDevice {
        path: path.to_path_buf(),
        number: n,
        backing,
        size,
        scheduler: String::new(),
        stat_before: Vec::new(),
        _held: held,
    })
}

/// The counters of `/sys/block/loopN/stat`.
fn stat(n: u32) -> Vec<u64> {
    fs::read_to_string(loopdev::sysfs(n).join("stat"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect()
}

/// Write `size` bytes of a non-zero pattern, to the disk.
pub(crate) fn fill(file: &mut File, size: u64) -> io::Result<()> {
    let chunk = vec![0x5au8; 1 << 20];
    let mut left = size;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        file.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    file.sync_all()
}

/// Refuse, before a backing file is written, a scheduler that a loop device already here
/// does not offer (the kernel's elevators are the same for every loop device's queue);
/// [`set_scheduler`] checks the bound device's own list again.
fn offered_anywhere(name: &str, at: &str) -> Result<(), String> {
    let Some(list) =
        (0..8).find_map(|n| fs::read_to_string(loopdev::sysfs(n).join("queue/scheduler")).ok())
    else {
        return Ok(());
    };
    check_offered(&list, name, at)
}

fn check_offered(list: &str, name: &str, at: &str) -> Result<(), String> {
    let choices: Vec<&str> = list
        .split_whitespace()
        .map(|w| w.trim_start_matches('[').trim_end_matches(']'))
        .collect();
    if choices.contains(&name) {
        return Ok(());
    }
    Err(format!(
        "{at}.scheduler: {name} is not an I/O scheduler of this kernel (a loop device here \
         offers {})",
        choices.join(", ")
    ))
}

/// Choose the queue's I/O scheduler and check the kernel took it.
pub(crate) fn set_scheduler(
    journal: &mut Journal,
    queue: &Path,
    name: &str,
    at: &str,
) -> Result<(), String> {
    let file = queue.join("scheduler");
    let offered = fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    check_offered(&offered, name, at)?;
    let applied = journal
        .write(&file, name, Format::Choice)
        .map_err(|e| format!("{at}.scheduler: {}: {e}", file.display()))?;
    if !applied.as_requested() {
        return Err(format!(
            "{at}.scheduler: the kernel applied {} instead of {name}",
            applied.actual
        ));
    }
    Ok(())
}

/// `sync`, then drop the page cache, dentries and inodes (`vm.drop_caches` = 3: an
/// action, not a setting, so nothing to put back).
pub fn drop_caches() -> io::Result<()> {
    // SAFETY: sync has no arguments and cannot fail.
    unsafe { libc::sync() };
    fs::write("/proc/sys/vm/drop_caches", "3")
}
