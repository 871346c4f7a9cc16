//! The kernel facts every host run records beside its results: what kernel, which
//! preemption model and tick rate, which clock, how much time the hypervisor stole, the
//! RT bandwidth sysctls and the timer slack. Read from procfs and sysfs (and the kernel's
//! own configuration, `/proc/config.gz`, when it is built in); a fact that cannot be read
//! is `None`, never guessed.

use std::fs;
use std::io::Read;

use serde_json::{json, Value};

/// What the machine's kernel is and how it is set.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelFacts {
    /// `uname -r`.
    pub release: String,
    /// `uname -v` (build flags such as `SMP PREEMPT_DYNAMIC` are in it).
    pub version: String,
    pub machine: String,
    /// The preemption model in force: `none`, `voluntary`, `full` or `rt` (the names of
    /// schedlab's `machine.kernel.preempt`), from the boot's `preempt=` when the kernel
    /// was built with PREEMPT_DYNAMIC, else from the configuration.
    pub preempt: Option<String>,
    /// Whether the model can be changed at boot (`CONFIG_PREEMPT_DYNAMIC`).
    pub preempt_dynamic: Option<bool>,
    /// `CONFIG_HZ`.
    pub hz: Option<u32>,
    /// The current clocksource.
    pub clocksource: Option<String>,
    /// CPUs online.
    pub cpus: usize,
    /// Steal time of all CPUs since boot, in USER_HZ ticks (`/proc/stat`).
    pub steal_ticks: Option<u64>,
    /// `kernel.sched_rt_period_us` and `kernel.sched_rt_runtime_us` (−1: no limit).
    pub sched_rt_period_us: Option<i64>,
    pub sched_rt_runtime_us: Option<i64>,
    /// `kernel.sched_rr_timeslice_ms`.
    pub sched_rr_timeslice_ms: Option<i64>,
    /// The calling thread's timer slack (`PR_GET_TIMERSLACK`), nanoseconds.
    pub timer_slack_ns: Option<u64>,
}

impl KernelFacts {
    /// Read this machine's facts.
    pub fn read() -> Self {
        let (release, version, machine) = uname();
        let config = kernel_config();
        let opt = |k: &str| config.as_deref().and_then(|c| config_value(c, k));
        let configured = config.as_deref().and_then(configured_preempt);
        let dynamic = config
            .as_ref()
            .map(|_| opt("CONFIG_PREEMPT_DYNAMIC").is_some());
        let preempt = boot_preempt(&read_trimmed("/proc/cmdline").unwrap_or_default())
            .filter(|_| dynamic == Some(true))
            .or(configured);
        Self {
            release,
            version,
            machine,
            preempt,
            preempt_dynamic: dynamic,
            hz: opt("CONFIG_HZ").and_then(|v| v.parse().ok()),
            clocksource: read_trimmed(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            ),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            steal_ticks: read_trimmed("/proc/stat").and_then(|s| steal_ticks(&s)),
            sched_rt_period_us: read_int("/proc/sys/kernel/sched_rt_period_us"),
            sched_rt_runtime_us: read_int("/proc/sys/kernel/sched_rt_runtime_us"),
            sched_rr_timeslice_ms: read_int("/proc/sys/kernel/sched_rr_timeslice_ms"),
            timer_slack_ns: timer_slack(),
        }
    }

