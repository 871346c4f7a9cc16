//! Block device models' parameters and the geometry facts derived from them, shared by
//! the parser (which refuses parameters no device could have) and the simulator's device
//! models (`schedlab-sim/src/device/`), so that each fact has one implementation.
//!
//! Device profiles: named, documented parameter sets of real devices (`devices/*.json`,
//! compiled in), `{"name", "model", "about", "params", "provenance"}`; `params` holds the
//! model's keys (the same grammar as a spec's device object, read by the same parser) and
//! `provenance` says where each value comes from, per key: `{"how": "source" | "derived" |
//! "assumed", "from": …}`; it is carried, not interpreted.

/// An HDD's parameters (`"model": "hdd"`). Times in ns, rates in bytes per second.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HddParams {
    pub size_bytes: u64,
    pub rpm: u32,
    /// Recording surfaces (heads): a cylinder holds this many tracks.
    pub heads: u32,
    /// Seek times (settling included) over one cylinder, on average over all seek
    /// combinations, and over the full stroke.
    pub seek_track_ns: u64,
    pub seek_avg_ns: u64,
    pub seek_full_ns: u64,
    /// Sustained media rate at the outermost (LBA 0) and innermost tracks.
    pub rate_outer_bps: u64,
    pub rate_inner_bps: u64,
    /// Host interface rate (buffer to host).
    pub interface_bps: u64,
    /// Command overhead: the controller's time per command before the mechanism moves.
    pub overhead_ns: u64,
    /// Read cache: `cache_segments` segments sharing `cache_bytes`; after a media read the
    /// disk reads ahead up to `read_ahead_bytes` (0: no read-ahead).
    pub cache_bytes: u64,
    pub cache_segments: u32,
    pub read_ahead_bytes: u64,
    /// Write-back cache: writes complete once in the cache (up to `cache_bytes` dirty).
    pub write_cache: bool,
    /// NCQ tags (1 = no queueing: one command at a time, in arrival order).
    pub queue_depth: u32,
    /// Ageing of queued commands, W in percent: a command is chosen by its positioning
    /// time less W × the time it has waited (aged shortest positioning time first);
    /// 0: plain shortest positioning time first.
    pub ncq_age_percent: u32,
}

/// An SSD's parameters (`"model": "ssd"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SsdParams {
    pub size_bytes: u64,
    pub channels: u32,
    pub dies_per_channel: u32,
    pub page_bytes: u64,
    /// Array read (tR) and page program (tPROG) times of a die.
    pub read_ns: u64,
    pub program_ns: u64,
    /// Rate of one channel (the flash bus between controller and dies).
    pub channel_bps: u64,
    pub interface_bps: u64,
    pub overhead_ns: u64,
    /// Write buffer (0: none, every write waits for its pages' programs).
    pub write_buffer_bytes: u64,
    pub queue_depth: u32,
}

impl SsdParams {
    pub fn dies(&self) -> u32 {
        self.channels * self.dies_per_channel
    }
}

/// A seek time curve in the form of Lee & Katz ("An analytic performance model of disk
/// arrays", SIGMETRICS 1993; theirs is a·√(d−1) + b·(d−1) + c over d cylinders):
/// `seek(x) = c + a·√x + b·x` for a seek over a fraction `x` of the stroke, 0 for no
/// cylinder change. The square-root term dominates short seeks
/// (the arm accelerates and decelerates) and the linear one long seeks (it coasts), as
/// Ruemmler & Wilkes describe ("An introduction to disk drive modeling", IEEE Computer
/// 1994). The three coefficients are fitted exactly to the three figures a datasheet
/// gives: the single-track seek (`x` = one cylinder), the full-stroke seek (`x` = 1) and
/// the average seek, which Hitachi's specifications define as the average over all seek
/// lengths n weighted by (max + 1 − n) — over uniformly random pairs of cylinders —, whose
/// continuous moments are E[√x] = 8/15 and E[x] = 1/3.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeekCurve {
    pub c: f64,
    pub a: f64,
    pub b: f64,
}

/// E[√x] and E[x] for x the distance between two uniform points of [0, 1].
const MEAN_SQRT_DISTANCE: f64 = 8.0 / 15.0;
const MEAN_DISTANCE: f64 = 1.0 / 3.0;

