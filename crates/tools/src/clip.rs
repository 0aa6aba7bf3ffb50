//! Tool output cut to a size a model can take, saying how much was cut.

/// Keep the start of `s` up to `max` bytes on a character boundary, saying how much was cut.
pub fn clip(s: &str, max: usize) -> String {
    let kept = wright_text::head(s, max, wright_text::Unit::Bytes);
    if kept.len() == s.len() {
        return s.to_string();
    }
    format!("{kept}… [{} more bytes cut]", s.len() - kept.len())
}

/// Keep the end of `s` up to `max` bytes, saying how much was cut.
pub fn clip_tail(s: &str, max: usize) -> String {
    let kept = wright_text::tail(s, max, wright_text::Unit::Bytes);
    if kept.len() == s.len() {
        return s.to_string();
    }
    format!("[{} earlier bytes cut] …{kept}", s.len() - kept.len())
}