    /// The simulator's model of this kernel's fair scheduler: EEVDF from Linux 6.6
    /// (commit 147f3efaa241, "sched/fair: Implement an EEVDF-like scheduling policy"),
    /// CFS before.
    pub fn model_scheduler(&self) -> &'static str {
        let mut nums = self.release.split(|c: char| !c.is_ascii_digit());
        let major: u32 = nums.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        let minor: u32 = nums.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        if (major, minor) >= (6, 6) {
            "linux-eevdf"
        } else {
            "linux-cfs"
        }
    }

    /// The facts as the result's `run.kernel` object.
    pub fn to_json(&self) -> Value {
        json!({
            "release": self.release,
            "version": self.version,
            "machine": self.machine,
            "preempt": self.preempt,
            "preempt_dynamic": self.preempt_dynamic,
            "hz": self.hz,
            "clocksource": self.clocksource,
            "cpus": self.cpus,
            "steal_ticks": self.steal_ticks,
            "sched_rt_period_us": self.sched_rt_period_us,
            "sched_rt_runtime_us": self.sched_rt_runtime_us,
            "sched_rr_timeslice_ms": self.sched_rr_timeslice_ms,
            "timer_slack_ns": self.timer_slack_ns,
            "model_scheduler": self.model_scheduler(),
        })
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

fn read_int(path: &str) -> Option<i64> {
    read_trimmed(path)?.parse().ok()
}

fn uname() -> (String, String, String) {
    // SAFETY: uname fills the zeroed struct this frame owns.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return Default::default();
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    (field(&u.release), field(&u.version), field(&u.machine))
}

/// The kernel's configuration, from `/proc/config.gz` (CONFIG_IKCONFIG_PROC).
fn kernel_config() -> Option<String> {
    let gz = fs::read("/proc/config.gz").ok()?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// `CONFIG_X=value` → value (quotes kept off).
pub fn config_value<'a>(config: &'a str, key: &str) -> Option<&'a str> {
    config.lines().find_map(|l| {
        let v = l.strip_prefix(key)?.strip_prefix('=')?;
        Some(v.trim_matches('"'))
    })
}

/// The preemption model the configuration selects (kernel/Kconfig.preempt's choice).
pub fn configured_preempt(config: &str) -> Option<String> {
    let set = |k: &str| config_value(config, k) == Some("y");
    let model = if set("CONFIG_PREEMPT_RT") {
        "rt"
    } else if set("CONFIG_PREEMPT") {
        "full"
    } else if set("CONFIG_PREEMPT_VOLUNTARY") {
        "voluntary"
    } else if set("CONFIG_PREEMPT_NONE") {
        "none"
    } else {
        return None;
    };
    Some(model.to_string())
}

/// The `preempt=` boot parameter of a PREEMPT_DYNAMIC kernel (kernel/sched/core.c
/// `setup_preempt_mode`: none, voluntary, full, and lazy in 6.13+), mapped onto schedlab's
/// names; `lazy` preempts as `full` does at the next tick and is reported as itself.
pub fn boot_preempt(cmdline: &str) -> Option<String> {
    let v = cmdline
        .split_whitespace()
        .find_map(|w| w.strip_prefix("preempt="))?;
    matches!(v, "none" | "voluntary" | "full" | "lazy").then(|| v.to_string())
}

/// The steal column of `/proc/stat`'s aggregate `cpu` line.
pub fn steal_ticks(stat: &str) -> Option<u64> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    line.split_whitespace().nth(8)?.parse().ok()
}

fn timer_slack() -> Option<u64> {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer arguments.
    let v = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    (v >= 0).then_some(v as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configured_model_and_a_boot_override_are_read() {
        let cfg = "CONFIG_PREEMPT_NONE=y\nCONFIG_PREEMPT_DYNAMIC=y\nCONFIG_HZ=250\n";
        assert_eq!(configured_preempt(cfg).as_deref(), Some("none"));
        assert_eq!(config_value(cfg, "CONFIG_HZ"), Some("250"));
        assert_eq!(config_value(cfg, "CONFIG_HZ_250"), None);
        assert_eq!(
            boot_preempt("quiet preempt=full ro").as_deref(),
            Some("full")
        );
        assert_eq!(boot_preempt("quiet ro"), None);
        let rt = "CONFIG_PREEMPT=y\nCONFIG_PREEMPT_RT=y\n";
        assert_eq!(configured_preempt(rt).as_deref(), Some("rt"));
    }

    #[test]
    fn eevdf_models_kernels_from_6_6() {
        let mut f = KernelFacts::read();
        for (release, model) in [
            ("6.18.44-fc", "linux-eevdf"),
            ("6.6.0", "linux-eevdf"),
            ("6.5.13", "linux-cfs"),
            ("5.10.0-rt", "linux-cfs"),
        ] {
            f.release = release.to_string();
            assert_eq!(f.model_scheduler(), model, "{release}");
        }
    }

    #[test]
    fn steal_is_the_eighth_number_of_the_cpu_line() {
        let stat = "cpu  10 0 20 300 4 0 1 77 0 0\ncpu0 5 0 10 150 2 0 1 40 0 0\n";
        assert_eq!(steal_ticks(stat), Some(77));
    }
}