impl SeekCurve {
    /// The curve through the three datasheet figures (ns) on a disk of `cylinders`; an
    /// error if no non-decreasing curve of this form fits them.
    pub fn fit(track_ns: u64, avg_ns: u64, full_ns: u64, cylinders: f64) -> Result<Self, String> {
        if !(track_ns < avg_ns && avg_ns < full_ns) {
            return Err(format!(
                "the seek times must grow with distance: seek_track_ns ({track_ns}) < \
                 seek_avg_ns ({avg_ns}) < seek_full_ns ({full_ns})"
            ));
        }
        let (t, avg, full) = (track_ns as f64, avg_ns as f64, full_ns as f64);
        let u = (1.0 / cylinders.max(1.0)).sqrt();
        // full − track = a(1 − u) + b(1 − u²); full − avg = a(1 − E√x) + b(1 − Ex).
        let (p1, q1, r1) = (1.0 - u, 1.0 - u * u, full - t);
        let (p2, q2, r2) = (1.0 - MEAN_SQRT_DISTANCE, 1.0 - MEAN_DISTANCE, full - avg);
        let det = p1 * q2 - q1 * p2;
        let a = (r1 * q2 - q1 * r2) / det;
        let b = (p1 * r2 - r1 * p2) / det;
        let c = full - a - b;
        if !(a >= 0.0 && a / 2.0 + b >= 0.0 && det.is_finite()) {
            return Err(format!(
                "no seek curve c + a·√x + b·x that never decreases passes through \
                 seek_track_ns {track_ns}, seek_avg_ns {avg_ns} and seek_full_ns {full_ns} \
                 (the average must lie between 1/3 and 11/15 of the way from the \
                 single-track to the full-stroke seek)"
            ));
        }
        Ok(SeekCurve { c, a, b })
    }

    /// Seek time (ns) over the fraction `x` of the stroke (0 < x ≤ 1).
    pub fn at(&self, x: f64) -> f64 {
        self.c + self.a * x.sqrt() + self.b * x
    }
}

/// Where each byte of an HDD lies. Zoned recording at constant linear density: a track's
/// capacity, hence the media rate, is proportional to its radius, which falls linearly
/// from the outer edge (LBA 0, `rate_outer_bps`) to the inner one (`rate_inner_bps`), so
/// bytes before track s are T·(r_out·s − (r_out − r_in)·s²/(2M)) for M tracks of one
/// revolution T. Tracks are numbered in LBA order, `heads` of them per cylinder, and
/// streaming one track takes exactly one revolution: the track coordinate s of a byte,
/// continuous, gives both its cylinder (s / heads) and its angle (the fraction of s), as
/// if every next track's start were skewed to be under its head when the previous one
/// ends (head and cylinder switches are hidden, so sustained rates are the media rates).
#[derive(Clone, Copy, Debug)]
pub struct HddGeometry {
    /// One revolution (ns).
    pub period_ns: f64,
    /// Media rates, bytes per ns.
    pub outer: f64,
    pub inner: f64,
    /// Tracks (M) and cylinders (M / heads).
    pub tracks: f64,
    pub cylinders: f64,
    pub heads: f64,
}

impl HddGeometry {
    pub fn new(p: &HddParams) -> Self {
        let period_ns = 60e9 / p.rpm as f64;
        let outer = p.rate_outer_bps as f64 / 1e9;
        let inner = p.rate_inner_bps as f64 / 1e9;
        let tracks = 2.0 * p.size_bytes as f64 / (period_ns * (outer + inner));
        HddGeometry {
            period_ns,
            outer,
            inner,
            tracks,
            cylinders: tracks / p.heads as f64,
            heads: p.heads as f64,
        }
    }

    /// The track coordinate of byte `b` (the root of the quadratic above, in the form
    /// that stays exact when the rates are equal).
    pub fn track(&self, b: u64) -> f64 {
        let beta = b as f64 / self.period_ns;
        let q = 2.0 * (self.outer - self.inner) * beta / self.tracks;
        2.0 * beta / (self.outer + (self.outer * self.outer - q).max(0.0).sqrt())
    }

    /// Media rate (bytes per ns) at track coordinate `s`.
    pub fn rate(&self, s: f64) -> f64 {
        self.outer - (self.outer - self.inner) * s / self.tracks
    }

    /// The cylinder a track coordinate lies on.
    pub fn cylinder(&self, s: f64) -> f64 {
        (s / self.heads).floor()
    }

    /// Streaming time (ns) from track coordinate `from` to `to`.
    pub fn stream_ns(&self, from: f64, to: f64) -> f64 {
        (to - from) * self.period_ns
    }

    /// The track coordinate reached after streaming `ns` from `from`.
    pub fn streamed(&self, from: f64, ns: f64) -> f64 {
        from + ns / self.period_ns
    }

    /// The bytes before track coordinate `s` (the inverse of [`Self::track`]).
    pub fn byte_at(&self, s: f64) -> f64 {
        self.period_ns * (self.outer * s - (self.outer - self.inner) * s * s / (2.0 * self.tracks))
    }
}

pub use crate::profile::Builtin;

/// Every built-in device profile, by name.
pub const BUILTIN: &[Builtin] = &[
    Builtin {
        name: "hitachi-hdp725032gla360",
        text: include_str!("../devices/hitachi-hdp725032gla360.json"),
    },
    Builtin {
        name: "intel-ssdsc2ct240a4",
        text: include_str!("../devices/intel-ssdsc2ct240a4.json"),
    },
];

