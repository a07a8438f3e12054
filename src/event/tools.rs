//! What a tool call did to files, and a one-line description of it, read from the tool's
//! input. Tool names differ per host (Claude Code `Edit`, Gemini `replace`, Cline
//! `replace_in_file`, Codex `apply_patch`); the table below maps them.

use std::borrow::Cow;

use serde::Deserialize;

use super::RawJson;

use super::lenient::{List, Num, Str};

/// What a tool did to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileOp {
    Read,
    Write,
    Edit,
}

impl FileOp {
    pub fn as_str(self) -> &'static str {
        match self {
            FileOp::Read => "read",
            FileOp::Write => "write",
            FileOp::Edit => "edit",
        }
    }
}

/// The file operation a tool performs, by its name on any host; None for tools that touch no
/// file by path (shells, searches, web). OpenCode, Pi and OpenClaw name theirs in lower case.
pub fn file_op(tool: &str) -> Option<FileOp> {
    Some(match tool {
        "Read" | "read" | "NotebookRead" | "read_file" | "view" | "view_file" => FileOp::Read,
        "Write" | "write" | "write_file" | "write_to_file" | "create_file" => FileOp::Write,
        "Edit" | "edit" | "MultiEdit" | "NotebookEdit" | "replace" | "replace_in_file"
        | "edit_file" | "str_replace_editor" | "apply_patch" | "editor" => FileOp::Edit,
        _ => return None,
    })
}

/// The fields of a tool input the fold reads. Hosts name the path differently.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolInput<'a> {
    #[serde(borrow)]
    file_path: Str<'a>,
    #[serde(borrow, rename = "filePath")]
    file_path_cc: Str<'a>,
    #[serde(borrow)]
    notebook_path: Str<'a>,
    #[serde(borrow)]
    absolute_path: Str<'a>,
    #[serde(borrow)]
    target_file: Str<'a>,
    #[serde(borrow)]
    path: Str<'a>,
    #[serde(borrow)]
    command: Str<'a>,
    /// The Cline SDK's batch tools: `run_commands` `commands: ["…"]`, `read_files`
    /// `files: [{"path": …}]`.
    #[serde(borrow)]
    commands: List<'a>,
    #[serde(borrow)]
    files: List<'a>,
    #[serde(borrow)]
    pattern: Str<'a>,
    #[serde(borrow)]
    url: Str<'a>,
    #[serde(borrow)]
    query: Str<'a>,
    #[serde(borrow)]
    description: Str<'a>,
    /// Codex `apply_patch` carries the patch as free text.
    #[serde(borrow)]
    input: Str<'a>,
    #[serde(borrow)]
    patch: Str<'a>,
    /// The Cline SDK's `editor` replaces `old_text` or inserts at `insert_line`; with
    /// neither, it writes the whole file.
    #[serde(borrow)]
    old_text: Str<'a>,
    insert_line: Num,
}

impl<'a> ToolInput<'a> {
    /// Reads a tool input; anything that is not an object gives an empty view.
    pub fn parse(raw: RawJson<'a>) -> ToolInput<'a> {
        if !super::is_object(raw.get()) {
            return ToolInput::default();
        }
        serde_json::from_str(raw.get()).unwrap_or_default()
    }

    /// The file the tool works on.
    pub fn path(&self) -> Option<&str> {
        [
            &self.file_path,
            &self.file_path_cc,
            &self.notebook_path,
            &self.absolute_path,
            &self.target_file,
            &self.path,
        ]
        .into_iter()
        .find_map(|s| s.as_deref())
    }

    /// Files a patch adds, updates or deletes (`*** Update File: p`), in order.
    pub fn patched_files(&self) -> Vec<(FileOp, &str)> {
        let text = [&self.input, &self.patch, &self.command]
            .into_iter()
            .find_map(|s| s.as_deref().filter(|t| t.contains("*** Begin Patch")));
        let Some(text) = text else { return Vec::new() };
        text.lines()
            .filter_map(|l| {
                let l = l.trim_end();
                if let Some(p) = l.strip_prefix("*** Add File: ") {
                    Some((FileOp::Write, p))
                } else {
                    l.strip_prefix("*** Update File: ")
                        .or_else(|| l.strip_prefix("*** Delete File: "))
                        .map(|p| (FileOp::Edit, p))
                }
            })
            .collect()
    }

    /// Files the tool `tool` touched, by its name and input.
    pub fn touched(&self, tool: &str) -> Vec<(FileOp, &str)> {
        let Some(op) = file_op(tool) else {
            return Vec::new();
        };
        let patched = self.patched_files();
        if !patched.is_empty() {
            return patched;
        }
        let op = match tool {
            "editor" if self.old_text.0.is_none() && self.insert_line.0.is_none() => FileOp::Write,
            _ => op,
        };
        self.path().map(|p| vec![(op, p)]).unwrap_or_default()
    }

    /// A one-line description: the command, the path, the pattern, the URL or the query. A
    /// batch (several commands or files) is named by its first entry and how many follow:
    /// `npm test (+2 more)`.
    pub fn detail(&self) -> Option<Cow<'a, str>> {
        if let Some(c) = self.command.0.clone() {
            return Some(c);
        }
        if let Some(c) = batch(&self.commands) {
            return Some(c);
        }
        [
            &self.file_path,
            &self.file_path_cc,
            &self.notebook_path,
            &self.absolute_path,
            &self.target_file,
            &self.path,
            &self.pattern,
            &self.url,
            &self.query,
            &self.description,
        ]
        .into_iter()
        .find_map(|s| s.0.clone())
        .or_else(|| batch(&self.files))
    }
}

