//! Reading `go.mod` and `go.sum` as untrusted text: every directive is checked before the host's
//! `go` sees any of it, and what passes is rewritten into a clean `go.mod` of wright's making.
//!
//! Accepted: `module`, `go` (a release this machine's Go understands), `require` and `exclude`
//! of module paths at semantic versions (pseudo-versions included), `replace` by another module
//! at a version or by a folder inside the project, `retract` (ignored: it only concerns the
//! module's own users). Refused, one [`Refusal`] each: anything that would make the host's
//! `go` fetch from somewhere else than the configured module proxy, read files outside the
//! project, or download a toolchain (`toolchain`, a `go` line newer than this machine's Go).

use crate::types::Refusal;

/// One `replace` that passed the checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// Another module at an exact version.
    Module { path: String, version: String },
    /// A folder of the project, as a clean relative path (`lib/greet`).
    Local(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Replace {
    pub from: String,
    pub from_version: Option<String>,
    pub to: Target,
}

/// What a `go.mod` declares, once checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GoMod {
    pub module: Option<String>,
    /// The `go` line's version (`1.19`), when there is one.
    pub go: Option<String>,
    /// `(module path, version)`, as declared.
    pub requires: Vec<(String, String)>,
    pub excludes: Vec<(String, String)>,
    pub replaces: Vec<Replace>,
}

impl GoMod {
    /// A `go.mod` holding only what was checked, in a stable order, under a placeholder module
    /// name: what the host's `go` reads, and what the cache key is made of.
    pub fn clean(&self, module: &str) -> String {
        let mut out = format!("module {module}\n");
        if let Some(go) = &self.go {
            out.push_str(&format!("\ngo {go}\n"));
        }
        let mut requires = self.requires.clone();
        requires.sort();
        requires.dedup();
        if !requires.is_empty() {
            out.push_str("\nrequire (\n");
            for (path, version) in &requires {
                out.push_str(&format!("\t{path} {version}\n"));
            }
            out.push_str(")\n");
        }
        let mut excludes = self.excludes.clone();
        excludes.sort();
        excludes.dedup();
        for (path, version) in &excludes {
            out.push_str(&format!("\nexclude {path} {version}\n"));
        }
        let mut replaces: Vec<String> = self
            .replaces
            .iter()
            .map(|r| {
                let from = match &r.from_version {
                    Some(v) => format!("{} {v}", r.from),
                    None => r.from.clone(),
                };
                match &r.to {
                    Target::Module { path, version } => format!("replace {from} => {path} {version}"),
                    Target::Local(dir) => format!("replace {from} => ./{dir}"),
                }
            })
            .collect();
        replaces.sort();
        replaces.dedup();
        for r in replaces {
            out.push_str(&format!("\n{r}\n"));
        }
        out
    }
}

