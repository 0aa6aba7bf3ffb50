//! Online experiments (docs/experiments.md): the variant a new build is put in when it is
//! queued, and the admin API that creates, starts, stops and reports experiments.

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use wright_experiments::{Assignment, Unit};

/// The running experiment's variant for a new build of `owner` whose id is `build`: by its
/// owner (a person keeps one variant) or by the build, as the experiment's unit says. `None`
/// when no experiment runs.
pub(crate) async fn assign_build(state: &AppState, owner: &str, build: &str) -> ApiResult<Option<Assignment>> {
    let Some(exp) = state.store.running_experiment().await? else {
        return Ok(None);
    };
    let unit = match exp.unit {
        Unit::User => owner,
        Unit::Build => build,
    };
    let i = wright_experiments::assign(&exp.id, &exp.salt, unit, &exp.variants)
        .map_err(|e| ApiError::internal(format!("experiment `{}` cannot assign: {e}", exp.name)))?;
    let variant = exp.variants.get(i).cloned().ok_or_else(|| ApiError::internal("assignment out of range"))?;
    Ok(Some(Assignment { experiment: exp.id, variant }))
}