/// The built-in device profile called `name`.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    crate::profile::find(BUILTIN, name)
}

/// The built-in device profiles' names.
pub fn names() -> Vec<&'static str> {
    crate::profile::names_in(BUILTIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fitted curve passes through the single-track and full-stroke figures and its
    /// mean over uniformly random pairs of cylinders (Hitachi's weighting, summed exactly)
    /// is the average figure.
    #[test]
    fn the_seek_curve_passes_through_the_three_figures() {
        let n = 20_000u64;
        let c = SeekCurve::fit(1_000_000, 8_500_000, 20_000_000, n as f64).unwrap();
        assert!((c.at(1.0 / n as f64) - 1e6).abs() < 1.0);
        assert!((c.at(1.0) - 2e7).abs() < 1.0);
        let (mut sum, mut weight) = (0.0, 0.0);
        for d in 1..n {
            let w = (n - d) as f64;
            sum += w * c.at(d as f64 / n as f64);
            weight += w;
        }
        let mean = sum / weight;
        assert!((mean - 8.5e6).abs() < 8.5e6 * 1e-3, "{mean}");
    }

    /// Every built-in device profile parses as a device of its model, names itself, and
    /// says where each of its values comes from.
    #[test]
    fn every_builtin_profile_parses_with_provenance_for_each_value() {
        for b in BUILTIN {
            let v: serde_json::Value = serde_json::from_str(b.text).unwrap();
            assert_eq!(v["name"], b.name, "a built-in profile names itself");
            let model = v["model"].as_str().unwrap();
            let text = format!(
                r#"{{"tasks": {{"t": {{"run": 1000}}}}, "global": {{"duration": 1}},
                   "schedlab": {{"devices": {{"d": {{"model": "{model}", "profile": "{}"}}}}}}}}"#,
                b.name
            );
            let spec = crate::parse_spec(&text).unwrap_or_else(|e| panic!("{}: {e}", b.name));
            // A profile sets every key of its model: nothing is left at a placeholder.
            let keys = match model {
                "hdd" => crate::parse::device::HDD_KEYS,
                _ => crate::parse::device::SSD_KEYS,
            };
            let mut want: Vec<&str> = keys.iter().copied().filter(|k| *k != "profile").collect();
            let mut have: Vec<&str> = v["params"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            want.sort_unstable();
            have.sort_unstable();
            assert_eq!(have, want, "{}", b.name);
            let size = spec.resources.devices[0].model.size_bytes();
            assert_eq!(Some(size), v["params"]["size_bytes"].as_u64());
            for (key, _) in v["params"].as_object().unwrap() {
                let p = &v["provenance"][key];
                assert!(
                    ["source", "derived", "assumed"].contains(&p["how"].as_str().unwrap_or("")),
                    "{}: {key} has no provenance",
                    b.name
                );
                assert!(p["from"].as_str().is_some_and(|f| !f.is_empty()));
            }
        }
    }

    #[test]
    fn a_curve_that_would_decrease_is_refused() {
        assert!(SeekCurve::fit(1_000_000, 19_000_000, 20_000_000, 1e4).is_err());
        assert!(SeekCurve::fit(1_000_000, 1_500_000, 20_000_000, 1e4).is_err());
        assert!(SeekCurve::fit(9_000_000, 8_500_000, 20_000_000, 1e4).is_err());
    }

    /// The track coordinate and the bytes before it are inverse; the last byte is on the
    /// last track, and the rates at the edges are the given ones.
    #[test]
    fn the_zoned_geometry_is_consistent() {
        let p = HddParams {
            size_bytes: 320_072_933_376,
            rpm: 7200,
            heads: 4,
            seek_track_ns: 1,
            seek_avg_ns: 2,
            seek_full_ns: 3,
            rate_outer_bps: 64_800_000,
            rate_inner_bps: 31_000_000,
            interface_bps: 300_000_000,
            overhead_ns: 0,
            cache_bytes: 0,
            cache_segments: 1,
            read_ahead_bytes: 0,
            write_cache: false,
            queue_depth: 1,
            ncq_age_percent: 0,
        };
        let g = HddGeometry::new(&p);
        assert!((g.track(p.size_bytes) - g.tracks).abs() < 1e-6 * g.tracks);
        for b in [0u64, 4096, 1 << 30, 100 << 30, p.size_bytes / 2] {
            let s = g.track(b);
            assert!((g.byte_at(s) - b as f64).abs() < 1.0, "{b}");
        }
        assert!((g.rate(0.0) * 1e9 - 64.8e6).abs() < 1.0);
        assert!((g.rate(g.tracks) * 1e9 - 31.0e6).abs() < 1.0);
    }
}