/// A batch's description: its first entry, and how many more there are.
fn batch<'a>(l: &List<'a>) -> Option<Cow<'a, str>> {
    let first = l.first.clone()?;
    Some(match l.len {
        0 | 1 => first,
        n => Cow::Owned(format!("{first} (+{} more)", n - 1)),
    })
}

/// True if the fold reads the response of a call of `tool` (`failed`: the call failed): a
/// failed call's error text, the id a `TaskCreate` got, the patch of a file change. See
/// [`super::Tool::read_response`].
pub fn response_read(tool: &str, failed: bool) -> bool {
    failed || tool == "TaskCreate" || file_op(tool).is_some_and(|op| op != FileOp::Read)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(json: &'static str) -> RawJson<'static> {
        serde_json::from_str::<&serde_json::value::RawValue>(json)
            .unwrap()
            .into()
    }

    #[test]
    fn paths_by_host() {
        let r = input(r#"{"file_path":"/a","content":"x"}"#);
        assert_eq!(
            ToolInput::parse(r).touched("Write"),
            vec![(FileOp::Write, "/a")]
        );
        let r = input(r#"{"path":"src/b.rs","diff":"..."}"#);
        assert_eq!(
            ToolInput::parse(r).touched("replace_in_file"),
            vec![(FileOp::Edit, "src/b.rs")]
        );
        let r = input(r#"{"command":"ls"}"#);
        assert!(ToolInput::parse(r).touched("Bash").is_empty());
        assert_eq!(ToolInput::parse(r).detail().as_deref(), Some("ls"));
        let r = input("\"not an object\"");
        assert!(ToolInput::parse(r).path().is_none());
        let r = input(r#"["/positional"]"#);
        assert!(ToolInput::parse(r).path().is_none());
    }

    #[test]
    fn the_bridged_hosts_lower_case_file_tools() {
        // OpenCode's `filePath`, Pi's and OpenClaw's `path`.
        let r = input(r#"{"filePath":"/p/notes.txt","content":"hello\n"}"#);
        assert_eq!(
            ToolInput::parse(r).touched("write"),
            vec![(FileOp::Write, "/p/notes.txt")]
        );
        let r = input(r#"{"path":"src/a.ts","oldText":"x","newText":"y"}"#);
        assert_eq!(
            ToolInput::parse(r).touched("edit"),
            vec![(FileOp::Edit, "src/a.ts")]
        );
        // The Cline SDK's editor: a whole-file write unless it replaces or inserts.
        let r = input(r#"{"path":"/p/n.txt","new_text":"hi\n"}"#);
        assert_eq!(
            ToolInput::parse(r).touched("editor"),
            vec![(FileOp::Write, "/p/n.txt")]
        );
        let r = input(r#"{"path":"/p/n.txt","old_text":"hi","new_text":"ho"}"#);
        assert_eq!(
            ToolInput::parse(r).touched("editor"),
            vec![(FileOp::Edit, "/p/n.txt")]
        );
        let r = input(r#"{"path":"/p/n.txt","old_text":null,"insert_line":2,"new_text":"x"}"#);
        assert_eq!(
            ToolInput::parse(r).touched("editor"),
            vec![(FileOp::Edit, "/p/n.txt")]
        );
        let r = input(r#"{"path":"missing.txt"}"#);
        assert_eq!(
            ToolInput::parse(r).touched("read"),
            vec![(FileOp::Read, "missing.txt")]
        );
    }

    #[test]
    fn the_cline_sdk_batch_tools_are_named_by_their_first_entry() {
        let d = |j: &'static str| ToolInput::parse(input(j)).detail().map(Cow::into_owned);
        assert_eq!(d(r#"{"commands":["exit 3"]}"#).as_deref(), Some("exit 3"));
        assert_eq!(
            d(r#"{"commands":["npm test","ls","pwd"]}"#).as_deref(),
            Some("npm test (+2 more)")
        );
        // `preToolUse.parameters` carries the list as JSON text.
        assert_eq!(
            d(r#"{"commands":"[\"echo hi\"]"}"#).as_deref(),
            Some("echo hi")
        );
        assert_eq!(
            d(r#"{"files":[{"path":"/p/a.txt"}]}"#).as_deref(),
            Some("/p/a.txt")
        );
        assert_eq!(
            d(r#"{"files":[{"path":"/p/a.txt"},{"path":"/p/b.txt"}]}"#).as_deref(),
            Some("/p/a.txt (+1 more)")
        );
        assert_eq!(
            d(r#"{"path":"/p/n.txt","new_text":"x"}"#).as_deref(),
            Some("/p/n.txt")
        );
    }

    #[test]
    fn codex_patch() {
        let r = input(
            r#"{"input":"*** Begin Patch\n*** Add File: n.txt\n+hi\n*** Update File: src/m.rs\n@@\n*** End Patch"}"#,
        );
        assert_eq!(
            ToolInput::parse(r).touched("apply_patch"),
            vec![(FileOp::Write, "n.txt"), (FileOp::Edit, "src/m.rs")]
        );
    }
}
