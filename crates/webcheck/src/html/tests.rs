use super::*;

/// Problems that are not warnings.
fn errors(text: &str) -> Vec<Problem> {
    check_html("index.html", text).into_iter().filter(|p| !p.is_warning()).collect()
}

fn assert_clean(text: &str) {
    let all = check_html("index.html", text);
    assert!(all.is_empty(), "expected no problems, got {all:#?}");
}

/// Asserts exactly one error, on `line`, whose message contains `needle`.
fn assert_one_error(text: &str, line: u32, needle: &str) {
    let errs = errors(text);
    assert_eq!(errs.len(), 1, "expected one error, got {errs:#?}");
    assert_eq!(errs[0].line, Some(line), "wrong line in {errs:#?}");
    assert!(errs[0].message.contains(needle), "message {:?} should contain {needle:?}", errs[0].message);
}

fn page(body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>T</title>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )
}

const COUNTER_APP: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <title>Counter <3 App</title>
  <link rel="stylesheet" href="styles.css">
  <link rel="icon" href="favicon.ico?v=2">
  <style>
    .counter > span { color: red; }
    body::before { content: "</div>"; }
  </style>
</head>
<body>
  <!-- main app: <div> in a comment is fine -->
  <main id="app" class="counter" data-max='10'>
    <h1>Counter</h1>
    <p>Count: <span id="count">0</span>
    <p>Press the buttons &amp; watch it change.
    <button id="dec" onclick="if (count > 0 && count < 10) dec()">-</button>
    <button id="inc" disabled>+</button>
    <input type="number" id="step" value="1">
    <br/>
    <img src="img/logo.png" alt="logo" />
    <svg width="10" height="10" viewBox="0 0 10 10"><title>dot</title><circle cx="5" cy="5" r="4"/></svg>
  </main>
  <script>
    let count = 0;
    const tpl = '<div class="row">' + count + '</div>';
    if (count < 1 && 2 > 1) {
      document.body.insertAdjacentHTML('beforeend', "</div><p>");
    }
    for (let i = 0; i<3; i++) { console.log(i); }
  </script>
  <script type="module" src="app.js"></script>
</body>
</html>
"#;

#[test]
fn counter_app_is_clean() {
    assert_clean(COUNTER_APP);
}

#[test]
fn counter_app_references() {
    assert_eq!(
        local_references(COUNTER_APP),
        vec![
            ("styles.css".to_string(), 7),
            ("favicon.ico".to_string(), 8),
            ("img/logo.png".to_string(), 24),
            ("app.js".to_string(), 35),
        ]
    );
}

#[test]
fn minimal_page_without_html_head_body_is_fine() {
    assert_clean("<!DOCTYPE html>\n<title>x</title>\n<h1>Hi</h1>\n<p>text\n");
}

#[test]
fn uppercase_tags_are_fine() {
    assert_clean(
        "<!DOCTYPE HTML>\n<HTML>\n<HEAD><TITLE>x</TITLE></HEAD>\n<BODY>\n<DIV Class=\"a\"><P>hi</p></div>\n<Br>\n</BODY>\n</HTML>\n",
    );
}

#[test]
fn paragraph_auto_closes() {
    assert_clean(&page("<p>one\n<p>two\n<div>block</div>\n<p>three<ul><li>x</ul>"));
    assert_clean(&page("<div><p>inside div</div>"));
    assert_clean(&page("<p>a<h2>b</h2>"));
}

#[test]
fn optional_end_tags_are_fine() {
    assert_clean(&page("<ul>\n<li>a\n<li>b <b>bold</b>\n<li><p>para\n</ul>"));
    assert_clean(&page("<ol><li>a<ol><li>nested</ol><li>b</ol>"));
    assert_clean(&page("<dl><dt>term<dd>def<dt>t2<dd>d2</dl>"));
    assert_clean(&page("<table>\n<thead><tr><th>a<th>b\n<tbody>\n<tr><td>1<td>2\n<tr><td>3<td>4\n</table>"));
    assert_clean(&page("<select><option>a<option selected>b<optgroup label=g><option>c</select>"));
    assert_clean(&page("<table><tr><td><table><tr><td>in</table><td>out</table>"));
}