/// Parse and check a `go.mod`'s text. `file` names it in refusals (`go.mod`, `lib/go.mod`).
/// Never panics, whatever the text.
pub(crate) fn parse(text: &str, file: &str) -> (GoMod, Vec<Refusal>) {
    let mut m = GoMod::default();
    let mut refusals = Vec::new();
    let mut block: Option<(String, usize)> = None;
    for (n, raw) in text.lines().enumerate() {
        let number = n + 1;
        let spec = raw.trim().to_string();
        let refuse = |reason: String| Refusal { file: file.to_string(), spec: spec.clone(), reason };
        let tokens = match tokenize(raw) {
            Ok(t) => t,
            Err(why) => {
                refusals.push(refuse(format!("is not a valid go.mod line (line {number}: {why})")));
                continue;
            }
        };
        if tokens.is_empty() {
            continue;
        }
        if let Some((verb, _)) = &block {
            if tokens.len() == 1 && tokens[0] == ")" {
                block = None;
                continue;
            }
            let verb = verb.clone();
            if let Err(reason) = statement(&mut m, &verb, &tokens) {
                refusals.push(refuse(format!("{reason} (line {number}, in the `{verb}` block)")));
            }
            continue;
        }
        let verb = tokens[0].as_str();
        let args = &tokens[1..];
        if args.len() == 1 && args[0] == "(" && matches!(verb, "require" | "replace" | "exclude" | "retract") {
            block = Some((verb.to_string(), number));
            continue;
        }
        let result = match verb {
            "module" => match args {
                [path] if !path.is_empty() && !path.contains(char::is_whitespace) => {
                    m.module = Some(path.clone());
                    Ok(())
                }
                _ => Err("is not a valid `module` line: write `module` and one module path".to_string()),
            },
            "go" => match args {
                [v] if go_version(v).is_some() => {
                    m.go = Some(v.clone());
                    Ok(())
                }
                _ => Err("is not a valid `go` line: write a Go release like `go 1.19`".to_string()),
            },
            "toolchain" => Err("asks for a specific Go toolchain, which `go` would try to download; remove the \
                                `toolchain` line (wright builds with this machine's Go)"
                .to_string()),
            "require" | "replace" | "exclude" | "retract" => statement(&mut m, verb, args),
            _ => Err(format!(
                "is not a go.mod directive wright accepts (`{verb}`); use module, go, require, replace, exclude"
            )),
        };
        if let Err(reason) = result {
            refusals.push(refuse(format!("{reason} (line {number})")));
        }
    }
    if let Some((verb, line)) = block {
        refusals.push(Refusal {
            file: file.to_string(),
            spec: format!("{verb} ("),
            reason: format!("opens a block on line {line} that is never closed with `)`"),
        });
    }
    if m.module.is_none() && refusals.is_empty() {
        refusals.push(Refusal {
            file: file.to_string(),
            spec: String::new(),
            reason: "has no `module` line; start it with `module example.com/yourproject`".to_string(),
        });
    }
    (m, refusals)
}

/// One `require`/`replace`/`exclude`/`retract` entry (the verb already taken off).
fn statement(m: &mut GoMod, verb: &str, args: &[String]) -> Result<(), String> {
    match verb {
        "require" | "exclude" => {
            let [path, version] = args else {
                return Err(format!(
                    "is not a valid `{verb}` entry: write a module path and a version, like \
                                    `github.com/google/uuid v1.6.0`"
                ));
            };
            check_module_path(path)?;
            check_version(path, version)?;
            let list = if verb == "require" { &mut m.requires } else { &mut m.excludes };
            list.push((path.clone(), version.clone()));
            Ok(())
        }
        "replace" => {
            let arrow = args.iter().position(|a| a == "=>").ok_or_else(|| {
                "is not a valid `replace`: write `old/module => new/module v1.2.3` or `old/module => ./folder`"
                    .to_string()
            })?;
            let (left, right) = (&args[..arrow], &args[arrow + 1..]);
            let (from, from_version) = match left {
                [from] => (from, None),
                [from, v] => (from, Some(v)),
                _ => {
                    return Err(
                        "is not a valid `replace`: the left side is a module path and an optional version".to_string()
                    );
                }
            };
            check_module_path(from)?;
            if let Some(v) = from_version {
                check_version(from, v)?;
            }
            let to = match right {
                [dir] if is_local(dir) => Target::Local(local_dir(dir)?),
                [path, version] if !is_local(path) => {
                    check_module_path(path)?;
                    check_version(path, version)?;
                    Target::Module { path: path.clone(), version: version.clone() }
                }
                [other] => {
                    return Err(format!(
                        "replaces with `{other}`, which is neither a module at a version (`other/module v1.2.3`) \
                         nor a folder inside the project (`./folder`)"
                    ));
                }
                _ => {
                    return Err(
                        "is not a valid `replace`: the right side is `module version` or `./folder`".to_string()
                    );
                }
            };
            m.replaces.push(Replace { from: from.clone(), from_version: from_version.cloned(), to });
            Ok(())
        }
        // Retractions only matter to the module's own users; their syntax is checked loosely.
        "retract" => {
            if args.is_empty() {
                return Err("is an empty `retract`".to_string());
            }
            Ok(())
        }
        _ => Err(format!("`{verb}` is not a block go.mod knows")),
    }
}

