//! Online experiments (docs/experiments.md): drafts, the one running experiment, and the
//! outcomes of the builds each arm got.
//!
//! An experiment is frozen once started: its variants, weights, salt and unit never change, so
//! a build's variant can always be recomputed from the row; a change makes a new experiment.
//! The unique index `experiments_one_running` keeps a second one from running, even between
//! two servers. Both backends run the same statements ([`impl_experiment_store!`]).

use crate::{Result, StoreError};
use async_trait::async_trait;
use wright_experiments::{Metric, Outcome, Unit, Variant};

/// Where an experiment stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExperimentState {
    Draft,
    Running,
    Stopped,
}

impl ExperimentState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Running => "running",
            Self::Stopped => "stopped",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "draft" => Some(Self::Draft),
            "running" => Some(Self::Running),
            "stopped" => Some(Self::Stopped),
            _ => None,
        }
    }
}

/// A stored experiment.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Experiment {
    pub id: String,
    pub name: String,
    pub salt: String,
    pub unit: Unit,
    pub variants: Vec<Variant>,
    pub primary: Metric,
    pub guardrails: Vec<Metric>,
    /// Builds per arm at which the primary metric's test is read.
    pub horizon: u32,
    pub state: ExperimentState,
    /// The variant chosen when it was stopped, if any (recorded; see docs/experiments.md).
    pub promoted: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub stopped_at: Option<String>,
}

/// What a new (draft) experiment is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct NewExperiment {
    pub name: String,
    pub unit: Unit,
    pub variants: Vec<Variant>,
    pub primary: Metric,
    pub guardrails: Vec<Metric>,
    pub horizon: u32,
}

#[async_trait]
pub trait ExperimentStore: Send + Sync {
    /// A new draft; refused when it has fewer than two variants, a weight that is not
    /// positive, two variants of one name, an empty horizon, or a name already taken.
    async fn create_experiment(&self, new: &NewExperiment) -> Result<Experiment>;
    /// Every experiment, newest first.
    async fn experiments(&self) -> Result<Vec<Experiment>>;
    /// The experiment whose id or name is `id_or_name`.
    async fn experiment(&self, id_or_name: &str) -> Result<Experiment>;
    /// Start a draft; refused when another is running or this one is not a draft.
    async fn start_experiment(&self, id: &str) -> Result<Experiment>;
    /// Stop a running experiment, recording `promote` (one of its variants) if given.
    async fn stop_experiment(&self, id: &str, promote: Option<&str>) -> Result<Experiment>;
    /// The running experiment, if one is.
    async fn running_experiment(&self) -> Result<Option<Experiment>>;
    /// Record the experiment and variant build `build_id` runs under (at enqueue).
    async fn set_build_variant(&self, build_id: &str, experiment_id: &str, variant: &str) -> Result<()>;
    /// The experiment id and variant build `build_id` was counted under, if any.
    async fn build_variant(&self, build_id: &str) -> Result<Option<(String, String)>>;
    /// The finished builds of experiment `id`, per variant (in the experiment's order, every
    /// variant present even without builds), as outcomes with the owner's rating if any.
    async fn arm_outcomes(&self, id: &str) -> Result<Vec<(String, Vec<Outcome>)>>;
}

/// A new draft's checks, the same rules [`wright_experiments::assign`] applies.
pub fn check_new(new: &NewExperiment) -> Result<()> {
    let name_ok = !new.name.is_empty()
        && new.name.len() <= 64
        && new.name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !name_ok {
        return Err(StoreError::Invalid("experiment names are 1 to 64 letters, digits, `-`, `_` or `.`".into()));
    }
    if new.horizon == 0 {
        return Err(StoreError::Invalid("the horizon (builds per arm) must be at least 1".into()));
    }
    if let Some(v) = new.variants.iter().find(|v| v.name.trim().is_empty()) {
        return Err(StoreError::Invalid(format!("a variant needs a name (weight {})", v.weight)));
    }
    wright_experiments::assign(&new.name, "", "", &new.variants).map_err(|e| StoreError::Invalid(e.to_string()))?;
    Ok(())
}

