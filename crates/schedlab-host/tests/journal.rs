//! The restore journal, killed at every step: a child process makes a series of journalled
//! changes and is SIGKILLed at one protocol step (after a journal line reaches the disk,
//! or after its change is made); a restore must then leave everything as it was. Setting
//! files are stand-ins in a temporary directory; where this machine has a v1 cpu cgroup
//! hierarchy with RT group scheduling and the test runs as root, a real cgroup is created,
//! given an RT runtime and a task, and must be gone afterwards; where it runs as root with
//! loop devices, a backing file is created, bound to a loop device with direct I/O and
//! the device's I/O scheduler changed, and afterwards the file must be gone, no loop
//! device bound to it, and every loop device's scheduler as it was.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use schedlab_host::journal::{mount_point, restore_at, Format, Journal, Step};
use schedlab_host::loopdev;

const CHILD_ENV: &str = "SCHEDLAB_JOURNAL_TEST_CHILD";
const CGROUP_V1_CPU: &str = "/sys/fs/cgroup/cpu";

/// The settings the scenario changes: (file, initial value, value written, format).
const SETTINGS: &[(&str, &str, &str, Format)] = &[
    ("sched_rt_runtime_us", "950000\n", "-1", Format::Plain),
    (
        "scheduler",
        "none [mq-deadline] kyber bfq\n",
        "bfq",
        Format::Choice,
    ),
    ("rt_period_us", "1000000\n", "500000", Format::Plain),
];

fn real_cgroup_available() -> Option<PathBuf> {
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let cpu = Path::new(CGROUP_V1_CPU);
    (root && cpu.join("cpu.rt_runtime_us").exists()).then(|| cpu.to_path_buf())
}

fn loop_available() -> bool {
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    root && Path::new("/dev/loop-control").exists()
}

/// Every loop device's I/O scheduler, by number.
fn loop_schedulers() -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir("/sys/block").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(n) = name.strip_prefix("loop").and_then(|n| n.parse().ok()) else {
            continue;
        };
        if let Ok(text) = fs::read_to_string(entry.path().join("queue/scheduler")) {
            out.insert(n, Format::Choice.current(&text));
        }
    }
    out
}

/// The loop devices bound to `backing`.
fn bound_to(backing: &Path) -> Vec<u32> {
    (loop_schedulers().keys().copied())
        .filter(|&n| loopdev::backing_file(n).as_deref() == Some(backing))
        .collect()
}

fn prepare(dir: &Path) {
    for (name, initial, _, _) in SETTINGS {
        fs::write(dir.join(name), initial).unwrap();
    }
}

/// Everything the scenario may change: each setting's value as it reads back.
fn snapshot(dir: &Path, cgroup: Option<&Path>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (name, _, _, format) in SETTINGS {
        let text = fs::read_to_string(dir.join(name)).unwrap();
        out.insert((*name).to_string(), format.current(&text));
    }
    out.insert("nested".into(), dir.join("g").exists().to_string());
    if let Some(cg) = cgroup {
        out.insert("cgroup".into(), cg.exists().to_string());
    }
    let backing = dir.join("backing.img");
    out.insert("backing file".into(), backing.exists().to_string());
    out
}

/// The loop devices' side of the snapshot: each device present at the start keeps its
/// scheduler, and none is bound to the scenario's backing file.
fn loop_snapshot(dir: &Path, before: Option<&BTreeMap<u32, String>>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let now = loop_schedulers();
    for (n, _) in before.unwrap_or(&now).iter() {
        out.insert(
            format!("loop{n} scheduler"),
            now.get(n).cloned().unwrap_or_default(),
        );
    }
    out.insert(
        "bound".into(),
        format!("{:?}", bound_to(&dir.join("backing.img"))),
    );
    out
}

/// A setting file whose kernel writes a value of its own choosing back is emulated by
/// the scheduler file: writing a choice brackets it.
fn emulate_choice_file(path: &Path) {
    let chosen = fs::read_to_string(path).unwrap();
    let chosen = chosen.trim();
    if !chosen.contains('[') {
        let list: Vec<String> = ["none", "mq-deadline", "kyber", "bfq"]
            .iter()
            .map(|c| {
                if *c == chosen {
                    format!("[{c}]")
                } else {
                    (*c).to_string()
                }
            })
            .collect();
        fs::write(path, list.join(" ") + "\n").unwrap();
    }
}

