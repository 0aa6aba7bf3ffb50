//! A documentation folder to index, and a cheap deterministic embedder.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)] // shared by several test binaries

use std::path::{Path, PathBuf};
use wright_docs::Embed;

pub const CHAT_MD: &str = r#"---
title: Chat help
tags: [frontmatterword]
---

# Chat

The chat panel is where you talk to the assistant. Type a message and press Enter to send it.

## Adding a tool

Open **Settings › Tools** and press *New tool*. Give the tool a name, describe in one sentence
what it does, and paste the shell command it runs. Save it, and the assistant can call it from
the next conversation on.

```toml
[[tool]]
name = "weather"
command = "curl wttr.in"
```

## Keyboard shortcuts

Press Ctrl+K to search past conversations, Ctrl+N to start a new one and Esc to stop an answer
while it is being written.
"#;

pub const FERRAMENTAS_MD: &str = "# Ferramentas

As ferramentas deixam o assistente fazer coisas no seu computador.

## Adicionar uma ferramenta

Abra **Definições › Ferramentas** e carregue em *Nova ferramenta*. Dê-lhe um nome, descreva numa
frase o que ela faz e cole o comando que executa. Guarde: o assistente passa a poder usá-la a
partir da conversa seguinte.

## Configuração avançada

Cada ferramenta pode ter um limite de tempo e variáveis de ambiente próprias. Um limite de tempo
de trinta segundos protege-o de comandos que nunca terminam.
";

pub const EXPORT_HTML: &str = r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>User guide</title>
<style>body { font-family: sans-serif }</style></head>
<body><nav><a href="/">Home</a> <a href="/export">Export</a></nav>
<h1 id="export">Exporting your work</h1>
<p>Choose <b>File &rsaquo; Export</b> to save a conversation as Markdown or as a PDF document
that you can print or send by e&#8209;mail.</p>
<h2 id="privacy">Privacy</h2>
<p>Conversations are kept only on this computer. Nothing is sent anywhere unless you pick a
hosted model, and you can delete every conversation from Settings &amp; Data.</p>
<script>var secretToken = "do-not-index";</script>
</body></html>
"#;

pub const THEMES_MD: &str = "# Appearance

## Dark mode

Switch between light and dark themes in Settings › Appearance. By default the colours follow
your operating system.
";

pub const BILLING_MD: &str = "# Billing

The built-in model is free to use. Hosted models are charged per token by their provider; set a
monthly spending limit so a long session never surprises you.
";

/// Writes the fixture under `dir/docs` and returns that folder: five documents (one in
/// Portuguese, one HTML, one nested), plus files that must be skipped.
pub fn fixture(dir: &Path) -> PathBuf {
    let docs = dir.join("docs");
    std::fs::create_dir_all(docs.join("guide")).unwrap();
    std::fs::create_dir_all(docs.join("notes")).unwrap();
    std::fs::create_dir_all(docs.join(".hidden")).unwrap();
    std::fs::write(docs.join("chat.md"), CHAT_MD).unwrap();
    std::fs::write(docs.join("ferramentas.md"), FERRAMENTAS_MD).unwrap();
    std::fs::write(docs.join("guide/export.html"), EXPORT_HTML).unwrap();
    std::fs::write(docs.join("themes.md"), THEMES_MD).unwrap();
    std::fs::write(docs.join("notes/billing.md"), BILLING_MD).unwrap();
    // Skipped: too large, not UTF-8, not a document, hidden, a link to outside.
    let big = format!("# Big\n\n{}", "hugeword filler text. ".repeat(110_000));
    assert!(big.len() as u64 > wright_docs::MAX_FILE_BYTES);
    std::fs::write(docs.join("big.md"), big).unwrap();
    std::fs::write(docs.join("latin1.md"), b"# Latin\n\nna\xe7\xe3o latinword\n").unwrap();
    std::fs::write(docs.join("notes.txt"), "textfileword").unwrap();
    std::fs::write(docs.join(".hidden/secret.md"), "# Secret\n\nhiddenword").unwrap();
    std::fs::write(dir.join("outside.md"), "# Outside\n\noutsideword").unwrap();
    std::os::unix::fs::symlink(dir.join("outside.md"), docs.join("outside-link.md")).unwrap();
    docs
}

/// Words hashed into 64 dimensions: texts sharing words are close. Enough to exercise the
/// vector path without a model.
pub struct HashEmbedder {
    pub name: String,
}

impl Default for HashEmbedder {
    fn default() -> Self {
        Self { name: "hash-64".into() }
    }
}

impl Embed for HashEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        Ok(texts.iter().map(|t| hash_vector(t, 64)).collect())
    }
}

pub fn hash_vector(text: &str, dim: usize) -> Vec<f32> {
    let mut v = vec![0.0f32; dim];
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2) {
        let mut h: u64 = 0xcbf29ce484222325;
        for b in word.to_lowercase().bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
        }
        v[(h % dim as u64) as usize] += if h >> 63 == 0 { 1.0 } else { -1.0 };
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.iter().map(|x| x / norm).collect()
}
