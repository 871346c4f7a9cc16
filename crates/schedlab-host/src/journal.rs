//! The restore journal: every system setting the host runner changes is written here
//! before it is changed, so that it can be put back — at the end of a run, on an error,
//! on Ctrl-C, and after a SIGKILL at the next start or with `schedlab host restore`.
//!
//! Changes: a setting file written (sysctls, cgroup files, a block queue's scheduler and
//! tunables), a directory made (a cgroup), a file created (a loop device's backing file)
//! and a loop device bound to a file.
//!
//! The journal is a file of JSON lines, one per change, appended and flushed to disk
//! (`fsync`) before the change is made. Restoring undoes the changes newest first (the
//! order that respects the kernel's rules, e.g. a cgroup's children before the cgroup, a
//! child group's RT runtime lowered before its parent's) and then empties the file. Every
//! undo is idempotent, so a restore that is itself interrupted can be run again; an entry
//! whose change never happened (the process died between the journal line and the
//! change) undoes to what is already there.
//!
//! A runner holds an exclusive `flock` on the journal while it runs, so a second runner
//! cannot start beside it, and a journal left behind by a dead runner (no lock held, lines
//! in the file) is restored before anything else is done. The default place is
//! `/run/schedlab/journal.jsonl`: `/run` is emptied at boot, as are the settings the
//! journal records (sysctls, cgroups, block-queue settings do not survive a reboot).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::loopdev;

/// Where the journal lives unless `SCHEDLAB_JOURNAL` names another file.
pub const DEFAULT_JOURNAL: &str = "/run/schedlab/journal.jsonl";

/// The journal's path: `SCHEDLAB_JOURNAL` if set, else [`DEFAULT_JOURNAL`].
pub fn default_path() -> PathBuf {
    std::env::var_os("SCHEDLAB_JOURNAL")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_JOURNAL))
}

/// How a setting file reads back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The file holds its value (sysctls, most cgroup files).
    Plain,
    /// The file lists the choices with the current one in brackets, as a block queue's
    /// `scheduler` does (`none [mq-deadline] kyber bfq`).
    Choice,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Plain => "plain",
            Format::Choice => "choice",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "plain" => Some(Format::Plain),
            "choice" => Some(Format::Choice),
            _ => None,
        }
    }

    /// The current value in the text the file reads back.
    pub fn current(self, text: &str) -> String {
        match self {
            Format::Plain => text.trim_end_matches('\n').to_string(),
            Format::Choice => text
                .split_whitespace()
                .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
                .unwrap_or_else(|| text.trim())
                .to_string(),
        }
    }
}

/// One change, as the journal records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A setting file was written; undo writes `old` back.
    Write {
        path: PathBuf,
        old: String,
        format: Format,
    },
    /// A directory (a cgroup) was created; undo moves any task left in it to its parent
    /// and removes it.
    Mkdir { path: PathBuf },
    /// A file was created (a loop device's backing file); undo removes it.
    File { path: PathBuf },
    /// Loop device `device` (`/dev/loopN`) was bound to `backing`; undo releases it if it
    /// is still bound to that file (a device another process bound is left alone).
    Loop { device: PathBuf, backing: PathBuf },
    /// A filesystem (tracefs) was mounted at `path`; undo unmounts it.
    Mount { path: PathBuf },
}

impl Change {
    fn to_json(&self) -> Value {
        match self {
            Change::Write { path, old, format } => json!({
                "op": "write", "path": path, "old": old, "format": format.name()
            }),
            Change::Mkdir { path } => json!({"op": "mkdir", "path": path}),
            Change::File { path } => json!({"op": "file", "path": path}),
            Change::Loop { device, backing } => {
                json!({"op": "loop", "path": device, "backing": backing})
            }
            Change::Mount { path } => json!({"op": "mount", "path": path}),
        }
    }

    fn from_json(v: &Value) -> Option<Self> {
        let path = PathBuf::from(v.get("path")?.as_str()?);
        match v.get("op")?.as_str()? {
            "write" => Some(Change::Write {
                path,
                old: v.get("old")?.as_str()?.to_string(),
                format: Format::parse(v.get("format")?.as_str()?)?,
            }),
            "mkdir" => Some(Change::Mkdir { path }),
            "file" => Some(Change::File { path }),
            "loop" => Some(Change::Loop {
                device: path,
                backing: PathBuf::from(v.get("backing")?.as_str()?),
            }),
            "mount" => Some(Change::Mount { path }),
            _ => None,
        }
    }

