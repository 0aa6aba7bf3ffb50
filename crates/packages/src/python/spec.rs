//! One line of a requirements file, or one PEP 508 string of `pyproject.toml`, checked.
//!
//! The host's pip fetches whatever these lines name, so only what cannot send it anywhere but
//! the registry is accepted: a package name, extras, version specifiers, environment markers
//! and `--hash=` options. Everything accepted is rebuilt from its parsed parts
//! ([`Requirement::line`]), so the clean requirements file pip reads never holds a byte of the
//! model's text that was not understood.

use regex::Regex;
use std::sync::LazyLock;

/// PEP 508 names (and extras): letters, digits, `.`, `_`, `-`, starting and ending with a letter
/// or digit.
static NAME: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?").ok());
/// PEP 440 versions (public and local), as pip accepts them.
static VERSION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?(?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?(?:[-_.]?dev[-_.]?[0-9]*)?(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$",
    )
    .ok()
});

/// The variables PEP 508 markers may name.
const MARKER_VARS: &[&str] = &[
    "python_version",
    "python_full_version",
    "os_name",
    "sys_platform",
    "platform_release",
    "platform_system",
    "platform_version",
    "platform_machine",
    "platform_python_implementation",
    "implementation_name",
    "implementation_version",
    "extra",
];

/// Hash algorithms pip checks.
const HASHES: &[&str] = &["sha256", "sha384", "sha512"];

/// Said of every source that is not the registry.
const REGISTRY_ONLY: &str =
    "installs only come from the package registry; name the package and a version instead (`requests==2.32.3`)";

/// A registry package, checked and normalized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Requirement {
    /// The name as PEP 503 normalizes it (`python-dateutil`).
    pub name: String,
    pub extras: Vec<String>,
    /// Comma-separated specifiers without spaces (`>=1.0,<2`).
    pub specifiers: String,
    /// The marker, its tokens separated by single spaces, strings in double quotes.
    pub marker: Option<String>,
    /// `sha256:…` values.
    pub hashes: Vec<String>,
}

impl Requirement {
    /// The requirement as pip reads it, rebuilt from its parts.
    pub fn line(&self) -> String {
        let mut s = self.name.clone();
        if !self.extras.is_empty() {
            s.push_str(&format!("[{}]", self.extras.join(",")));
        }
        s.push_str(&self.specifiers);
        if let Some(m) = &self.marker {
            s.push_str(&format!("; {m}"));
        }
        for h in &self.hashes {
            s.push_str(&format!(" --hash={h}"));
        }
        s
    }
}

/// What a line of a requirements file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    Requirement(Requirement),
    /// `-r FILE` (`constraints: false`) or `-c FILE`, with the path as written.
    Include {
        path: String,
        constraints: bool,
    },
    /// A harmless global option kept in the clean file (`--pre`, `--prefer-binary`,
    /// `--require-hashes`).
    Flag(&'static str),
}

/// PEP 503 normalization: lower case, runs of `-`, `_`, `.` become one `-`.
pub(crate) fn normalize_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
            continue;
        }
        if sep && !out.is_empty() {
            out.push('-');
        }
        sep = false;
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The logical lines of a requirements file: continuations (`\` at the end) joined, comments
/// (`#` at the start or after a space) and blank lines dropped. Each comes with its first
/// line's number.
pub(crate) fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut start = 0;
    for (i, raw) in text.lines().enumerate() {
        if current.is_empty() {
            start = i + 1;
        }
        if let Some(head) = raw.strip_suffix('\\') {
            current.push_str(head);
            continue;
        }
        current.push_str(raw);
        push_line(&mut out, start, std::mem::take(&mut current));
    }
    push_line(&mut out, start, current);
    out
}

fn push_line(out: &mut Vec<(usize, String)>, n: usize, line: String) {
    let cut = line
        .char_indices()
        .find(|&(i, c)| c == '#' && (i == 0 || line[..i].ends_with(char::is_whitespace)))
        .map_or(line.len(), |(i, _)| i);
    let line = line[..cut].trim();
    if !line.is_empty() {
        out.push((n, line.to_string()));
    }
}

