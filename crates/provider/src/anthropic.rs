//! Anthropic Messages API adapter (in progress).
