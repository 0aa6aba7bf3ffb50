//! The client tools of wright's own in-app assistant (and the default tools of an embed key):
//! the page reads and operates itself through its accessibility tree. Their descriptions and
//! schemas are defined here, on the server, so a page can switch them on by name but never
//! rewrite what they tell the model.

use serde_json::json;
use wright_events::chat::ClientToolDef;

/// `describe_app_ui`, `click_element`, `fill_form_element`.
pub fn ui_tools() -> Vec<ClientToolDef> {
    vec![
        ClientToolDef {
            name: "describe_app_ui".into(),
            description: "Describe what the user sees now: a tree of the visible elements that have a role and a \
                          name, with their state (checked, expanded, selected, disabled, value) and a ref for each. \
                          Call it before acting on the page and again after the page changed."
                .into(),
            parameters: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            read_only: true,
        },
        ClientToolDef {
            name: "click_element".into(),
            description: "Click one element, found by its ref from describe_app_ui or by its role and accessible \
                          name (description). Returns what changed on the page, or why it could not click (hidden, \
                          disabled, covered, not found, several matches)."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "role": {"type": "string", "description": "ARIA role, e.g. button, link, tab, menuitem"},
                    "description": {"type": "string", "description": "the element's accessible name as describe_app_ui shows it"},
                    "ref": {"type": "string", "description": "the ref from the latest describe_app_ui, e.g. s2e14"}
                },
                "additionalProperties": false
            }),
            read_only: false,
        },
        ClientToolDef {
            name: "fill_form_element".into(),
            description: "Fill in one form field, found by its ref or by its role and accessible name: text boxes \
                          and text areas take text, checkboxes and switches \"true\" or \"false\", radio buttons, \
                          selects and comboboxes the option's name. Returns what changed, or why it could not."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "role": {"type": "string", "description": "ARIA role, e.g. textbox, checkbox, radio, combobox"},
                    "description": {"type": "string", "description": "the field's accessible name"},
                    "ref": {"type": "string", "description": "the ref from the latest describe_app_ui"},
                    "value": {"type": "string", "description": "the text, true/false, or the option to choose"}
                },
                "required": ["value"],
                "additionalProperties": false
            }),
            read_only: false,
        },
    ]
}

/// The server tool every assistant with documents has.
pub const SEARCH_DOCUMENTS: &str = "search_documents";

/// A tool definition a key's owner gives is usable: a name a model accepts, a description, an
/// object schema.
pub fn check_def(def: &ClientToolDef) -> Result<(), String> {
    let name_ok = !def.name.is_empty()
        && def.name.len() <= 64
        && def.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !name_ok {
        return Err(format!("tool name `{}`: 1 to 64 letters, digits, `_` or `-`", def.name));
    }
    if def.name == SEARCH_DOCUMENTS {
        return Err(format!("tool name `{SEARCH_DOCUMENTS}` is the server's own"));
    }
    if def.description.trim().is_empty() || def.description.chars().count() > 2000 {
        return Err(format!("tool `{}`: a description of 1 to 2,000 characters", def.name));
    }
    if def.parameters.get("type").and_then(|t| t.as_str()) != Some("object") {
        return Err(format!("tool `{}`: parameters must be a JSON Schema of type object", def.name));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ui_tools_are_valid_and_only_describe_is_read_only() {
        let tools = ui_tools();
        assert!(tools.iter().all(|t| check_def(t).is_ok()));
        let read_only: Vec<_> = tools.iter().filter(|t| t.read_only).map(|t| t.name.as_str()).collect();
        assert_eq!(read_only, ["describe_app_ui"]);
        let mut bad = tools[0].clone();
        bad.name = "search_documents".into();
        assert!(check_def(&bad).is_err());
        bad.name = "has space".into();
        assert!(check_def(&bad).is_err());
    }
}