/// Check one logical line of a requirements file. The error is the reason, in words.
pub(crate) fn parse_line(line: &str) -> Result<Line, String> {
    let line = line.trim();
    if line.contains("${") {
        return Err(
            "pip would replace `${…}` with a variable from the computer's environment; write the value itself".into()
        );
    }
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let Some(first) = tokens.first() else { return Err("the line is empty".into()) };
    if first.starts_with('-') {
        return parse_option(&tokens);
    }
    let split = tokens.iter().position(|t| t.starts_with('-')).unwrap_or(tokens.len());
    let mut req = parse_requirement(&tokens[..split].join(" "))?;
    let mut rest = tokens[split..].iter();
    while let Some(opt) = rest.next() {
        let (name, value) = match opt.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (*opt, None),
        };
        match name {
            "--hash" => {
                let value = match value {
                    Some(v) => v,
                    None => rest.next().map(|v| v.to_string()).ok_or("`--hash` needs a value (`--hash=sha256:…`)")?,
                };
                req.hashes.push(check_hash(&value)?);
            }
            "--config-settings" | "-C" | "--global-option" | "--install-option" => {
                return Err(format!("`{name}` passes options to a package's build, which wright does not run"));
            }
            other => return Err(format!("`{other}` is not an option a requirement may carry (only `--hash=`)")),
        }
    }
    Ok(Line::Requirement(req))
}

fn check_hash(value: &str) -> Result<String, String> {
    let bad = || format!("`--hash={value}` is not `sha256:` followed by a hex digest");
    let (alg, hex) = value.split_once(':').ok_or_else(bad)?;
    if !HASHES.contains(&alg) || hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(bad());
    }
    Ok(format!("{alg}:{}", hex.to_ascii_lowercase()))
}

/// A line that starts with an option.
fn parse_option(tokens: &[&str]) -> Result<Line, String> {
    let first = tokens[0];
    let (name, attached) = match first.split_once('=') {
        Some((n, v)) if n.starts_with("--") => (n, Some(v)),
        _ => match first.get(..2) {
            // `-rfile`, `-cfile`, `-efolder`: a short option with its value attached.
            Some(short) if !first.starts_with("--") && first.len() > 2 => (short, first.get(2..)),
            _ => (first, None),
        },
    };
    let value = attached.map(str::to_string).or_else(|| (tokens.len() > 1).then(|| tokens[1..].join(" ")));
    let extra = if attached.is_some() { tokens.len() > 1 } else { tokens.len() > 2 };
    let flag = |f: &'static str| {
        if tokens.len() > 1 || attached.is_some() { Err(format!("`{f}` takes no value")) } else { Ok(Line::Flag(f)) }
    };
    match name {
        "-r" | "--requirement" | "-c" | "--constraint" => {
            let Some(path) = value else { return Err(format!("`{name}` needs a file name")) };
            if extra {
                return Err(format!("`{name}` takes one file name"));
            }
            check_include(&path)?;
            Ok(Line::Include { path, constraints: matches!(name, "-c" | "--constraint") })
        }
        "-e" | "--editable" => {
            Err("editable installs (`-e`) build a folder or repository on the computer; list registry packages instead"
                .into())
        }
        "-i" | "--index-url" | "--extra-index-url" | "--no-index" | "-f" | "--find-links" | "--trusted-host" => {
            Err(format!(
                "`{name}` changes where packages come from; wright fetches only from the registry it is configured for"
            ))
        }
        "--no-binary" | "--only-binary" => Err(format!(
            "`{name}` is decided by wright: building a source distribution runs its code on the computer, so only wheels are fetched unless an admin allows source distributions"
        )),
        "--pre" => flag("--pre"),
        "--prefer-binary" => flag("--prefer-binary"),
        "--require-hashes" => flag("--require-hashes"),
        "--hash" => Err("`--hash` belongs on the line of the requirement it checks".into()),
        "--use-feature" | "--use-pep517" | "--no-use-pep517" | "--config-settings" | "-C" | "--global-option"
        | "--install-option" => Err(format!("`{name}` changes how pip builds or installs; wright does not pass it on")),
        other => Err(format!(
            "`{other}` is not a requirements-file option wright accepts (accepted: `--pre`, `--hash=…`, `-r`/`-c` files inside the project)"
        )),
    }
}

/// An include must name a file inside the project: no URL, no `file:`, no absolute or home path.
/// (`..` is resolved by the caller against the including file's folder.)
fn check_include(path: &str) -> Result<(), String> {
    if path.contains("://") || path.starts_with("file:") {
        return Err(format!("`{path}` is not a file inside the project; included files must be"));
    }
    if path.starts_with('/') || path.starts_with('~') || path.contains('\\') {
        return Err(format!("`{path}` is outside the project; included files must be inside it"));
    }
    Ok(())
}