/// The child's scenario: every setting changed, a nested directory pair created, and
/// (when available) a real cgroup with an RT runtime and a task in it.
fn scenario(dir: &Path, journal: &Path, kill_at: Option<usize>, cgroup: Option<&Path>) {
    let (mut j, _) = Journal::open(journal).unwrap();
    let mut steps = 0usize;
    j.observe(move |_s: Step| {
        if Some(steps) == kill_at {
            // SAFETY: the process kills itself, as a SIGKILL from outside would.
            unsafe { libc::raise(libc::SIGKILL) };
        }
        steps += 1;
    });
    for (name, _, value, format) in SETTINGS {
        let path = dir.join(name);
        if *format == Format::Choice {
            // Write through the journal, then let the "kernel" format the file.
            j.write(&path, value, *format).unwrap();
            emulate_choice_file(&path);
        } else {
            let applied = j.write(&path, value, *format).unwrap();
            assert!(applied.as_requested());
        }
    }
    j.mkdir(&dir.join("g")).unwrap();
    j.mkdir(&dir.join("g/h")).unwrap();
    if let Some(cg) = cgroup {
        j.mkdir(cg).unwrap();
        j.write(&cg.join("cpu.rt_runtime_us"), "10000", Format::Plain)
            .unwrap();
        let pid = std::env::var("SCHEDLAB_JOURNAL_TEST_SLEEPER").unwrap();
        fs::write(cg.join("tasks"), pid).unwrap();
    }
    if std::env::var_os("SCHEDLAB_JOURNAL_TEST_LOOP").is_some() {
        let backing = dir.join("backing.img");
        let file = j.create_file(&backing).unwrap();
        file.set_len(1 << 20).unwrap();
        drop(file);
        let (n, _held) = j.bind_loop(&backing).unwrap();
        assert!(loopdev::direct_io(n), "loop{n} without direct I/O");
        let queue = loopdev::sysfs(n).join("queue/scheduler");
        let text = fs::read_to_string(&queue).unwrap();
        let current = Format::Choice.current(&text);
        let other = text
            .split_whitespace()
            .map(|w| w.trim_matches(|c| c == '[' || c == ']'))
            .find(|c| *c != current)
            .unwrap()
            .to_string();
        let applied = j.write(&queue, &other, Format::Choice).unwrap();
        assert!(applied.as_requested(), "{applied:?}");
    }
    // A run that ends normally restores when the journal is dropped.
}

#[test]
fn journal_child() {
    let Ok(arg) = std::env::var(CHILD_ENV) else {
        return; // Only meaningful as the child of the test below.
    };
    let dir = PathBuf::from(std::env::var("SCHEDLAB_JOURNAL_TEST_DIR").unwrap());
    let cgroup = std::env::var_os("SCHEDLAB_JOURNAL_TEST_CGROUP").map(PathBuf::from);
    let kill_at = arg.parse().ok();
    scenario(&dir, &dir.join("journal.jsonl"), kill_at, cgroup.as_deref());
}

fn run_child(
    dir: &Path,
    kill_at: Option<usize>,
    cgroup: Option<&Path>,
    sleeper: u32,
    with_loop: bool,
) -> bool {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["journal_child", "--exact", "--test-threads=1", "--quiet"])
        .env(
            CHILD_ENV,
            kill_at.map_or("none".to_string(), |k| k.to_string()),
        )
        .env("SCHEDLAB_JOURNAL_TEST_DIR", dir)
        .env("SCHEDLAB_JOURNAL_TEST_SLEEPER", sleeper.to_string());
    if let Some(cg) = cgroup {
        cmd.env("SCHEDLAB_JOURNAL_TEST_CGROUP", cg);
    }
    if with_loop {
        cmd.env("SCHEDLAB_JOURNAL_TEST_LOOP", "1");
    }
    let status = cmd.output().unwrap().status;
    if kill_at.is_some() && status.signal() == Some(libc::SIGKILL) {
        return true;
    }
    assert!(status.success(), "child failed: {status:?}");
    false
}

