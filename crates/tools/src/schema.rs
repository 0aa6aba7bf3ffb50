//! Argument schemas: derived from the argument types, checked before a tool runs.
//!
//! The check covers the JSON Schema subset the derived schemas use (types, properties,
//! required, enums, arrays, unions), and phrases errors for a model to act on.

use serde_json::{Map, Value};

/// The JSON Schema of `T`, inlined (no `$ref`) and without meta keys, ready for any wire.
pub fn schema_for<T: schemars::JsonSchema>() -> Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut v = schema.to_value();
    if let Some(obj) = v.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        obj.remove("$defs");
        obj.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    }
    v
}

/// Check `value` against `schema`. Every problem is reported at once (joined with "; "), so
/// the model can fix all of them in one retry; each names the argument and what was expected.
pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    let mut errors = Vec::new();
    check(schema, value, "", &mut errors);
    if errors.is_empty() { Ok(()) } else { Err(errors.join("; ")) }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn matches_type(t: &str, v: &Value) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "integer" => v.as_i64().is_some() || v.as_u64().is_some() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => v.is_number(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => true,
    }
}

/// Lengths, ranges, sizes and patterns (`maxLength`, `minimum`, `maxItems`, `pattern`…).
fn bounds(s: &Map<String, Value>, v: &Value, at: &str, errors: &mut Vec<String>) {
    let num = |k: &str| s.get(k).and_then(Value::as_f64);
    match v {
        Value::String(text) => {
            let n = text.chars().count() as f64;
            if let Some(max) = num("maxLength").filter(|m| n > *m) {
                errors.push(format!("{} must be at most {max} characters, but has {n}", describe(at)));
            }
            if let Some(min) = num("minLength").filter(|m| n < *m) {
                errors.push(format!("{} must be at least {min} characters, but has {n}", describe(at)));
            }
            if let Some(p) = s.get("pattern").and_then(Value::as_str) {
                match regex::Regex::new(p) {
                    Ok(re) if !re.is_match(text) => {
                        errors.push(format!("{} must match the pattern {p}, but is {text:?}", describe(at)))
                    }
                    Ok(_) => {}
                    Err(e) => errors.push(format!("{}: the schema's pattern does not compile ({e})", describe(at))),
                }
            }
        }
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            if let Some(max) = num("maximum").filter(|m| x > *m) {
                errors.push(format!("{} must be at most {max}, but is {n}", describe(at)));
            }
            if let Some(min) = num("minimum").filter(|m| x < *m) {
                errors.push(format!("{} must be at least {min}, but is {n}", describe(at)));
            }
        }
        Value::Array(items) => {
            let n = items.len() as f64;
            if let Some(max) = num("maxItems").filter(|m| n > *m) {
                errors.push(format!("{} must have at most {max} items, but has {n}", describe(at)));
            }
            if let Some(min) = num("minItems").filter(|m| n < *m) {
                errors.push(format!("{} must have at least {min} items, but has {n}", describe(at)));
            }
        }
        _ => {}
    }
}

fn describe(at: &str) -> String {
    if at.is_empty() { "the arguments".to_string() } else { format!("`{at}`") }
}

fn check(schema: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(s) = schema.as_object() else { return };
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = s.get(key).and_then(Value::as_array) {
            let mut last = Vec::new();
            for o in options {
                let mut errs = Vec::new();
                check(o, v, at, &mut errs);
                if errs.is_empty() {
                    last.clear();
                    break;
                }
                last = errs;
            }
            if !last.is_empty() {
                errors.extend(last);
                return;
            }
        }
    }
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !types.is_empty() && !types.iter().any(|t| matches_type(t, v)) {
            let want = types
                .iter()
                .filter(|t| **t != "null")
                .map(|t| match *t {
                    "array" => "an array",
                    "object" => "an object",
                    "integer" => "an integer",
                    "boolean" => "a boolean (true or false)",
                    "number" => "a number",
                    _ => "a string",
                })
                .collect::<Vec<_>>()
                .join(" or ");
            errors.push(format!("{} must be {want}, but got {}", describe(at), type_name(v)));
            return;
        }
    }
    if let Some(options) = s.get("enum").and_then(Value::as_array) {
        if !options.contains(v) {
            let list = options.iter().map(Value::to_string).collect::<Vec<_>>().join(", ");
            errors.push(format!("{} must be one of {list}, but got {v}", describe(at)));
            return;
        }
    }
    if let Value::Object(obj) = v {
        let props = s.get("properties").and_then(Value::as_object);
        if let Some(required) = s.get("required").and_then(Value::as_array) {
            for r in required.iter().filter_map(Value::as_str) {
                if !obj.contains_key(r) || obj.get(r).is_some_and(Value::is_null) {
                    errors.push(format!("missing required argument `{}`", join(at, r)));
                }
            }
        }
        if let Some(props) = props {
            for (k, sub) in props {
                if let Some(val) = obj.get(k) {
                    check(sub, val, &join(at, k), errors);
                }
            }
            if s.get("additionalProperties") == Some(&Value::Bool(false)) {
                if let Some(extra) = obj.keys().find(|k| !props.contains_key(*k)) {
                    let known = props.keys().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
                    errors.push(format!("unknown argument `{}`; this tool takes {known}", join(at, extra)));
                }
            }
        }
    }
    bounds(s, v, at, errors);
    if let (Value::Array(items), Some(item_schema)) = (v, s.get("items")) {
        for (i, item) in items.iter().enumerate() {
            check(item_schema, item, &format!("{}[{i}]", if at.is_empty() { "args" } else { at }), errors);
        }
    }
}

fn join(at: &str, k: &str) -> String {
    if at.is_empty() { k.to_string() } else { format!("{at}.{k}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[allow(dead_code)]
    struct A {
        path: String,
        #[serde(default)]
        args: Vec<String>,
        kind: Option<K>,
    }
    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum K {
        Info,
        Error,
    }

    #[test]
    fn derived_schema_is_plain_and_checks() {
        let s = schema_for::<A>();
        assert_eq!(s["type"], "object");
        assert!(s.get("$schema").is_none());
        assert!(!s.to_string().contains("$ref"));
        assert_eq!(s["required"], json!(["path"]));
        assert!(validate(&s, &json!({"path": "a", "args": ["x"], "kind": "info"})).is_ok());
        assert!(validate(&s, &json!({"path": "a", "kind": null})).is_ok());
        assert_eq!(validate(&s, &json!({})).unwrap_err(), "missing required argument `path`");
        assert_eq!(validate(&s, &json!({"path": 5})).unwrap_err(), "`path` must be a string, but got an integer");
        assert_eq!(
            validate(&s, &json!({"path": "a", "args": [1]})).unwrap_err(),
            "`args[0]` must be a string, but got an integer"
        );
        assert!(validate(&s, &json!({"path": "a", "kind": "loud"})).unwrap_err().contains("must be one of"));
        assert_eq!(
            validate(&s, &json!({"path": 1, "args": "x"})).unwrap_err(),
            "`path` must be a string, but got an integer; `args` must be an array, but got a string"
        );
        assert_eq!(validate(&s, &json!([1])).unwrap_err(), "the arguments must be an object, but got an array");
    }
}