/// Why a string that is not a registry requirement was refused, when it is recognisably a
/// URL, a VCS source or a path.
fn foreign_source(s: &str) -> Option<String> {
    let target = s.split_once('@').map_or(s, |(_, t)| t).trim();
    let lower = target.to_ascii_lowercase();
    let whole = s.trim().to_ascii_lowercase();
    let vcs = ["git+", "hg+", "svn+", "bzr+"];
    if vcs.iter().any(|p| lower.starts_with(p) || whole.starts_with(p)) {
        return Some(format!("version-control sources (`git+…`) are not allowed: {REGISTRY_ONLY}"));
    }
    if lower.starts_with("file:") || whole.starts_with("file:") {
        return Some(format!("local files (`file:`) are not allowed: {REGISTRY_ONLY}"));
    }
    if s.contains("://") {
        return Some(format!("direct URLs are not allowed: {REGISTRY_ONLY}"));
    }
    if s.contains('@') {
        return Some(format!("direct references (`name @ …`) are not allowed: {REGISTRY_ONLY}"));
    }
    // A path is told by what comes before a marker (a marker's own strings are checked there).
    let head = s.split(';').next().unwrap_or(s).trim();
    let archive =
        [".whl", ".tar.gz", ".zip", ".tar.bz2", ".tgz"].iter().any(|e| head.to_ascii_lowercase().ends_with(e));
    if head.starts_with(['.', '/', '~']) || head.contains(['/', '\\']) || archive {
        return Some(format!(
            "local paths and archives are not allowed, inside the project or outside it: {REGISTRY_ONLY}"
        ));
    }
    None
}

/// Check a PEP 508 requirement naming a registry package.
pub(crate) fn parse_requirement(s: &str) -> Result<Requirement, String> {
    let s = s.trim();
    if s.contains("${") {
        return Err(
            "pip would replace `${…}` with a variable from the computer's environment; write the value itself".into()
        );
    }
    if let Some(why) = foreign_source(s) {
        return Err(why);
    }
    let (name_re, version_re) = match (NAME.as_ref(), VERSION.as_ref()) {
        (Some(n), Some(v)) => (n, v),
        _ => return Err("the requirement patterns could not be built".into()),
    };
    let Some(m) = name_re.find(s) else {
        return Err("a requirement starts with a package name (letters, digits, `.`, `_`, `-`)".into());
    };
    let name = normalize_name(m.as_str());
    let mut rest = s[m.end()..].trim_start();
    let mut extras = Vec::new();
    if let Some(r) = rest.strip_prefix('[') {
        let (inside, after) = r.split_once(']').ok_or("the extras' `[` is not closed by `]`")?;
        for e in inside.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if name_re.find(e).is_none_or(|m| m.end() != e.len()) {
                return Err(format!("`{e}` is not a valid extra name"));
            }
            extras.push(normalize_name(e));
        }
        extras.sort();
        extras.dedup();
        rest = after.trim_start();
    }
    let (spec_text, marker_text) = match rest.split_once(';') {
        Some((a, b)) => (a.trim(), Some(b.trim())),
        None => (rest.trim(), None),
    };
    let spec_text = match spec_text.strip_prefix('(') {
        Some(inner) => inner.strip_suffix(')').ok_or("the specifiers' `(` is not closed by `)`")?.trim(),
        None => spec_text,
    };
    let mut specs = Vec::new();
    if !spec_text.is_empty() {
        for one in spec_text.split(',') {
            specs.push(parse_specifier(one.trim(), version_re)?);
        }
    }
    let marker = match marker_text {
        Some(m) => Some(parse_marker(m)?),
        None => None,
    };
    Ok(Requirement { name, extras, specifiers: specs.join(","), marker, hashes: Vec::new() })
}

fn parse_specifier(one: &str, version_re: &Regex) -> Result<String, String> {
    const OPS: &[&str] = &["===", "~=", "==", "!=", "<=", ">=", "<", ">"];
    let Some(op) = OPS.iter().find(|op| one.starts_with(**op)) else {
        return Err(format!(
            "`{one}` is not a version specifier (`==1.2`, `>=1.0`, `~=2.1`); after the name come extras, specifiers and a `;` marker only"
        ));
    };
    let version = one[op.len()..].trim();
    let ok = match *op {
        "===" => !version.is_empty() && version.chars().all(|c| c.is_ascii_alphanumeric() || "._+!-".contains(c)),
        "==" | "!=" => version_re.is_match(version.strip_suffix(".*").unwrap_or(version)),
        _ => version_re.is_match(version),
    };
    if !ok {
        return Err(format!("`{version}` is not a version (as in `{op}1.2.3`)"));
    }
    Ok(format!("{op}{version}"))
}

/// Marker tokens.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Open,
    Close,
    And,
    Or,
    Op(String),
    Var(String),
    Str(String),
}

