//! A readable diff of two JSON values: the list of paths whose value changed, with the old
//! and new values. Objects are compared key by key; arrays element by element when their
//! lengths match, by appended or removed elements when one is a prefix of the other (a list
//! that grew), and as a whole otherwise. Paths are JSON Pointers (RFC 6901).
//!
//! The `json-patch` crate computes RFC 6902 patches, but a patch says how to get the new
//! value, not what the old one was, which is what someone replaying a session wants to see;
//! this is the few lines that keep both.

use serde::Serialize;
use serde_json::Value;

/// One changed path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub path: String,
    pub op: Op,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Add,
    Remove,
    Replace,
}

/// The changes that turn `old` into `new`, in path order.
pub fn diff(old: &Value, new: &Value) -> Vec<Change> {
    let mut out = Vec::new();
    walk(&mut String::new(), old, new, &mut out);
    out
}

fn walk(path: &mut String, old: &Value, new: &Value, out: &mut Vec<Change>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            // serde_json's default map is ordered, so keys come out sorted and the merge is
            // deterministic.
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let len = path.len();
                path.push('/');
                path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => walk(path, x, y, out),
                    (Some(x), None) => out.push(change(path, Op::Remove, Some(x), None)),
                    (None, Some(y)) => out.push(change(path, Op::Add, None, Some(y))),
                    (None, None) => unreachable!(),
                }
                path.truncate(len);
            }
        }
        (Value::Array(a), Value::Array(b))
            if a.len() == b.len() || a.starts_with(b) || b.starts_with(a) =>
        {
            let common = a.len().min(b.len());
            for i in 0..a.len().max(b.len()) {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) if i < common => walk(path, x, y, out),
                    (Some(x), None) => out.push(change(path, Op::Remove, Some(x), None)),
                    (None, Some(y)) => out.push(change(path, Op::Add, None, Some(y))),
                    _ => {}
                }
                path.truncate(len);
            }
        }
        (a, b) if a != b => out.push(change(path, Op::Replace, Some(a), Some(b))),
        _ => {}
    }
}

fn change(path: &str, op: Op, old: Option<&Value>, new: Option<&Value>) -> Change {
    Change {
        path: if path.is_empty() {
            "/".into()
        } else {
            path.into()
        },
        op,
        old: old.cloned(),
        new: new.cloned(),
    }
}

/// One line per change: `+ /path new`, `- /path old`, `~ /path old -> new`, values as
/// compact JSON shortened to `max` characters.
pub fn render(changes: &[Change], max: usize) -> Vec<String> {
    let v = |x: &Option<Value>| {
        crate::audit::one_line(&x.as_ref().map(|x| x.to_string()).unwrap_or_default(), max)
    };
    changes
        .iter()
        .map(|c| match c.op {
            Op::Add => format!("+ {} {}", c.path, v(&c.new)),
            Op::Remove => format!("- {} {}", c.path, v(&c.old)),
            Op::Replace => format!("~ {} {} -> {}", c.path, v(&c.old), v(&c.new)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_changes_with_old_and_new() {
        let a = json!({"n": 1, "tools": {"Bash": {"calls": 1}}, "gone": true, "list": [1, 2]});
        let b = json!({"n": 2, "tools": {"Bash": {"calls": 2}, "Read": {"calls": 1}}, "list": [1, 2, 3], "a/b": null});
        let d = diff(&a, &b);
        let lines = render(&d, 40);
        assert_eq!(
            lines,
            [
                "+ /a~1b null",
                "- /gone true",
                "+ /list/2 3",
                "~ /n 1 -> 2",
                "~ /tools/Bash/calls 1 -> 2",
                "+ /tools/Read {\"calls\":1}",
            ]
        );
        assert!(diff(&a, &a).is_empty());
    }

    #[test]
    fn arrays_that_are_not_prefixes_are_replaced_whole() {
        let d = diff(&json!({"l": [1, 2, 3]}), &json!({"l": [3, 1]}));
        assert_eq!(render(&d, 40), ["~ /l [1,2,3] -> [3,1]"]);
        let d = diff(&json!([1, 2, 3]), &json!([1]));
        assert_eq!(render(&d, 40), ["- /1 2", "- /2 3"]);
        let d = diff(&json!(1), &json!("x"));
        assert_eq!(render(&d, 40), ["~ / 1 -> \"x\""]);
    }
}