#[test]
fn a_run_killed_at_any_step_leaves_nothing_changed_after_restore() {
    let cgroup_root = real_cgroup_available();
    if cgroup_root.is_none() {
        eprintln!("no real cgroup in this run: not root, or no v1 cpu hierarchy with RT groups");
    }
    let with_loop = loop_available();
    if !with_loop {
        eprintln!("no loop device in this run: not root, or no /dev/loop-control");
    }
    let mut sleeper = Command::new("sleep").arg("600").spawn().unwrap();
    let mut killed_somewhere = 0;
    let mut k = 0usize;
    loop {
        let dir = tempdir(k);
        prepare(&dir);
        let cgroup = cgroup_root
            .as_ref()
            .map(|r| r.join(format!("schedlab-journal-test-{}", std::process::id())));
        let before = snapshot(&dir, cgroup.as_deref());
        let loops_before = loop_schedulers();
        let loop_before = loop_snapshot(&dir, Some(&loops_before));
        let killed = run_child(&dir, Some(k), cgroup.as_deref(), sleeper.id(), with_loop);
        let restored = restore_at(&dir.join("journal.jsonl")).unwrap();
        assert!(
            restored.failed.is_empty(),
            "step {k}: {:?}",
            restored.failed
        );
        assert_eq!(
            snapshot(&dir, cgroup.as_deref()),
            before,
            "killed at step {k}"
        );
        assert_eq!(
            loop_snapshot(&dir, Some(&loops_before)),
            loop_before,
            "killed at step {k}"
        );
        assert_eq!(fs::read_to_string(dir.join("journal.jsonl")).unwrap(), "");
        fs::remove_dir_all(&dir).unwrap();
        if !killed {
            break; // The step number passed the last step: the run completed.
        }
        killed_somewhere += 1;
        k += 1;
    }
    let changes = SETTINGS.len()
        + 2
        + if cgroup_root.is_some() { 2 } else { 0 }
        + if with_loop { 3 } else { 0 };
    assert_eq!(
        killed_somewhere,
        2 * changes,
        "a kill point at each journal line and change"
    );
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

#[test]
fn a_completed_run_restores_when_the_journal_is_dropped() {
    let dir = tempdir(10_000);
    prepare(&dir);
    let before = snapshot(&dir, None);
    assert!(!run_child(&dir, None, None, 0, false));
    assert_eq!(snapshot(&dir, None), before);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_second_runner_cannot_open_a_held_journal() {
    let dir = tempdir(20_000);
    let path = dir.join("journal.jsonl");
    let (_held, _) = Journal::open(&path).unwrap();
    let Err(err) = Journal::open(&path) else {
        panic!("the second open must fail");
    };
    assert!(
        err.to_string()
            .contains("held by another schedlab host run"),
        "{err}"
    );
    drop(_held);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_torn_last_line_is_ignored_and_a_foreign_line_is_an_error() {
    let dir = tempdir(30_000);
    let path = dir.join("journal.jsonl");
    fs::write(dir.join("s"), "old\n").unwrap();
    fs::write(dir.join("t"), "new\n").unwrap();
    let line = format!(
        "{{\"op\":\"write\",\"path\":\"{}\",\"old\":\"old\",\"format\":\"plain\"}}\n",
        dir.join("s").display()
    );
    fs::write(&path, format!("{line}{{\"op\":\"wri")).unwrap();
    fs::write(dir.join("s"), "new").unwrap();
    let restored = restore_at(&path).unwrap();
    assert_eq!(restored.undone.len(), 1);
    assert_eq!(fs::read_to_string(dir.join("s")).unwrap(), "old");
    fs::write(&path, format!("not json\n{line}")).unwrap();
    let err = restore_at(&path).expect_err("a foreign line must be refused");
    assert!(
        err.to_string()
            .contains("line 1 is not a schedlab journal entry"),
        "{err}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_journalled_mount_is_unmounted_by_the_restore() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: mounting needs root");
        return;
    }
    let dir = tempdir(40_000);
    let point = dir.join("mnt");
    fs::create_dir(&point).unwrap();
    let path = dir.join("journal.jsonl");
    let (mut j, _) = Journal::open(&path).unwrap();
    j.mount("tmpfs", &point).unwrap();
    assert_eq!(mount_point(&point).as_deref(), Some("tmpfs"));
    let again = j
        .mount("tmpfs", &point)
        .expect_err("a mount point is refused");
    assert!(
        again.to_string().contains("a mount point already"),
        "{again}"
    );
    let restored = j.restore().unwrap();
    assert_eq!(restored.undone.len(), 1, "{restored:?}");
    assert_eq!(mount_point(&point), None);
    assert_eq!(fs::read_to_string(&path).unwrap(), "");
    drop(j);
    fs::remove_dir_all(&dir).unwrap();
}

fn tempdir(k: usize) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("schedlab-journal-{}-{k}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}
