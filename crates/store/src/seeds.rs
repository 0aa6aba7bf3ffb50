//! The seeds' metrics of finished builds: `time_to_publish` (request accepted → PUBLISHED) at
//! p50/p95/p99, `note_effectiveness` (the average confidence of the notes a build used, against
//! how it ended) and build duration per UTC day. Computed here from [`RunOutcome`]s, so every
//! backend and every front end (`/metrics`, `wright stats`, the dashboard) says the same.

use crate::rows::percentile;
use chrono::DateTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Days of finished builds the seeds' metrics cover in `/metrics` and `wright stats`.
pub const DAYS: u32 = 30;

/// A finished build as the seeds' metrics need it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunOutcome {
    pub id: String,
    pub published: bool,
    /// When the request was accepted: queued (`wright serve`), else started.
    pub accepted_at: String,
    pub finished_at: Option<String>,
    pub duration_ms: Option<u64>,
    /// Notes that were in its prompts.
    pub notes_used: u64,
    /// Their average confidence (as the notes stand now); `None` without notes.
    pub notes_confidence: Option<f64>,
}

/// Nearest-rank percentiles of a set of times.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub count: u64,
    pub p50_ms: Option<u64>,
    pub p95_ms: Option<u64>,
    pub p99_ms: Option<u64>,
}

impl Percentiles {
    fn of(mut ms: Vec<u64>) -> Self {
        ms.sort_unstable();
        Self {
            count: ms.len() as u64,
            p50_ms: percentile(&ms, 50.0),
            p95_ms: percentile(&ms, 95.0),
            p99_ms: percentile(&ms, 99.0),
        }
    }
}

/// `note_effectiveness`: the average confidence of the notes builds used, for builds that
/// published and for builds that failed (a note that helps shows up higher among the
/// published), and the publish rate of builds with notes and without.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NoteEffectiveness {
    /// Mean over published builds that used notes of their notes' average confidence.
    pub published_confidence: Option<f64>,
    /// The same over failed builds.
    pub failed_confidence: Option<f64>,
    /// Mean over every build that used notes (the seed's "average confidence of applied notes").
    pub confidence: Option<f64>,
    pub builds_with_notes: u64,
    pub published_with_notes: u64,
    pub builds_without_notes: u64,
    pub published_without_notes: u64,
}

/// Finished builds of one UTC day (of their start) and how long the published ones took.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DayDuration {
    pub day: String,
    pub builds: u64,
    pub published: u64,
    /// Mean and 95th percentile duration of the published builds.
    pub mean_ms: Option<u64>,
    pub p95_ms: Option<u64>,
}

/// The seeds' metrics over a set of finished builds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeedMetrics {
    /// Published builds: request accepted → PUBLISHED.
    pub time_to_publish: Percentiles,
    pub note_effectiveness: NoteEffectiveness,
    /// Oldest first.
    pub duration_per_day: Vec<DayDuration>,
}

fn ms_between(from: &str, to: &str) -> Option<u64> {
    let (a, b) = (DateTime::parse_from_rfc3339(from).ok()?, DateTime::parse_from_rfc3339(to).ok()?);
    u64::try_from((b - a).num_milliseconds()).ok()
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The seeds' metrics of `runs`.
pub fn seed_metrics(runs: &[RunOutcome]) -> SeedMetrics {
    let publish_ms: Vec<u64> = runs
        .iter()
        .filter(|r| r.published)
        .filter_map(|r| ms_between(&r.accepted_at, r.finished_at.as_deref()?))
        .collect();
    let mut n = NoteEffectiveness::default();
    let (mut ok_conf, mut bad_conf) = (Vec::new(), Vec::new());
    for r in runs {
        match (r.notes_used > 0, r.notes_confidence) {
            (true, conf) => {
                n.builds_with_notes += 1;
                n.published_with_notes += u64::from(r.published);
                if let Some(c) = conf {
                    if r.published { ok_conf.push(c) } else { bad_conf.push(c) }
                }
            }
            (false, _) => {
                n.builds_without_notes += 1;
                n.published_without_notes += u64::from(r.published);
            }
        }
    }
    n.published_confidence = mean(&ok_conf);
    n.failed_confidence = mean(&bad_conf);
    n.confidence = mean(&[ok_conf, bad_conf].concat());
    let mut days: BTreeMap<String, (DayDuration, Vec<u64>)> = BTreeMap::new();
    for r in runs {
        let day = r.accepted_at.get(..10).unwrap_or_default().to_string();
        let entry = days.entry(day.clone()).or_insert_with(|| (DayDuration { day, ..Default::default() }, Vec::new()));
        entry.0.builds += 1;
        if r.published {
            entry.0.published += 1;
            if let Some(d) = r.duration_ms {
                entry.1.push(d);
            }
        }
    }
    let duration_per_day = days
        .into_values()
        .map(|(mut d, mut ms)| {
            ms.sort_unstable();
            d.mean_ms = (!ms.is_empty()).then(|| ms.iter().sum::<u64>() / ms.len() as u64);
            d.p95_ms = percentile(&ms, 95.0);
            d
        })
        .collect();
    SeedMetrics { time_to_publish: Percentiles::of(publish_ms), note_effectiveness: n, duration_per_day }
}
