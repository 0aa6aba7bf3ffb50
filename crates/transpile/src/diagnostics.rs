//! TypeScript's and esbuild's error output, read into [`Diagnostic`]s.
//!
//! Both tools print plain text. `tsc --pretty false` prints one error per line,
//! `file(line,col): error TSnnnn: message`, with indented continuation lines; esbuild prints
//! `✘ [ERROR] message` followed by a `file:line:col:` line (its columns count from 0). The
//! error's kind comes from TypeScript's code (or esbuild's words): a module that cannot be found
//! or a name it does not export is an `import` error, a syntax error is a `transpile` error,
//! anything else TypeScript finds is a `type` error. Text that matches neither shape is skipped;
//! no input makes the parsers panic.

use regex::Regex;
use std::sync::LazyLock;

/// What went wrong, as `error_detected` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The code is not valid TypeScript/JSX, or the step itself failed (time limit, a tool).
    Transpile,
    /// Valid syntax whose types do not agree.
    Type,
    /// A module that cannot be found, or a name a module does not export.
    Import,
}

impl Kind {
    /// The `error_detected` kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Transpile => "transpile",
            Kind::Type => "type",
            Kind::Import => "import",
        }
    }
}

/// One error, where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub kind: Kind,
    /// Relative to the project when the tool said so; empty when the error has no file.
    pub file: String,
    /// 1-based.
    pub line: u32,
    /// 1-based.
    pub column: u32,
    /// `TS2322` for TypeScript; None for esbuild.
    pub code: Option<String>,
    pub message: String,
}

impl Diagnostic {
    /// `src/App.tsx:5:9: error TS2322: …`, the line the model and people read.
    pub fn render(&self) -> String {
        let at =
            if self.file.is_empty() { String::new() } else { format!("{}:{}:{}: ", self.file, self.line, self.column) };
        match &self.code {
            Some(code) => format!("{at}error {code}: {}", self.message),
            None => format!("{at}error: {}", self.message),
        }
    }
}

/// TypeScript codes that mean a module or one of its names could not be found.
const IMPORT_CODES: &[u32] = &[2305, 2306, 2307, 2614, 2724, 2792, 2882, 7016];

/// The kind of a TypeScript error code.
pub fn kind_of_ts(code: u32) -> Kind {
    if IMPORT_CODES.contains(&code) {
        Kind::Import
    } else if (1000..2000).contains(&code) || (17000..18000).contains(&code) || (5000..7000).contains(&code) {
        // Syntax (1xxx), JSX syntax (17xxx) and configuration (5xxx, 6xxx).
        Kind::Transpile
    } else {
        Kind::Type
    }
}

static TSC_LINE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^\s(][^(]*)\((?P<line>\d+),(?P<col>\d+)\): error TS(?P<code>\d+):\s?(?P<msg>.*)$").ok()
});
static TSC_GLOBAL: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^error TS(?P<code>\d+):\s?(?P<msg>.*)$").ok());
static ESBUILD_AT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\s+(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+):\s*$").ok());

/// Parse `tsc --noEmit --pretty false` output.
pub fn parse_tsc(text: &str) -> Vec<Diagnostic> {
    let (Some(line_re), Some(global_re)) = (TSC_LINE.as_ref(), TSC_GLOBAL.as_ref()) else {
        return Vec::new();
    };
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut last_was_error = false;
    for raw in text.lines() {
        let line = raw.trim_end();
        if let Some(c) = line_re.captures(line) {
            let code: u32 = c["code"].parse().unwrap_or(0);
            out.push(Diagnostic {
                kind: kind_of_ts(code),
                file: c["file"].trim().to_string(),
                line: c["line"].parse().unwrap_or(1).max(1),
                column: c["col"].parse().unwrap_or(1).max(1),
                code: Some(format!("TS{code}")),
                message: c["msg"].trim().to_string(),
            });
            last_was_error = true;
        } else if let Some(c) = global_re.captures(line) {
            let code: u32 = c["code"].parse().unwrap_or(0);
            out.push(Diagnostic {
                kind: kind_of_ts(code),
                file: String::new(),
                line: 1,
                column: 1,
                code: Some(format!("TS{code}")),
                message: c["msg"].trim().to_string(),
            });
            last_was_error = true;
        } else if last_was_error && line.starts_with(' ') && !line.trim().is_empty() {
            // "  Type 'x' is not assignable to …": the explanation of the error above.
            if let Some(d) = out.last_mut() {
                d.message.push('\n');
                d.message.push_str(line.trim());
            }
        } else {
            last_was_error = false;
        }
    }
    out
}

