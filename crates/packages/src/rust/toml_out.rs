//! Writing the clean manifests wright makes for the host's cargo.
//!
//! The workspace's `toml` is built without its writer, and the manifests wright writes hold
//! only checked names, versions, flags and lists, so a small emitter does: keys sorted (the
//! text is also hashed into the cache key, so the same declarations always give the same
//! text), every string escaped, every table its own `[section]`.

use toml::{Table, Value};

/// A whole document: plain values first, then each table as a `[section]`.
pub(crate) fn document(table: &Table) -> String {
    let mut out = String::new();
    section(&mut out, &[], table);
    out
}

fn section(out: &mut String, path: &[String], table: &Table) {
    let mut keys: Vec<&String> = table.keys().collect();
    keys.sort();
    let (tables, plain): (Vec<&String>, Vec<&String>) = keys.into_iter().partition(|k| table[*k].is_table());
    if !path.is_empty() && (!plain.is_empty() || tables.is_empty()) {
        out.push('[');
        out.push_str(&path.iter().map(|k| key(k)).collect::<Vec<_>>().join("."));
        out.push_str("]\n");
    }
    for k in plain {
        out.push_str(&key(k));
        out.push_str(" = ");
        out.push_str(&inline(&table[k]));
        out.push('\n');
    }
    for k in tables {
        if let Value::Table(t) = &table[k] {
            let mut p = path.to_vec();
            p.push(k.clone());
            section(out, &p, t);
        }
    }
}

/// A key, bare when TOML allows it.
pub(crate) fn key(k: &str) -> String {
    let bare = !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare { k.to_string() } else { string(k) }
}

/// A value on one line (tables inline), as the model wrote it and a person reads it.
pub(crate) fn inline(v: &Value) -> String {
    match v {
        Value::String(s) => string(s),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::Datetime(d) => d.to_string(),
        Value::Array(items) => format!("[{}]", items.iter().map(inline).collect::<Vec<_>>().join(", ")),
        Value::Table(t) => {
            let mut keys: Vec<&String> = t.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys.into_iter().map(|k| format!("{} = {}", key(k), inline(&t[k]))).collect();
            if parts.is_empty() { "{}".to_string() } else { format!("{{ {} }}", parts.join(", ")) }
        }
    }
}

fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_document_reads_back_as_itself() {
        let text = r#"
            [package]
            name = "a"
            [dependencies]
            itoa = "1"
            serde = { version = "1", features = ["derive"], "default-features" = false }
            [target.'cfg(unix)'.dependencies]
            libc = "0.2"
            [workspace]
            odd = "a\"b\\c\u0001"
        "#;
        let t: Table = toml::from_str(text).unwrap();
        let written = document(&t);
        let back: Table = toml::from_str(&written).unwrap();
        assert_eq!(back, t, "{written}");
        assert_eq!(document(&back), written, "the text is stable");
    }
}