/// Split a line into go.mod tokens: words, `"quoted"` and `` `raw` `` strings, `(` and `)`;
/// a `//` starting a token begins a comment.
fn tokenize(line: &str) -> Result<Vec<String>, String> {
    let mut tokens = Vec::new();
    let mut chars = line.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        if line[i..].starts_with("//") {
            break;
        }
        match c {
            '(' | ')' => {
                tokens.push(c.to_string());
                chars.next();
            }
            '"' | '`' => {
                chars.next();
                let mut s = String::new();
                let mut closed = false;
                for (_, ch) in chars.by_ref() {
                    if ch == c {
                        closed = true;
                        break;
                    }
                    if ch == '\\' && c == '"' {
                        return Err("escapes in quoted strings are not accepted".to_string());
                    }
                    s.push(ch);
                }
                if !closed {
                    return Err("a quoted string is never closed".to_string());
                }
                tokens.push(s);
            }
            _ => {
                let mut s = String::new();
                while let Some(&(_, ch)) = chars.peek() {
                    if ch.is_whitespace() || matches!(ch, '(' | ')' | '"' | '`') {
                        break;
                    }
                    s.push(ch);
                    chars.next();
                }
                tokens.push(s);
            }
        }
    }
    if tokens.iter().any(|t| t.chars().any(char::is_control)) {
        return Err("it holds control characters".to_string());
    }
    Ok(tokens)
}

/// Go's rule: a replacement is a folder when it starts with `./`, `../` or `/`.
fn is_local(target: &str) -> bool {
    target.starts_with("./") || target.starts_with("../") || target.starts_with('/') || target == "." || target == ".."
}

/// A local replacement as a clean path relative to the project, or why it is refused.
fn local_dir(target: &str) -> Result<String, String> {
    let outside = || {
        format!(
            "replaces a module with the folder `{target}`, which is outside the project; only folders inside \
             the project (`./lib`) can replace a module"
        )
    };
    if target.starts_with('/') {
        return Err(outside());
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(outside());
                }
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(format!("replaces a module with the project's own folder (`{target}`); name a sub-folder"));
    }
    if parts.iter().any(|p| p.starts_with('.') || p.contains(['\\', ':'])) {
        return Err(format!("replaces a module with `{target}`; name a plain sub-folder of the project"));
    }
    Ok(parts.join("/"))
}

/// Go's module path rules (`golang.org/x/mod/module.CheckPath`), in words when broken: a
/// domain-like first element with a dot, then plain path elements; no scheme, no `..`.
pub(crate) fn check_module_path(path: &str) -> Result<(), String> {
    let refuse = |why: &str| {
        Err(format!(
            "names `{path}`, which is not a module path ({why}); write a module path like \
             `github.com/user/repo`, not a URL or a file path"
        ))
    };
    if path.is_empty() {
        return refuse("it is empty");
    }
    if path.contains("://") || path.contains(':') {
        return refuse("it looks like a URL");
    }
    if path.starts_with('/') || path.starts_with('.') || path.starts_with('-') || path.ends_with('/') {
        return refuse("it looks like a file path");
    }
    let elements: Vec<&str> = path.split('/').collect();
    for e in &elements {
        if e.is_empty() || *e == "." || *e == ".." {
            return refuse("it has an empty, `.` or `..` element");
        }
        if e.starts_with('.') || e.ends_with('.') {
            return refuse("an element starts or ends with a dot");
        }
        if !e.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')) {
            return refuse("it holds characters module paths cannot have");
        }
    }
    let first = elements[0];
    if !first.contains('.') {
        return refuse("its first element is not a domain name");
    }
    if !first.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.')) {
        return refuse("its first element must be a lower-case domain name");
    }
    Ok(())
}