/// An `experiments` row as an [`Experiment`].
pub(crate) fn experiment_row(r: &impl crate::rows::Cols) -> Result<Experiment> {
    let corrupt = |what: &str, v: &str| StoreError::Corrupt(format!("experiment {what} `{v}`"));
    let unit = r.text("unit")?;
    let state = r.text("state")?;
    let primary = r.text("primary_metric")?;
    Ok(Experiment {
        id: r.text("id")?,
        name: r.text("name")?,
        salt: r.text("salt")?,
        unit: Unit::parse(&unit).ok_or_else(|| corrupt("unit", &unit))?,
        variants: serde_json::from_str(&r.text("variants")?).map_err(|e| corrupt("variants", &e.to_string()))?,
        primary: Metric::parse(&primary).ok_or_else(|| corrupt("metric", &primary))?,
        guardrails: serde_json::from_str(&r.text("guardrails")?).map_err(|e| corrupt("guardrails", &e.to_string()))?,
        horizon: u32::try_from(r.int("horizon")?).unwrap_or(u32::MAX),
        state: ExperimentState::parse(&state).ok_or_else(|| corrupt("state", &state))?,
        promoted: r.opt_text("promoted")?,
        created_at: r.text("created_at")?,
        started_at: r.opt_text("started_at")?,
        stopped_at: r.opt_text("stopped_at")?,
    })
}

/// Whether a database error is the `experiments_one_running` index refusing a second one.
pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

/// A finished build's row (`status`, `fix_attempts`, `cost_usd`, `duration_ms`, `rating`) as
/// an [`Outcome`].
pub(crate) fn outcome(
    status: &str,
    fix_attempts: i64,
    cost_usd: f64,
    duration_ms: Option<i64>,
    rating: Option<i64>,
) -> Outcome {
    Outcome {
        published: status == "published",
        fix_attempts: u32::try_from(fix_attempts).unwrap_or(0),
        cost_usd,
        duration_secs: duration_ms.unwrap_or(0) as f64 / 1000.0,
        rating: rating.map(|v| v > 0),
    }
}

