//! The seeds' metrics in `/metrics`, read from the store when scraped (the last 30 days of
//! finished builds): `wright_time_to_publish_seconds{quantile}` (request accepted →
//! PUBLISHED), `wright_note_confidence{outcome}` and `wright_publish_rate{notes}` (note
//! effectiveness), and `wright_build_duration_day_seconds{day,stat}` (published builds' mean
//! and p95 duration per UTC day).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;
use wright_store::SeedMetrics;

type FloatGauge = Gauge<f64, AtomicU64>;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct QuantileLabels {
    pub quantile: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct NotesLabels {
    pub notes: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DayLabels {
    pub day: String,
    pub stat: &'static str,
}

/// The gauges, registered once with the server's registry.
#[derive(Clone)]
pub struct SeedGauges {
    time_to_publish: Family<QuantileLabels, FloatGauge>,
    note_confidence: Family<OutcomeLabels, FloatGauge>,
    publish_rate: Family<NotesLabels, FloatGauge>,
    duration_day: Family<DayLabels, FloatGauge>,
}

fn secs(ms: Option<u64>) -> Option<f64> {
    ms.map(|m| m as f64 / 1000.0)
}

fn rate(ok: u64, all: u64) -> Option<f64> {
    (all > 0).then(|| ok as f64 / all as f64)
}

impl SeedGauges {
    pub fn register(r: &mut Registry) -> Self {
        let g = Self {
            time_to_publish: Family::default(),
            note_confidence: Family::default(),
            publish_rate: Family::default(),
            duration_day: Family::default(),
        };
        r.register(
            "wright_time_to_publish_seconds",
            "Published builds of the last 30 days: request accepted to PUBLISHED, by quantile",
            g.time_to_publish.clone(),
        );
        r.register(
            "wright_note_confidence",
            "Average confidence of the notes builds of the last 30 days used, by how they ended",
            g.note_confidence.clone(),
        );
        r.register(
            "wright_publish_rate",
            "Share of finished builds of the last 30 days that published, with notes in the prompt or without",
            g.publish_rate.clone(),
        );
        r.register(
            "wright_build_duration_day_seconds",
            "Published builds' duration per UTC day of the last 30 days (mean, p95)",
            g.duration_day.clone(),
        );
        g
    }

    /// Show `m` (figures with no builds behind them are left out).
    pub fn set(&self, m: &SeedMetrics) {
        self.time_to_publish.clear();
        let t = &m.time_to_publish;
        for (quantile, v) in [("0.5", t.p50_ms), ("0.95", t.p95_ms), ("0.99", t.p99_ms)] {
            if let Some(v) = secs(v) {
                self.time_to_publish.get_or_create(&QuantileLabels { quantile }).set(v);
            }
        }
        self.note_confidence.clear();
        let n = &m.note_effectiveness;
        for (outcome, v) in
            [("published", n.published_confidence), ("failed", n.failed_confidence), ("all", n.confidence)]
        {
            if let Some(v) = v {
                self.note_confidence.get_or_create(&OutcomeLabels { outcome }).set(v);
            }
        }
        self.publish_rate.clear();
        for (notes, v) in [
            ("used", rate(n.published_with_notes, n.builds_with_notes)),
            ("none", rate(n.published_without_notes, n.builds_without_notes)),
        ] {
            if let Some(v) = v {
                self.publish_rate.get_or_create(&NotesLabels { notes }).set(v);
            }
        }
        self.duration_day.clear();
        for d in &m.duration_per_day {
            for (stat, v) in [("mean", d.mean_ms), ("p95", d.p95_ms)] {
                if let Some(v) = secs(v) {
                    self.duration_day.get_or_create(&DayLabels { day: d.day.clone(), stat }).set(v);
                }
            }
        }
    }
}