fn marker_tokens(m: &str) -> Result<Vec<Tok>, String> {
    let mut toks = Vec::new();
    let mut chars = m.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '(' || c == ')' {
            chars.next();
            toks.push(if c == '(' { Tok::Open } else { Tok::Close });
        } else if c == '"' || c == '\'' {
            chars.next();
            let end = m[i + 1..].find(c).ok_or("a quoted string in the marker is not closed")?;
            let content = &m[i + 1..i + 1 + end];
            if !content.chars().all(|c| c.is_ascii_alphanumeric() || " ._*+!,-".contains(c)) {
                return Err(format!("the marker string \"{content}\" holds characters markers do not need"));
            }
            toks.push(Tok::Str(content.to_string()));
            while chars.peek().is_some_and(|&(j, _)| j <= i + 1 + end) {
                chars.next();
            }
        } else if "<>=!~".contains(c) {
            let op: String = m[i..].chars().take_while(|c| "<>=!~".contains(*c)).collect();
            if !["===", "==", "!=", "<=", ">=", "<", ">", "~="].contains(&op.as_str()) {
                return Err(format!("`{op}` is not a marker operator"));
            }
            for _ in 0..op.len() {
                chars.next();
            }
            toks.push(Tok::Op(op));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let word: String = m[i..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            for _ in 0..word.len() {
                chars.next();
            }
            toks.push(match word.as_str() {
                "and" => Tok::And,
                "or" => Tok::Or,
                "in" => Tok::Op("in".into()),
                "not" => Tok::Op("not".into()),
                v if MARKER_VARS.contains(&v) => Tok::Var(word),
                _ => {
                    return Err(format!("`{word}` is not a marker variable (like `python_version` or `sys_platform`)"));
                }
            });
        } else {
            return Err(format!("`{c}` cannot appear in an environment marker"));
        }
    }
    // `not in` is one operator.
    let mut merged: Vec<Tok> = Vec::with_capacity(toks.len());
    let mut it = toks.into_iter().peekable();
    while let Some(t) = it.next() {
        if t == Tok::Op("not".into()) {
            if it.peek() != Some(&Tok::Op("in".into())) {
                return Err("`not` in a marker must be followed by `in`".into());
            }
            it.next();
            merged.push(Tok::Op("not in".into()));
        } else {
            merged.push(t);
        }
    }
    Ok(merged)
}

/// Check an environment marker (PEP 508 grammar) and give it back normalized.
fn parse_marker(m: &str) -> Result<String, String> {
    let toks = marker_tokens(m)?;
    if toks.is_empty() {
        return Err("the `;` is followed by no environment marker".into());
    }
    let mut pos = 0;
    marker_or(&toks, &mut pos, 0)?;
    if pos != toks.len() {
        return Err("the environment marker does not parse (unexpected words after it)".into());
    }
    let words: Vec<String> = toks
        .iter()
        .map(|t| match t {
            Tok::Open => "(".into(),
            Tok::Close => ")".into(),
            Tok::And => "and".into(),
            Tok::Or => "or".into(),
            Tok::Op(o) | Tok::Var(o) => o.clone(),
            Tok::Str(s) => format!("\"{s}\""),
        })
        .collect();
    Ok(words.join(" ").replace("( ", "(").replace(" )", ")"))
}

const MARKER_DEPTH: usize = 32;

fn marker_or(t: &[Tok], pos: &mut usize, depth: usize) -> Result<(), String> {
    marker_and(t, pos, depth)?;
    while t.get(*pos) == Some(&Tok::Or) {
        *pos += 1;
        marker_and(t, pos, depth)?;
    }
    Ok(())
}

fn marker_and(t: &[Tok], pos: &mut usize, depth: usize) -> Result<(), String> {
    marker_atom(t, pos, depth)?;
    while t.get(*pos) == Some(&Tok::And) {
        *pos += 1;
        marker_atom(t, pos, depth)?;
    }
    Ok(())
}

fn marker_atom(t: &[Tok], pos: &mut usize, depth: usize) -> Result<(), String> {
    if depth > MARKER_DEPTH {
        return Err("the environment marker is nested too deeply".into());
    }
    if t.get(*pos) == Some(&Tok::Open) {
        *pos += 1;
        marker_or(t, pos, depth + 1)?;
        if t.get(*pos) != Some(&Tok::Close) {
            return Err("a `(` in the environment marker is not closed".into());
        }
        *pos += 1;
        return Ok(());
    }
    let value = |p: usize| matches!(t.get(p), Some(Tok::Var(_) | Tok::Str(_)));
    if value(*pos) && matches!(t.get(*pos + 1), Some(Tok::Op(_))) && value(*pos + 2) {
        *pos += 3;
        Ok(())
    } else {
        Err("the environment marker does not parse (expected `variable op \"value\"`, like `python_version >= \"3.8\"`)".into())
    }
}