#[test]
fn void_and_self_closing_syntax() {
    assert_clean(&page(
        "<img src=\"a.png\" alt=\"\"><img src=\"b.png\"/><br><br/><br />\n<hr><input type=\"text\" disabled/>\n<wbr><area><embed src=\"x.svg\">\n<svg><path d=\"M0 0L1 1\"/><g><rect/></g></svg><math><mi>x</mi><mspace/></math>",
    ));
}

#[test]
fn attributes_with_gt_inside_quotes() {
    assert_clean(&page(
        "<div title=\"a > b\" data-x='1>0' onclick=\"return a>b\">x</div>\n<a href=\"p.html\" title=\"x <b>\">y</a>",
    ));
}

#[test]
fn raw_text_elements_hold_markup_like_text() {
    assert_clean(&page(
        "<textarea><div><p></textarea>\n<script>if (a<b) { x = '<span>'; }</script>\n<style>a>b{color:red}</style>\n<SCRIPT>var s = '</div>';</SCRIPT >",
    ));
}

#[test]
fn comments_and_cdata_and_templates() {
    assert_clean(&page(
        "<!-- <div> -->\n<!---->\n<template><li>row</li></template>\n<div {{ attrs }} class=\"{{ cls }}\">{{ name }}</div>",
    ));
}

#[test]
fn bom_is_ignored() {
    assert_clean(&format!("\u{feff}{}", page("<p>x</p>")));
}

#[test]
fn unclosed_div_is_reported_at_its_line() {
    let text = page("<div class=\"wrap\">\n<p>text</p>");
    // body starts on line 8
    assert_one_error(&text, 8, "`<div>` opened on line 8 is never closed; add `</div>`");
}

#[test]
fn unclosed_div_at_eof() {
    assert_one_error("<!DOCTYPE html>\n<div>\n<span>x</span>\n", 2, "`<div>` opened on line 2 is never closed");
}

#[test]
fn stray_closing_tag() {
    assert_one_error(&page("<div>x</div>\n</span>"), 9, "`</span>` on line 9 has no matching opening `<span>`");
}

#[test]
fn stray_closing_p_explains_auto_close() {
    assert_one_error(&page("<p>a\n<div>b</div>\n</p>"), 10, "`</p>` on line 10 has no open `<p>`");
}

#[test]
fn misnesting_is_reported_once() {
    assert_one_error(&page("<b><i>x</b></i>"), 8, "`<i>` opened on line 8 is not closed before `</b>` on line 8");
}

#[test]
fn span_left_open_inside_closed_div() {
    assert_one_error(
        &page("<div>\n<span>x\n</div>"),
        9,
        "`<span>` opened on line 9 is not closed before `</div>` on line 10",
    );
}

#[test]
fn block_inside_paragraph_with_open_inline() {
    assert_one_error(&page("<p><a href=\"#\">\n<div>card</div>\n</a></p>"), 8, "ends the surrounding `<p>`");
}

#[test]
fn unclosed_element_before_body_end() {
    assert_one_error(
        "<!DOCTYPE html>\n<body>\n<section>\n</body>\n",
        3,
        "`<section>` opened on line 3 is never closed; add `</section>` before `</body>` on line 4",
    );
}

#[test]
fn stray_less_than() {
    assert_one_error(&page("<p>if a < b then</p>"), 8, "stray `<` on line 8");
    assert_one_error(&page("< div>x"), 8, "stray `<`");
    assert_one_error(&page("<p>x</ p>"), 8, "stray `</`");
}

#[test]
fn tag_missing_its_gt() {
    let text = page("<div class=\"a\"\n<p>x</p>\n</div>");
    assert_one_error(&text, 8, "tag `<div` on line 8 is missing its closing `>`");
}

