//! The design in the repository: comments, SQL, tests and UI code cite sections of the
//! design by number (a section sign and `8.4`), and every number cited must be a heading
//! of `docs/architecture.md`, so someone who clones the repository can follow it. A
//! section of another document (`RFC 9112` and its number) is that document's, not ours.

use std::collections::BTreeSet;
use std::path::Path;

/// The section sign, spelled as an escape so this file cites nothing itself.
const SIGN: char = '\u{a7}';

/// Where citations are looked for, from the repository's root.
const SCANNED: [&str; 6] = ["src", "web/src", "tests", "src-tauri", "database", "agents"];

/// The kinds of file that carry citations.
const EXTENSIONS: [&str; 5] = ["rs", "ts", "sql", "md", "json"];

/// Build outputs, installed packages and the RustSec advisory snapshot kept for the
/// dependency lint (`tests/lint/advisory-db`): not the project's own text, and an
/// advisory's section signs cite its own paper, not our design.
const SKIPPED_DIRS: [&str; 4] = ["advisory-db", "dist", "node_modules", "target"];

const DESIGN: &str = "docs/architecture.md";

/// The section numbers a line cites, in order: the sign, then digits, then any further
/// `.digits`. A number right after `RFC <n>` belongs to that RFC and is left out.
fn citations(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in line.match_indices(SIGN) {
        let rest = &line[at + SIGN.len_utf8()..];
        let mut end = rest.bytes().take_while(u8::is_ascii_digit).count();
        if end == 0 {
            continue;
        }
        loop {
            let more = rest[end..].strip_prefix('.').map_or(0, |r| r.bytes().take_while(u8::is_ascii_digit).count());
            if more == 0 {
                break;
            }
            end += 1 + more;
        }
        if !cites_an_rfc(&line[..at]) {
            found.push(format!("{SIGN}{}", &rest[..end]));
        }
    }
    found
}

/// Whether the text before a section sign ends with `RFC <digits>`.
fn cites_an_rfc(before: &str) -> bool {
    let before = before.trim_end();
    let digits = before.len() - before.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    digits > 0 && before[..before.len() - digits].trim_end().ends_with("RFC")
}

/// The section numbers the design has as headings: a line starting with `#` that holds
/// the number followed by a space.
fn headings(design: &str) -> BTreeSet<String> {
    design
        .lines()
        .filter(|line| line.starts_with('#'))
        .flat_map(|line| citations(line).into_iter().filter(move |number| line.contains(&format!("{number} "))))
        .collect()
}

#[test]
fn the_scanner_reads_section_numbers() {
    let cite = |text: &str| citations(&text.replace('$', &SIGN.to_string()));
    let numbers = |list: &[&str]| list.iter().map(|n| format!("{SIGN}{n}")).collect::<Vec<_>>();
    assert_eq!(cite("the gate ($8.4)."), numbers(&["8.4"]));
    assert_eq!(cite("turns ($8.1, $8.6.2) and $16's tiers"), numbers(&["8.1", "8.6.2", "16"]));
    assert_eq!(cite("at the end of a sentence, $3."), numbers(&["3"]));
    assert!(cite("two headers (RFC 9112 $3.2: 400) and RFC 3986 $6.2.2").is_empty());
    assert!(cite("a bare $ sign, or $x").is_empty());
    let design = "## $8 The agent\n### $8.4 The approval gate\nText naming $9 in passing.\n#### $9.1\n"
        .replace('$', &SIGN.to_string());
    assert_eq!(headings(&design), numbers(&["8", "8.4"]).into_iter().collect());
}

#[test]
fn every_cited_section_is_a_heading_of_the_design() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let design = std::fs::read_to_string(root.join(DESIGN)).expect("docs/architecture.md is in the repository");
    let sections = headings(&design);
    assert!(sections.len() > 10, "the design's headings are numbered: {sections:?}");
    let mut files = Vec::new();
    for dir in SCANNED {
        crate::support::files_under(&root.join(dir), &SKIPPED_DIRS, &mut files);
    }
    files.retain(|path| path.extension().and_then(|e| e.to_str()).is_some_and(|e| EXTENSIONS.contains(&e)));
    files.sort();
    assert!(files.len() > 50, "the scan sees the sources");
    let (mut cited, mut missing) = (0, Vec::new());
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            for number in citations(line) {
                cited += 1;
                if !sections.contains(&number) {
                    missing.push(format!("{}:{}: {number}", file.strip_prefix(root).unwrap().display(), n + 1));
                }
            }
        }
    }
    assert!(cited > 100, "the scan finds the citations ({cited})");
    assert!(missing.is_empty(), "sections cited but not headings of {DESIGN}:\n{}", missing.join("\n"));
}
