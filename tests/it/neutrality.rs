//! The neutrality rule (blueprint §0.1): the names we declare, the SQL and the comments in
//! `src/`, `src-tauri/` and `database/migrations/` never use the domain words. Preset
//! labels (`database/presets/`), UI copy and the README may.

use std::path::Path;

const FORBIDDEN: [&str; 13] = [
    "family",
    "families",
    "household",
    "households",
    "parent",
    "parents",
    "child",
    "children",
    "kid",
    "kids",
    "minor",
    "minors",
    "kiddo",
];

/// Library names we call but did not choose; removed from a line before it is checked.
const LIBRARY_NAMES: [&str; 9] = [
    ".parent()",
    "child_token",
    "process::Child",
    "ChildStdin",
    "ChildStdout",
    "ChildStderr",
    "::Child",
    // rustix's name for prctl(PR_SET_PDEATHSIG).
    "set_parent_process_death_signal",
    // The PDF format's key for a page's link up its page tree (ISO 32000 7.7.3).
    "b\"Parent\"",
];

/// The forbidden words a line uses, after splitting identifiers at `_` and case changes.
fn domain_words(line: &str) -> Vec<String> {
    let mut line = line.to_owned();
    for name in LIBRARY_NAMES {
        line = line.replace(name, " ");
    }
    line.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .flat_map(identifier_parts)
        .filter(|part| FORBIDDEN.contains(&part.as_str()))
        .collect()
}

/// `parentId` → [parent, id]; `CHILD_COUNT` → [child, count]; `kids2` → [kids2] is not split.
fn identifier_parts(token: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for piece in token.split('_') {
        let mut current = String::new();
        let chars: Vec<char> = piece.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            let boundary = i > 0
                && c.is_ascii_uppercase()
                && (chars[i - 1].is_ascii_lowercase() || chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase()));
            if boundary && !current.is_empty() {
                parts.push(std::mem::take(&mut current).to_ascii_lowercase());
            }
            current.push(c);
        }
        if !current.is_empty() {
            parts.push(current.to_ascii_lowercase());
        }
    }
    parts
}

#[test]
fn the_splitter_finds_domain_words_inside_identifiers() {
    assert_eq!(domain_words("let parentId = 1;"), ["parent"]);
    assert_eq!(domain_words("CREATE TABLE kid_accounts"), ["kid"]);
    assert_eq!(domain_words("struct HouseholdMember;"), ["household"]);
    assert_eq!(domain_words("// the Children of"), ["children"]);
    assert!(domain_words("path.parent() and token.child_token()").is_empty());
    assert!(domain_words("supervisor caller callee kidney").is_empty());
}

#[test]
fn code_schema_and_comments_never_use_domain_words() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "src-tauri", "database/migrations"] {
        crate::support::files_under(&root.join(dir), &[], &mut files);
    }
    assert!(files.len() > 5, "the scan sees the sources");
    let mut hits = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        }; // icons and other binaries
        for (n, line) in text.lines().enumerate() {
            let words = domain_words(line);
            if !words.is_empty() {
                hits.push(format!(
                    "{}:{}: {words:?}: {}",
                    file.strip_prefix(root).unwrap().display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(hits.is_empty(), "domain words in code (blueprint §0.1):\n{}", hits.join("\n"));
}