#[test]
fn tag_never_finished_at_eof() {
    assert_one_error(
        "<!DOCTYPE html>\n<p>x</p>\n<img src=\"a.png\"",
        3,
        "tag `<img` opened on line 3 is never finished with `>`",
    );
}

#[test]
fn closing_tag_missing_gt() {
    assert_one_error(&page("<div>x</div\n<p>y</p>"), 8, "closing tag `</div` on line 8 is missing its `>`");
}

#[test]
fn unterminated_attribute_quote() {
    let text = page("<a href=\"about.html>About</a>\n<p class=\"x\">y</p>");
    assert_one_error(&text, 8, "the value of `href` in `<a>` on line 8 opens a `\"` that is never closed");
}

#[test]
fn unterminated_attribute_quote_at_eof() {
    let errs = errors("<!DOCTYPE html>\n<p>x</p>\n<div class='oops>\ntext");
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert!(errs[0].message.contains("opens a `'` that is never closed"));
    assert_eq!(errs[0].line, Some(3));
    assert!(errs[1].message.contains("`<div>` opened on line 3 is never closed"));
}

#[test]
fn unbalanced_quotes_in_attribute_names() {
    assert_one_error(&page("<img src=\"logo.png alt=\"Logo\">"), 8, "look unbalanced");
}

#[test]
fn unterminated_comment() {
    assert_one_error(
        &page("<p>x</p>\n<!-- note\n<div>hidden</div>"),
        9,
        "comment `<!--` opened on line 9 is never closed",
    );
}

#[test]
fn unclosed_script_swallows_page() {
    let errs = errors("<!DOCTYPE html>\n<p>x</p>\n<script>\nlet a = 1;\n</body>");
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].line, Some(3));
    assert!(errs[0].message.contains("`<script>` opened on line 3 is never closed"));
    assert!(errs[0].message.contains("part of the script"));
}

#[test]
fn self_closing_script_is_reported() {
    assert_one_error(
        &page("<div id=\"app\"></div>\n<script src=\"app.js\" />"),
        9,
        "`<script … />` on line 9 is not self-closing",
    );
}

#[test]
fn self_closing_div_is_reported() {
    assert_one_error(&page("<div class=\"spacer\" />\n<p>x</p>"), 8, "`<div />` on line 8 does not close the element");
}

#[test]
fn void_end_tag_is_reported() {
    assert_one_error(&page("<img src=\"a.png\"></img>"), 8, "`</img>` on line 8 is not allowed");
}

#[test]
fn duplicate_attribute() {
    assert_one_error(&page("<div class=\"a\"\n class=\"b\">x</div>"), 9, "has the attribute `class` twice");
}

#[test]
fn empty_document() {
    for text in ["", "   \n\t\n"] {
        let all = check_html("index.html", text);
        assert_eq!(all.len(), 1, "{all:#?}");
        assert!(all[0].message.contains("the file is empty"));
        assert_eq!(all[0].line, Some(1));
    }
}

#[test]
fn text_without_elements() {
    let errs = errors("Hello world, this is my page.");
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(errs[0].message.contains("no HTML tags found"));
    let errs = errors("<!DOCTYPE html>");
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(errs[0].message.contains("no HTML tags found"));
}

#[test]
fn empty_body_without_script() {
    let text = "<!DOCTYPE html>\n<html>\n<head><title>x</title></head>\n<body>\n</body>\n</html>\n";
    assert_one_error(text, 1, "the page shows nothing");
}

#[test]
fn empty_body_with_script_is_fine() {
    assert_clean(
        "<!DOCTYPE html>\n<html>\n<head><title>x</title><script src=\"app.js\"></script></head>\n<body></body>\n</html>\n",
    );
}