    /// Put the system back as it was before this change. Idempotent.
    fn undo(&self) -> io::Result<()> {
        match self {
            Change::Write { path, old, format } => {
                let now = format.current(&fs::read_to_string(path)?);
                if now != *old {
                    fs::write(path, old)?;
                }
                Ok(())
            }
            Change::Mkdir { path } => {
                if !path.exists() {
                    return Ok(());
                }
                evacuate(path)?;
                fs::remove_dir(path)
            }
            Change::File { path } => match fs::remove_file(path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            },
            Change::Loop { device, backing } => match loopdev::number(device) {
                Some(n) => loopdev::release_if_bound(n, backing),
                None => Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} is not a loop device", device.display()),
                )),
            },
            Change::Mount { path } => {
                if mount_point(path).is_none() {
                    return Ok(());
                }
                let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                // SAFETY: a NUL-terminated path on this frame.
                if unsafe { libc::umount2(c.as_ptr(), 0) } != 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            }
        }
    }
}

/// The filesystem type mounted at `path`, if it is a mount point
/// (`/proc/self/mountinfo`: the fifth field is the mount point, the type follows ` - `).
pub fn mount_point(path: &Path) -> Option<String> {
    let info = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let target = path.to_string_lossy();
    info.lines().rev().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        (left.split_whitespace().nth(4)? == target)
            .then(|| right.split_whitespace().next().unwrap_or("").to_string())
    })
}

/// Move the tasks a cgroup still holds to its parent (a cgroup with tasks cannot be
/// removed). cgroup v1 lists threads in `tasks`, v2 processes in `cgroup.procs`.
fn evacuate(dir: &Path) -> io::Result<()> {
    let Some(parent) = dir.parent() else {
        return Ok(());
    };
    for list in ["tasks", "cgroup.procs"] {
        let Ok(text) = fs::read_to_string(dir.join(list)) else {
            continue;
        };
        for id in text.split_whitespace() {
            // A task that has exited meanwhile cannot be moved and need not be.
            let _ = fs::write(parent.join(list), id);
        }
    }
    Ok(())
}

/// A step of the journal's protocol, reported to an observer (progress display, and
/// tests that kill the process at every step).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Change number `n` (from 0) is on disk in the journal; the change is not made yet.
    Journaled(usize),
    /// Change number `n` has been made.
    Applied(usize),
}

/// A setting as written and as the kernel applied it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    pub path: PathBuf,
    pub requested: String,
    /// What the file reads back after the write.
    pub actual: String,
}

impl Applied {
    /// Whether the kernel kept exactly what was asked.
    pub fn as_requested(&self) -> bool {
        self.actual == self.requested
    }
}

/// What a restore did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// Changes undone, newest first.
    pub undone: Vec<Change>,
    /// Changes that could not be undone, with the error; they stay in the journal.
    pub failed: Vec<(Change, String)>,
}

impl Restored {
    /// The restore as `{"journal", "undone": [entry...], "failed": [{"entry", "error"}]}`.
    pub fn to_json(&self, journal: &Path) -> Value {
        json!({
            "journal": journal,
            "undone": self.undone.iter().map(Change::to_json).collect::<Vec<_>>(),
            "failed": self.failed.iter()
                .map(|(c, e)| json!({"entry": c.to_json(), "error": e}))
                .collect::<Vec<_>>(),
        })
    }
}

/// An open journal, held exclusively by one runner.
pub struct Journal {
    path: PathBuf,
    file: File,
    entries: usize,
    observer: Option<Box<dyn FnMut(Step)>>,
}