/// Parse esbuild's log (`--color=false`): each `✘ [ERROR]` (or `X [ERROR]`) with the
/// location line that follows it.
pub fn parse_esbuild(text: &str) -> Vec<Diagnostic> {
    let Some(at_re) = ESBUILD_AT.as_ref() else {
        return Vec::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(at) = line.find("[ERROR] ") else {
            continue;
        };
        let message = line[at + "[ERROR] ".len()..].trim().to_string();
        let mut d = Diagnostic {
            kind: kind_of_esbuild(&message),
            file: String::new(),
            line: 1,
            column: 1,
            code: None,
            message,
        };
        // The location is the first `file:line:col:` line before the next error.
        for next in lines.iter().skip(i + 1).take(6) {
            if next.contains("[ERROR] ") {
                break;
            }
            if let Some(c) = at_re.captures(next) {
                d.file = c["file"].trim().to_string();
                d.line = c["line"].parse().unwrap_or(1).max(1);
                d.column = c["col"].parse::<u32>().unwrap_or(0).saturating_add(1);
                break;
            }
        }
        out.push(d);
    }
    out
}

fn kind_of_esbuild(message: &str) -> Kind {
    let m = message.to_ascii_lowercase();
    if m.starts_with("could not resolve") || m.contains("no matching export") || m.contains("is not exported") {
        Kind::Import
    } else {
        Kind::Transpile
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsc_errors_keep_file_line_column_code_and_explanation() {
        let out = "src/App.tsx(5,9): error TS2322: Type 'string' is not assignable to type 'number'.\n\
                   src/App.tsx(2,21): error TS2307: Cannot find module './Missing' or its corresponding type declarations.\n\
                   src/Bad.tsx(3,1): error TS1005: ';' expected.\n\
                   src/List.tsx(9,7): error TS2345: Argument of type '{ id: string; }' is not assignable to parameter of type 'Item'.\n  \
                   Property 'done' is missing in type '{ id: string; }' but required in type 'Item'.\n\
                   error TS5083: Cannot read file '/p/tsconfig.json'.\n";
        let d = parse_tsc(out);
        assert_eq!(d.len(), 5);
        assert_eq!((d[0].kind, d[0].file.as_str(), d[0].line, d[0].column), (Kind::Type, "src/App.tsx", 5, 9));
        assert_eq!(d[0].code.as_deref(), Some("TS2322"));
        assert_eq!(d[1].kind, Kind::Import);
        assert_eq!(d[2].kind, Kind::Transpile);
        assert!(d[3].message.ends_with("but required in type 'Item'."), "{}", d[3].message);
        assert_eq!((d[4].kind, d[4].file.as_str()), (Kind::Transpile, ""));
        assert_eq!(d[0].render(), "src/App.tsx:5:9: error TS2322: Type 'string' is not assignable to type 'number'.");
    }

    #[test]
    fn esbuild_errors_get_1_based_columns_and_import_kinds() {
        let out = "✘ [ERROR] Could not resolve \"./Missing\"\n\n    src/App.tsx:2:20:\n      2 │ import Missing from \"./Missing\";\n        ╵                     ~~~~~~~~~~~\n\n\
                   ✘ [ERROR] Expected \">\" but found \"}\"\n\n    src/Bad.tsx:4:11:\n      4 │   return <div}\n\n2 errors\n";
        let d = parse_esbuild(out);
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].kind, d[0].file.as_str(), d[0].line, d[0].column), (Kind::Import, "src/App.tsx", 2, 21));
        assert_eq!((d[1].kind, d[1].line, d[1].column), (Kind::Transpile, 4, 12));
        assert_eq!(d[1].message, "Expected \">\" but found \"}\"");
    }

    #[test]
    fn other_text_is_not_an_error() {
        assert!(parse_tsc("Found 0 errors.\n\nsrc/a.ts is fine\n").is_empty());
        assert!(parse_esbuild("  dist/app.js  140.2kb\n\n⚡ Done in 12ms\n").is_empty());
    }

    proptest::proptest! {
        #[test]
        fn parsers_never_panic_and_positions_are_1_based(text in "\\PC{0,400}") {
            for d in parse_tsc(&text).into_iter().chain(parse_esbuild(&text)) {
                proptest::prop_assert!(d.line >= 1 && d.column >= 1);
            }
        }

        #[test]
        fn a_tsc_line_round_trips(file in "[a-z]{1,8}/[A-Za-z]{1,8}\\.tsx", line in 1u32..5000, col in 1u32..300, code in 1000u32..9999, msg in "[A-Za-z' .]{1,60}") {
            let text = format!("{file}({line},{col}): error TS{code}: {msg}\n");
            let d = parse_tsc(&text);
            proptest::prop_assert_eq!(d.len(), 1);
            proptest::prop_assert_eq!(&d[0].file, &file);
            proptest::prop_assert_eq!((d[0].line, d[0].column), (line, col));
            proptest::prop_assert_eq!(d[0].kind, kind_of_ts(code));
        }
    }
}