/// A canonical semantic version (`v1.2.3`, `v1.2.3-pre`, a pseudo-version, `+incompatible`)
/// that fits the path's major version suffix.
pub(crate) fn check_version(path: &str, version: &str) -> Result<(), String> {
    let Some(major) = semver_major(version) else {
        return Err(format!(
            "gives `{path}` the version `{version}`, which is not a semantic version; write an exact version \
             like `v1.2.3` (branches, `latest` and commit hashes are not accepted)"
        ));
    };
    let suffix = path.rsplit('/').next().and_then(|last| last.strip_prefix('v')).and_then(|n| n.parse::<u64>().ok());
    let incompatible = version.ends_with("+incompatible");
    let fits = if path.starts_with("gopkg.in/") {
        true
    } else {
        match suffix.filter(|n| *n >= 2 && path.contains('/')) {
            Some(n) => major == n && !incompatible,
            None => major <= 1 && !incompatible || major >= 2 && incompatible,
        }
    };
    if !fits {
        return Err(format!(
            "gives `{path}` the version `{version}`, which does not match its major version (modules at v2 or \
             later end in `/v2`, `/v3`…)"
        ));
    }
    Ok(())
}

/// The major number of a canonical semantic version, or `None` when it is not one.
fn semver_major(v: &str) -> Option<u64> {
    let rest = v.strip_prefix('v')?;
    let (core, build) = match rest.split_once('+') {
        Some((c, b)) => (c, Some(b)),
        None => (rest, None),
    };
    if build.is_some_and(|b| b != "incompatible") {
        return None;
    }
    let (numbers, pre) = match core.split_once('-') {
        Some((n, p)) => (n, Some(p)),
        None => (core, None),
    };
    let nums: Vec<&str> = numbers.split('.').collect();
    if nums.len() != 3 || !nums.iter().all(|n| numeric(n)) {
        return None;
    }
    if let Some(pre) = pre {
        let ok = pre.split('.').all(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
        if !ok {
            return None;
        }
    }
    nums[0].parse().ok()
}

fn numeric(n: &str) -> bool {
    !n.is_empty() && n.len() <= 18 && n.bytes().all(|b| b.is_ascii_digit()) && (n == "0" || !n.starts_with('0'))
}

/// A Go release (`1.19`, `1.21.3`, `1.21rc1`) as (major, minor, patch); pre-releases count as
/// the release they lead to.
pub(crate) fn go_version(v: &str) -> Option<(u64, u64, u64)> {
    let v = v.strip_prefix("go").unwrap_or(v);
    let cut = v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len());
    let (numbers, pre) = v.split_at(cut);
    if !(pre.is_empty() || pre.starts_with("rc") || pre.starts_with("beta")) {
        return None;
    }
    let parts: Vec<&str> = numbers.split('.').collect();
    if !(2..=3).contains(&parts.len()) || !parts.iter().all(|p| numeric(p)) {
        return None;
    }
    let n = |i: usize| parts.get(i).and_then(|p| p.parse().ok()).unwrap_or(0);
    Some((n(0), n(1), n(2)))
}

/// Check a `go.sum`: every line `module version[/go.mod] h1:hash`. Returns the lines sorted
/// and de-duplicated (what the cache key and the host's `go` see).
pub(crate) fn parse_sum(text: &str) -> (Vec<String>, Vec<Refusal>) {
    let mut lines = Vec::new();
    let mut refusals = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let problem = match fields.as_slice() {
            [path, version, hash] => {
                let version = version.strip_suffix("/go.mod").unwrap_or(version);
                check_module_path(path)
                    .and_then(|()| semver_major(version).map(|_| ()).ok_or_else(|| "has no valid version".to_string()))
                    .and_then(|()| {
                        (hash.starts_with("h1:") && hash.len() > 3 && !hash.contains(char::is_control))
                            .then_some(())
                            .ok_or_else(|| "has no `h1:` hash".to_string())
                    })
                    .err()
            }
            _ => Some("is not a go.sum line (`module version h1:hash`)".to_string()),
        };
        match problem {
            Some(reason) => refusals.push(Refusal {
                file: "go.sum".to_string(),
                spec: line.to_string(),
                reason: format!("{reason} (line {})", n + 1),
            }),
            None => lines.push(fields.join(" ")),
        }
    }
    lines.sort();
    lines.dedup();
    (lines, refusals)
}

#[cfg(test)]
#[path = "gomod_tests.rs"]
mod tests;
