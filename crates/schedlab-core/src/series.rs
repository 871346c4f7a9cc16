//! The statistics a result reports of its activations, taken one way for every engine:
//! exactly from the samples when they are kept in memory, else from the per-task
//! histograms (count, min, max and mean exact either way); and the workload's headline.

use schedlab_spec::model::Headline;

use crate::metrics::Metrics;
use crate::result::Headline as HeadlineOut;
use crate::stats::{Histogram, Summary};

/// Which latencies of a task a statistic is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Series {
    /// start − release of the activations that ran.
    Latency = 0,
    /// end − release of the activations that ended.
    Response = 1,
    /// The latencies of timer-released activations.
    TimerLatency = 2,
}

/// Where a run's statistics come from: each task's samples of each series when they are
/// kept in memory (statistics are then exact); else the histograms.
pub struct SeriesStats {
    exact: Option<Vec<[Vec<u64>; 3]>>,
}

impl SeriesStats {
    /// The source for the `nr_tasks` tasks of `metrics`.
    pub fn of(metrics: &Metrics, nr_tasks: usize) -> SeriesStats {
        SeriesStats {
            exact: metrics.samples().map(|s| s.per_task(nr_tasks)),
        }
    }

    /// Whether the statistics are exact (samples kept) rather than from histograms.
    pub fn is_exact(&self) -> bool {
        self.exact.is_some()
    }

    fn histogram(metrics: &Metrics, t: usize, series: Series) -> &Histogram {
        let m = &metrics.tasks[t];
        match series {
            Series::Latency => &m.latency,
            Series::Response => &m.response,
            Series::TimerLatency => m.timer_latency(),
        }
    }

    /// The statistics of one task's series.
    pub fn task(&mut self, metrics: &Metrics, t: usize, series: Series) -> Summary {
        match &mut self.exact {
            Some(per) => Summary::exact(&mut per[t][series as usize]),
            None => Summary::of_histogram(Self::histogram(metrics, t, series)),
        }
    }

    /// The statistics of a series pooled over the tasks `keep` selects.
    pub fn pooled(
        &mut self,
        metrics: &Metrics,
        series: Series,
        keep: impl Fn(usize) -> bool,
    ) -> Summary {
        match &mut self.exact {
            Some(per) => {
                let mut all: Vec<u64> = (0..per.len())
                    .filter(|&t| keep(t))
                    .flat_map(|t| per[t][series as usize].iter().copied())
                    .collect();
                Summary::exact(&mut all)
            }
            None => {
                let mut h = Histogram::new();
                for t in (0..metrics.tasks.len()).filter(|&t| keep(t)) {
                    h.merge(Self::histogram(metrics, t, series));
                }
                Summary::of_histogram(&h)
            }
        }
    }
}

/// The workload's headline: `span_ns` is the time a rate is taken over (the run's, or its
/// last exit's when it has no duration), `makespan` the time of
/// the last exit when every task exited, `name_of(t)` task `t`'s name.
pub fn headline<'n>(
    spec: &Headline,
    metrics: &Metrics,
    stats: &mut SeriesStats,
    span_ns: u64,
    makespan: Option<u64>,
    name_of: impl Fn(usize) -> &'n str,
) -> Option<HeadlineOut> {
    let latency = |stats: &mut SeriesStats, prefix: &str, name: &str, series| {
        let pooled = stats.pooled(metrics, series, |t| name_of(t).starts_with(prefix));
        HeadlineOut {
            name: name.to_string(),
            value: pooled.all.mean().map(|m| m / 1e3),
            unit: "us",
            stats_ns: Some(pooled),
        }
    };
    match spec {
        Headline::None => None,
        Headline::ElapsedSinceMark { mark, name } => {
            let since = metrics.marks.get(*mark as usize).copied().flatten();
            let value = match (since, makespan) {
                (Some(m), Some(end)) => Some((end - m) as f64 / 1e9),
                _ => None,
            };
            Some(HeadlineOut {
                name: name.clone(),
                value,
                unit: "s",
                stats_ns: None,
            })
        }
        Headline::MarkRate { mark, name } => Some(rate(metrics, *mark as usize, name, span_ns)),
        Headline::WakeupLatency { task_prefix, name } => {
            Some(latency(stats, task_prefix, name, Series::Latency))
        }
        Headline::TimerLatency { task_prefix, name } => {
            Some(latency(stats, task_prefix, name, Series::TimerLatency))
        }
    }
}

/// Hits of mark `label` per second of the run's `span_ns`, with the statistics of the gaps
/// from each hitting task's previous mark.
fn rate(metrics: &Metrics, label: usize, name: &str, span_ns: u64) -> HeadlineOut {
    let hits = metrics.mark_hits[label];
    let gaps = &metrics.mark_gaps[label];
    HeadlineOut {
        name: name.to_string(),
        value: (span_ns > 0).then(|| hits as f64 * 1e9 / span_ns as f64),
        unit: "1/s",
        stats_ns: (gaps.count() > 0).then(|| Summary::of_histogram(gaps)),
    }
}
