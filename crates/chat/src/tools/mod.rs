//! The built-in chat tools. Adding one: a type implementing [`crate::ChatTool`] in a file here,
//! and one line in [`crate::builtin_tools`] (`docs/chat.md`, "Adding a tool").

pub mod card_check;
pub mod code;
pub(crate) mod cues;
pub mod diagram;
pub mod flashcards;
pub mod quiz;
pub mod video;
