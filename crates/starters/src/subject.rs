//! What a request is for, in its own words: "a landing page for my yoga studio" is for "Yoga
//! Studio", "uma página para o meu salão de beleza" for "Salão de Beleza". Small models tend to
//! copy a starter's example texts; the subject lets the page at least carry the right name.

/// Where the subject starts: the words after one of these (longest first).
const AFTER: &[&str] = &[
    " para a minha ",
    " para o meu ",
    " para minha ",
    " para meu ",
    " da minha ",
    " do meu ",
    " para a ",
    " para o ",
    " for my ",
    " for our ",
    " of my ",
    " of our ",
    " for the ",
    " for an ",
    " for a ",
    " for ",
    " para ",
    " about ",
    " sobre ",
];

/// Where it ends.
const UNTIL: &[&str] =
    &[" with ", " that ", " which ", " where ", " com ", " que ", " onde ", " and ", " e ", " in ", " em "];

/// Small words that stay lowercase inside a name.
const SMALL: &[&str] = &["de", "do", "da", "dos", "das", "e", "and", "of", "the", "a", "o"];

/// The request's subject, title-cased, at most five words; `None` when it names none.
pub fn subject(request: &str) -> Option<String> {
    let text = format!(" {} ", request.trim().trim_end_matches(['.', '!', '?']).to_lowercase());
    let start = AFTER.iter().filter_map(|a| text.find(a).map(|i| (i, i + a.len()))).min_by_key(|(i, _)| *i)?;
    let rest = &text[start.1..];
    let end = UNTIL.iter().filter_map(|u| format!(" {rest}").find(u)).min().map_or(rest.len(), |i| i.saturating_sub(1));
    let words: Vec<&str> = rest[..end.min(rest.len())]
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|w| !w.is_empty())
        .take(5)
        .collect();
    if words.is_empty() {
        return None;
    }
    let name: Vec<String> = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i > 0 && SMALL.contains(w) {
                return w.to_string();
            }
            let mut c = w.chars();
            c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
        })
        .collect();
    Some(name.join(" "))
}

#[cfg(test)]
mod tests {
    use super::subject;

    #[test]
    fn the_subject_is_what_the_request_is_for() {
        for (ask, want) in [
            ("a landing page for a dog walking business", Some("Dog Walking Business")),
            ("a website for my yoga studio", Some("Yoga Studio")),
            ("uma página para o meu salão de beleza", Some("Salão de Beleza")),
            ("a page with the menu of my pizza place", Some("Pizza Place")),
            ("a menu for Pizza Roma with prices", Some("Pizza Roma")),
            ("a countdown timer", None),
            ("uma página para minha padaria, com preços", Some("Padaria")),
        ] {
            assert_eq!(subject(ask).as_deref(), want, "{ask}");
        }
    }
}