#[test]
fn missing_doctype_is_only_a_warning() {
    let all = check_html("index.html", "<html><body><p>x</p></body></html>");
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(all[0].severity, crate::Severity::Warning);
    assert!(all[0].message.contains("<!DOCTYPE html>"));
    assert_eq!(all[0].line, Some(1));
    let report = crate::WebReport { pages: vec!["index.html".into()], problems: all };
    assert!(report.ok());
}

#[test]
fn late_doctype_is_a_warning() {
    let all = check_html("index.html", "<p>x</p>\n<!DOCTYPE html>\n");
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(all[0].is_warning());
    assert_eq!(all[0].line, Some(2));
}

#[test]
fn markdown_fences_around_the_page() {
    let text = format!("```html\n{}```\n", page("<p>x</p>"));
    let errs = errors(&text);
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert_eq!(errs[0].line, Some(1));
    assert!(errs[0].message.contains("comes before the page starts"));
    assert_eq!(errs[1].line, Some(12));
    assert!(errs[1].message.contains("comes after `</html>`"));
}

#[test]
fn problems_are_capped() {
    let text = page(&format!("<p>x</p>\n{}", "</span>\n".repeat(80)));
    let all = check_html("index.html", &text);
    assert_eq!(all.len(), MAX_PROBLEMS + 1);
    assert!(all[MAX_PROBLEMS].message.contains("30 more problems"), "{:?}", all[MAX_PROBLEMS]);
}

#[test]
fn deep_nesting_is_bounded() {
    let text = page(&"<div>".repeat(2000));
    let errs = errors(&text);
    assert!(errs.iter().any(|p| p.message.contains("nested more than")));
}

#[test]
fn problem_file_name_is_passed_through() {
    let all = check_html("client/about.html", "<div>");
    assert!(all.iter().all(|p| p.file == "client/about.html"));
}

#[test]
fn references_skip_remote_and_placeholders() {
    let text = r##"<!DOCTYPE html>
<link rel="stylesheet" href="https://cdn.example.com/x.css">
<link rel="stylesheet" href="//cdn.example.com/y.css">
<link rel="preconnect" href="fonts.css">
<link rel="shortcut icon" href="/favicon.png">
<script src="{{ url_for('static', filename='app.js') }}"></script>
<script src="js/main.js?v=3#x"></script>
<img src="data:image/png;base64,AAAA">
<img src="photos/cat%20one.jpg">
<a href="#top">top</a>
<a href="mailto:a@b.c">mail</a>
<a href="tel:123">tel</a>
<a href="javascript:void(0)">js</a>
<a href="about.html#team">about</a>
<a href="docs/">docs</a>
<a href="https://example.com/x.html">ext</a>
<picture><source src="v.webm" type="video/webm"></picture>
<script>var x = '<img src="inside-script.png">';</script>
"##;
    assert_eq!(
        local_references(text),
        vec![
            ("/favicon.png".to_string(), 5),
            ("js/main.js".to_string(), 7),
            ("photos/cat%20one.jpg".to_string(), 9),
            ("about.html".to_string(), 14),
            ("v.webm".to_string(), 17),
        ]
    );
}

#[test]
fn references_report_line_of_attribute() {
    let text = "<script\n  type=\"module\"\n  src=\"app.js\"></script>";
    assert_eq!(local_references(text), vec![("app.js".to_string(), 3)]);
}

#[test]
fn local_path_rules() {
    assert_eq!(local_path(" app.js "), Some("app.js".to_string()));
    assert_eq!(local_path("css\\site.css"), Some("css/site.css".to_string()));
    assert_eq!(local_path("?x=1"), None);
    assert_eq!(local_path("blob:abc"), None);
    assert_eq!(local_path("${base}/a.js"), None);
    assert_eq!(local_path("./a:b.js"), Some("./a:b.js".to_string()));
}