/// The statements of [`ExperimentStore`], for a store type with a `pool` and a function that
/// turns a statement's `$N` parameters into its backend's.
macro_rules! impl_experiment_store {
    ($store:ty, $sql:path) => {
        #[async_trait::async_trait]
        impl $crate::experiments::ExperimentStore for $store {
            async fn create_experiment(
                &self,
                new: &$crate::experiments::NewExperiment,
            ) -> $crate::Result<$crate::experiments::Experiment> {
                $crate::experiments::check_new(new)?;
                let taken: Option<String> = sqlx::query_scalar(&$sql("SELECT id FROM experiments WHERE name = $1"))
                    .bind(&new.name)
                    .fetch_optional(&self.pool)
                    .await?;
                if taken.is_some() {
                    return Err($crate::StoreError::Invalid(format!(
                        "an experiment named `{}` already exists; a change makes a new experiment, under a new name",
                        new.name
                    )));
                }
                let id = $crate::new_id("x");
                sqlx::query(&$sql(
                    "INSERT INTO experiments (id, name, salt, unit, variants, primary_metric, guardrails, horizon, \
                     state, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'draft', $9)",
                ))
                .bind(&id)
                .bind(&new.name)
                .bind($crate::new_id("s"))
                .bind(new.unit.as_str())
                .bind($crate::rows::json(&new.variants)?)
                .bind(new.primary.as_str())
                .bind($crate::rows::json(&new.guardrails)?)
                .bind(i64::from(new.horizon))
                .bind($crate::now())
                .execute(&self.pool)
                .await?;
                self.experiment(&id).await
            }

            async fn experiments(&self) -> $crate::Result<Vec<$crate::experiments::Experiment>> {
                let rows = sqlx::query("SELECT * FROM experiments ORDER BY created_at DESC, id DESC")
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map($crate::experiments::experiment_row).collect()
            }

            async fn experiment(&self, id_or_name: &str) -> $crate::Result<$crate::experiments::Experiment> {
                let row = sqlx::query(&$sql(
                    "SELECT * FROM experiments WHERE id = $1 OR name = $1 ORDER BY (id = $1) DESC LIMIT 1",
                ))
                .bind(id_or_name)
                .fetch_optional(&self.pool)
                .await?;
                match row {
                    Some(r) => $crate::experiments::experiment_row(&r),
                    None => Err($crate::StoreError::NotFound(format!("experiment `{id_or_name}`"))),
                }
            }

            async fn start_experiment(&self, id: &str) -> $crate::Result<$crate::experiments::Experiment> {
                let exp = self.experiment(id).await?;
                if exp.state != $crate::experiments::ExperimentState::Draft {
                    return Err($crate::StoreError::Invalid(format!(
                        "experiment `{}` is {}; only a draft can be started (a change makes a new experiment)",
                        exp.name,
                        exp.state.as_str()
                    )));
                }
                let refused = |other: String| {
                    $crate::StoreError::Invalid(format!(
                        "experiment `{other}` is running; stop it first (one experiment runs at a time)"
                    ))
                };
                if let Some(other) = self.running_experiment().await? {
                    return Err(refused(other.name));
                }
                let done = sqlx::query(&$sql(
                    "UPDATE experiments SET state = 'running', started_at = $2 WHERE id = $1 AND state = 'draft'",
                ))
                .bind(&exp.id)
                .bind($crate::now())
                .execute(&self.pool)
                .await;
                match done {
                    Err(e) if $crate::experiments::is_unique_violation(&e) => {
                        let other = self.running_experiment().await?.map(|o| o.name).unwrap_or_default();
                        return Err(refused(other));
                    }
                    Err(e) => return Err(e.into()),
                    Ok(_) => {}
                }
                self.experiment(&exp.id).await
            }

            async fn stop_experiment(
                &self,
                id: &str,
                promote: Option<&str>,
            ) -> $crate::Result<$crate::experiments::Experiment> {
                let exp = self.experiment(id).await?;
                if exp.state != $crate::experiments::ExperimentState::Running {
                    return Err($crate::StoreError::Invalid(format!(
                        "experiment `{}` is {}; only a running one can be stopped",
                        exp.name,
                        exp.state.as_str()
                    )));
                }
                if let Some(p) = promote
                    && !exp.variants.iter().any(|v| v.name == p)
                {
                    let names: Vec<&str> = exp.variants.iter().map(|v| v.name.as_str()).collect();
                    return Err($crate::StoreError::Invalid(format!(
                        "`{p}` is not a variant of `{}` (its variants: {})",
                        exp.name,
                        names.join(", ")
                    )));
                }
                sqlx::query(&$sql(
                    "UPDATE experiments SET state = 'stopped', stopped_at = $2, promoted = $3 \
                     WHERE id = $1 AND state = 'running'",
                ))
                .bind(&exp.id)
                .bind($crate::now())
                .bind(promote)
                .execute(&self.pool)
                .await?;
                self.experiment(&exp.id).await
            }

            async fn running_experiment(&self) -> $crate::Result<Option<$crate::experiments::Experiment>> {
                let row = sqlx::query("SELECT * FROM experiments WHERE state = 'running' LIMIT 1")
                    .fetch_optional(&self.pool)
                    .await?;
                row.as_ref().map($crate::experiments::experiment_row).transpose()
            }

            async fn set_build_variant(
                &self,
                build_id: &str,
                experiment_id: &str,
                variant: &str,
            ) -> $crate::Result<()> {
                let done = sqlx::query(&$sql("UPDATE builds SET experiment_id = $2, variant = $3 WHERE id = $1"))
                    .bind(build_id)
                    .bind(experiment_id)
                    .bind(variant)
                    .execute(&self.pool)
                    .await?;
                if done.rows_affected() == 0 {
                    return Err($crate::StoreError::NotFound(format!("build `{build_id}`")));
                }
                Ok(())
            }

            async fn build_variant(&self, build_id: &str) -> $crate::Result<Option<(String, String)>> {
                use $crate::rows::Cols;
                let row = sqlx::query(&$sql("SELECT experiment_id, variant FROM builds WHERE id = $1"))
                    .bind(build_id)
                    .fetch_optional(&self.pool)
                    .await?
                    .ok_or_else(|| $crate::StoreError::NotFound(format!("build `{build_id}`")))?;
                Ok(match (row.opt_text("experiment_id")?, row.opt_text("variant")?) {
                    (Some(e), Some(v)) => Some((e, v)),
                    _ => None,
                })
            }

            async fn arm_outcomes(&self, id: &str) -> $crate::Result<Vec<(String, Vec<wright_experiments::Outcome>)>> {
                use $crate::rows::Cols;
                let exp = self.experiment(id).await?;
                let rows = sqlx::query(&$sql(
                    "SELECT b.variant, b.status, b.fix_attempts, b.cost_usd, b.duration_ms, \
                     CAST(f.value AS BIGINT) AS rating FROM builds b \
                     LEFT JOIN build_feedback f ON f.build_id = b.id \
                     WHERE b.experiment_id = $1 AND b.status IN ('published', 'failed') \
                     ORDER BY b.started_at, b.id",
                ))
                .bind(&exp.id)
                .fetch_all(&self.pool)
                .await?;
                let mut arms: Vec<(String, Vec<wright_experiments::Outcome>)> =
                    exp.variants.iter().map(|v| (v.name.clone(), vec![])).collect();
                for r in &rows {
                    let variant = r.opt_text("variant")?.unwrap_or_default();
                    let o = $crate::experiments::outcome(
                        &r.text("status")?,
                        r.int("fix_attempts")?,
                        r.real("cost_usd")?,
                        r.opt_int("duration_ms")?,
                        r.opt_int("rating")?,
                    );
                    if let Some(arm) = arms.iter_mut().find(|(n, _)| *n == variant) {
                        arm.1.push(o);
                    }
                }
                Ok(arms)
            }
        }
    };
}
pub(crate) use impl_experiment_store;