impl Journal {
    /// Open (creating it and its directory) and lock the journal at `path`. A journal left
    /// by a runner that died is restored first; what that did is returned beside it.
    pub fn open(path: &Path) -> io::Result<(Journal, Restored)> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)?;
        lock_exclusive(&file, path)?;
        let mut journal = Journal {
            path: path.to_path_buf(),
            file,
            entries: 0,
            observer: None,
        };
        let restored = journal.restore()?;
        Ok((journal, restored))
    }

    /// Report each protocol step to `f`.
    pub fn observe(&mut self, f: impl FnMut(Step) + 'static) {
        self.observer = Some(Box::new(f));
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write `value` to the setting file `path`, journalling its old value first, and
    /// return what the kernel applied.
    pub fn write(&mut self, path: &Path, value: &str, format: Format) -> io::Result<Applied> {
        let old = format.current(&fs::read_to_string(path)?);
        let change = Change::Write {
            path: path.to_path_buf(),
            old,
            format,
        };
        let n = self.record(&change)?;
        fs::write(path, value)?;
        self.step(Step::Applied(n));
        let actual = format.current(&fs::read_to_string(path)?);
        Ok(Applied {
            path: path.to_path_buf(),
            requested: value.to_string(),
            actual,
        })
    }

    /// Create the directory (a cgroup) `path`, journalled. One that exists already is
    /// refused: it belongs to someone else, and restoring must not remove it.
    pub fn mkdir(&mut self, path: &Path) -> io::Result<()> {
        refuse_existing(path)?;
        let n = self.record(&Change::Mkdir {
            path: path.to_path_buf(),
        })?;
        fs::create_dir(path)?;
        self.step(Step::Applied(n));
        Ok(())
    }

    /// Create the file `path` (a loop device's backing file), journalled, and return it
    /// open for writing. One that exists already is refused, as [`Journal::mkdir`]
    /// refuses a directory.
    pub fn create_file(&mut self, path: &Path) -> io::Result<File> {
        refuse_existing(path)?;
        let n = self.record(&Change::File {
            path: path.to_path_buf(),
        })?;
        let file = OpenOptions::new().write(true).create_new(true).open(path)?;
        self.step(Step::Applied(n));
        Ok(file)
    }

    /// Bind a free loop device to `backing` with direct I/O (`loopdev::configure`),
    /// journalled, and return its number and the device held open (it stays bound while
    /// open). A device another process takes between the kernel naming it free and the
    /// binding is passed over for the next free one.
    pub fn bind_loop(&mut self, backing: &Path) -> io::Result<(u32, File)> {
        let mut tries = 0;
        loop {
            let n = loopdev::free_number()?;
            let i = self.record(&Change::Loop {
                device: loopdev::device_path(n),
                backing: backing.to_path_buf(),
            })?;
            match loopdev::configure(n, backing) {
                Ok(dev) => {
                    self.step(Step::Applied(i));
                    return Ok((n, dev));
                }
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries < 8 => tries += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Mount a filesystem of type `fstype` (no device: tracefs) at the existing directory
    /// `path`, journalled. A path that is a mount point already is refused.
    pub fn mount(&mut self, fstype: &str, path: &Path) -> io::Result<()> {
        if let Some(there) = mount_point(path) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} is a mount point already ({there})", path.display()),
            ));
        }
        let invalid = |e| io::Error::new(io::ErrorKind::InvalidInput, e);
        let target =
            std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).map_err(invalid)?;
        let kind = std::ffi::CString::new(fstype).map_err(invalid)?;
        let n = self.record(&Change::Mount {
            path: path.to_path_buf(),
        })?;
        // SAFETY: NUL-terminated strings on this frame; no mount data.
        let rc = unsafe {
            libc::mount(
                kind.as_ptr(),
                target.as_ptr(),
                kind.as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        self.step(Step::Applied(n));
        Ok(())
    }

    /// Undo every journalled change, newest first, and empty the journal. Changes that
    /// cannot be undone are reported and kept, so a later restore tries them again.
    pub fn restore(&mut self) -> io::Result<Restored> {
        let changes = read_changes(&self.path)?;
        let mut restored = Restored::default();
        for change in changes.into_iter().rev() {
            match change.undo() {
                Ok(()) => restored.undone.push(change),
                Err(e) => restored.failed.push((change, e.to_string())),
            }
        }
        self.file.set_len(0)?;
        for (change, _) in restored.failed.iter().rev() {
            writeln!(self.file, "{}", change.to_json())?;
        }
        self.file.sync_all()?;
        self.entries = restored.failed.len();
        Ok(restored)
    }

    fn record(&mut self, change: &Change) -> io::Result<usize> {
        writeln!(self.file, "{}", change.to_json())?;
        self.file.sync_all()?;
        let n = self.entries;
        self.entries += 1;
        self.step(Step::Journaled(n));
        Ok(n)
    }

    fn step(&mut self, s: Step) {
        if let Some(f) = self.observer.as_mut() {
            f(s);
        }
    }
}

impl Drop for Journal {
    /// Whatever ends the runner's use of the journal (success, an error unwinding, a
    /// signal handled by returning), the machine is put back.
    fn drop(&mut self) {
        if self.entries > 0 {
            let _ = self.restore();
        }
    }
}

/// Restore the journal at `path` without running anything (`schedlab host restore`).
pub fn restore_at(path: &Path) -> io::Result<Restored> {
    if !path.exists() {
        return Ok(Restored::default());
    }
    let (mut journal, restored) = Journal::open(path)?;
    journal.entries = 0;
    Ok(restored)
}

/// The changes a journal file holds, oldest first. A last line cut short by a crash while
/// it was being written is ignored: its change was never made. Any other unreadable line
/// is an error (the journal is not schedlab's, or was edited).
fn read_changes(path: &Path) -> io::Result<Vec<Change>> {
    let text = fs::read_to_string(path)?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut out = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let parsed = serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|v| Change::from_json(&v));
        match parsed {
            Some(c) => out.push(c),
            None if i + 1 == lines.len() && !text.ends_with('\n') => {}
            None => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: line {} is not a schedlab journal entry: {line}",
                        path.display(),
                        i + 1
                    ),
                ))
            }
        }
    }
    Ok(out)
}

fn lock_exclusive(file: &File, path: &Path) -> io::Result<()> {
    // SAFETY: flock on a file descriptor this process owns.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::WouldBlock,
        format!(
            "{} is held by another schedlab host run; wait for it to finish",
            path.display()
        ),
    ))
}

/// A path schedlab is to create must not exist yet: what exists belongs to someone else,
/// and a restore must not remove it.
fn refuse_existing(path: &Path) -> io::Result<()> {
    if path.exists() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} exists already; schedlab creates its own",
                path.display()
            ),
        ));
    }
    Ok(())
}
