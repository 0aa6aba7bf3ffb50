//! The handlers wright ships, put together above the modules that define them, so the
//! handler seam ([`crate::handlers`]) never depends on the handlers built on it.

use crate::codegen::{AiInteraction, CodeGeneration, Planning};
use crate::handlers::{Handlers, NoOp, Validation};
use std::sync::Arc;

impl Handlers {
    /// The handlers wright ships.
    pub fn builtin() -> Self {
        Self::default()
            .with(Arc::new(NoOp))
            .with(Arc::new(Validation))
            .with(Arc::new(CodeGeneration))
            .with(Arc::new(Planning))
            .with(Arc::new(AiInteraction))
    }
}