const TODO_APP: &str = r##"<!-- Generated by wright -->
<!doctype html>
<html lang="en" data-theme="dark">
<head>
<meta charset="utf-8">
<meta property="og:title" content="Todos > everything">
<base href="/">
<title>Todos</title>
<link rel="preload" as="font" href="/fonts/inter.woff2" crossorigin>
<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/water.css@2/out/water.css">
<link rel="stylesheet" href="./styles.css">
<noscript><link rel="stylesheet" href="noscript.css"></noscript>
<script type="application/ld+json">{"@context": "https://schema.org", "name": "<Todos>"}</script>
</head>
<body class="app" onload="init()">
<header>
  <nav aria-label="main">
    <ul>
      <li><a href="index.html" class="active">Home</a></li>
      <li><a href="about.html">About</a>
      <li><a href="#stats">Stats</a>
    </ul>
  </nav>
</header>
<main x-data="{ open: false }" @click.outside="open = false" :class="{ 'is-open': open }">
  <h1>My todos <small>v2</small></h1>
  <form id="new-todo" method="post" action="/api/todos">
    <label for="title">Title <input id="title" name="title" required placeholder='e.g. "buy milk"'></label>
    <select name="priority"><option value="1">Low<option value="2" selected>High</select>
    <textarea name="notes" rows="3"><b>not markup</b></textarea>
    <button type="submit" class="btn"><svg class="icon" viewBox="0 0 24 24" aria-hidden="true"><path d="M12 5v14M5 12h14"></path></svg> Add</button>
  </form>
  <p>You have <strong id="count">0</strong> things to do.
  <table id="stats">
    <caption>Stats</caption>
    <colgroup><col span="2"></colgroup>
    <thead><tr><th>Day<th>Done</tr></thead>
    <tbody></tbody>
  </table>
  <template id="row"><tr><td class="day"></td><td class="done"></td></tr></template>
  <details><summary>Help</summary><p>Click <kbd>Add</kbd> to add a todo.</details>
  <dialog id="confirm"><form method="dialog"><button value="ok">OK</button></form></dialog>
  <video controls width="250" poster="img/poster.jpg"><source src="media/intro.mp4" type="video/mp4">Your browser cannot play video.</video>
  <iframe src="https://www.youtube.com/embed/x" title="intro" allowfullscreen></iframe>
  <pre><code>if (a &lt; b) { done(); }</code></pre>
  <my-widget data-id="7"></my-widget>
</main>
<footer><p>&copy; 2025 Todos &mdash; <a href="mailto:hi@example.com">contact</a></footer>
<script src="app.js" defer></script>
<script>
  document.querySelector('#count').textContent = String([1,2].filter(x => x < 2).length);
  const row = `<tr><td>${day}</td></tr>`;
</script>
</body>
</html>
"##;

#[test]
fn realistic_todo_app_is_clean() {
    assert_clean(TODO_APP);
    assert_eq!(
        local_references(TODO_APP),
        vec![
            ("./styles.css".to_string(), 11),
            ("noscript.css".to_string(), 12),
            ("index.html".to_string(), 19),
            ("about.html".to_string(), 20),
            ("img/poster.jpg".to_string(), 43),
            ("media/intro.mp4".to_string(), 43),
            ("app.js".to_string(), 49),
        ]
    );
}

#[test]
fn common_model_mistakes_are_caught() {
    // A list put inside a paragraph: the browser ends the <p> before <ul>.
    assert_one_error(&page("<p>Features:\n<ul><li>a</li></ul>\n</p>"), 10, "`</p>` on line 10 has no open `<p>`");
    // A forgotten </li> with an inline element left open.
    assert_one_error(
        &page("<ul>\n<li><a href=\"#a\">A\n<li>B\n</ul>"),
        9,
        "`<a>` opened on line 9 is not closed before the next `<li>` on line 10",
    );
    // An end tag typo: both halves of the mistake are pointed out.
    let errs = errors(&page("<section>\n<h2>x</h3>\n</section>"));
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert!(errs[0].message.contains("`</h3>` on line 9 has no matching opening `<h3>`"));
    assert!(errs[1].message.contains("`<h2>` opened on line 9 is not closed before `</section>`"));
}
