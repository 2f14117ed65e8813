//! The readers of each kind, run only inside the extraction helper (`worker.rs`): a
//! parser that panics, loops or swells here costs that one document, never the server.
//! Each returns the text by page: a PDF's pages, a presentation's slides, a spreadsheet's
//! sheets; a flowing text (a letter, an EPUB, a web page) is cut into pages of about
//! [`PAGE_CHARS`] at line ends, so a page is always something one can cite and read whole.
//!
//! Nothing here writes a file: the bytes come from memory, the programs it runs
//! (`pdftotext`, `pdftoppm`, `tesseract`) read them from a pipe and answer on one.

use std::io::{Cursor, Read, Write};
use std::process::{Command, Stdio};

use quick_xml::events::Event;

use super::sniff::Kind;
use super::{Extracted, Unreadable};

/// About how long a page of flowing text is, in characters.
pub const PAGE_CHARS: usize = 3_000;
/// The most pages a document may have: more is a bomb or a book too long to ask about.
pub const MAX_PAGES: usize = 2_000;
/// A page holding fewer letters than this is taken for a scan and read by OCR.
const SCANNED_BELOW: usize = 16;
/// The most bytes any one member of a zip is inflated to.
const MAX_MEMBER_BYTES: u64 = 256 << 20;

/// Reads `bytes` of kind `kind`.
pub fn read(kind: Kind, bytes: &[u8]) -> Result<Extracted, Unreadable> {
    match kind {
        Kind::Pdf => pdf(bytes),
        Kind::Png | Kind::Jpeg | Kind::Webp | Kind::Gif => image(bytes),
        Kind::Text | Kind::Markdown | Kind::Csv => Ok(flowing(&utf8(bytes))),
        Kind::Html => Ok(flowing(&super::html::html_to_text(&utf8(bytes)))),
        Kind::Docx => Ok(flowing(&xml_text(&member(bytes, "word/document.xml")?, &DOCX))),
        Kind::Odt => Ok(flowing(&xml_text(&member(bytes, "content.xml")?, &ODT))),
        Kind::Pptx => pptx(bytes),
        Kind::Xlsx => xlsx(bytes),
        Kind::Epub => epub(bytes),
    }
}

fn utf8(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    String::from_utf8_lossy(bytes).into_owned()
}

/// Flowing text cut into pages at line ends (or, for one endless line, anywhere).
pub fn flowing(text: &str) -> Extracted {
    let mut pages = Vec::new();
    let mut page = String::new();
    for line in text.split_inclusive('\n') {
        if !page.is_empty() && page.chars().count() + line.chars().count() > PAGE_CHARS {
            pages.push(std::mem::take(&mut page));
        }
        if line.chars().count() > PAGE_CHARS {
            let chars: Vec<char> = line.chars().collect();
            for piece in chars.chunks(PAGE_CHARS) {
                if !page.is_empty() {
                    pages.push(std::mem::take(&mut page));
                }
                page.extend(piece);
            }
        } else {
            page.push_str(line);
        }
    }
    if !page.trim().is_empty() {
        pages.push(page);
    }
    Extracted::new(pages)
}

fn letters(text: &str) -> usize {
    text.chars().filter(|c| c.is_alphanumeric()).count()
}

// ---- PDF ------------------------------------------------------------------------------

fn pdf(bytes: &[u8]) -> Result<Extracted, Unreadable> {
    let pages = match pdf_pages(bytes)? {
        Some(pages) => pages,
        // lopdf is stricter than poppler about damaged files; poppler gets a say.
        None => pdftotext(bytes)?,
    };
    if pages.is_empty() {
        return Err(Unreadable::Damaged("a PDF with no pages"));
    }
    let mut extracted = Extracted::new(pages.iter().map(|p| tidy(p)).collect());
    let scanned: Vec<usize> =
        (0..extracted.pages.len()).filter(|&i| letters(&extracted.pages[i]) < SCANNED_BELOW).collect();
    if !scanned.is_empty() {
        if !has_program("tesseract") || !has_program("pdftoppm") {
            extracted.ocr_missing = true;
        } else {
            for index in scanned {
                let image = run(
                    "pdftoppm",
                    &[
                        "-r",
                        "200",
                        "-gray",
                        "-png",
                        "-f",
                        &(index + 1).to_string(),
                        "-l",
                        &(index + 1).to_string(),
                        "fd://0",
                    ],
                    bytes,
                )?;
                let read = ocr(&image)?;
                if letters(&read) > letters(&extracted.pages[index]) {
                    extracted.pages[index] = read;
                    extracted.ocr_used = true;
                }
            }
        }
    }
    Ok(extracted)
}

/// Text by page read in this process (pdf-extract, on lopdf), untidied; `None` when it
/// cannot read the file. pdf-extract panics on some damaged files (found by fuzzing):
/// that too is a file it cannot read, and poppler still gets its say.
pub(crate) fn pdf_pages(bytes: &[u8]) -> Result<Option<Vec<String>>, Unreadable> {
    let counted = std::panic::catch_unwind(|| {
        pdf_extract::Document::load_mem(bytes).map(|doc| (doc.get_pages().len(), page_trees_end(&doc)))
    });
    let Ok(Ok((count, true))) = counted else { return Ok(None) };
    if count > MAX_PAGES {
        return Err(Unreadable::TooManyPages(count));
    }
    let read = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem_by_pages(bytes));
    Ok(read.ok().and_then(Result::ok).map(|mut pages| {
        pages.resize(count.max(pages.len()), String::new());
        pages
    }))
}

/// Whether every page's links up its page tree end: pdf-extract climbs them for inherited
/// attributes and never stops on a loop (found by fuzzing: a page whose link up is itself).
fn page_trees_end(doc: &pdf_extract::Document) -> bool {
    doc.get_pages().values().all(|&page| {
        let mut seen = std::collections::HashSet::new();
        let mut at = page;
        while seen.insert(at) {
            let up = doc.get_dictionary(at).and_then(|node| node.get(b"Parent")).and_then(|p| p.as_reference());
            match up {
                Ok(next) => at = next,
                Err(_) => return true,
            }
        }
        false
    })
}

/// Text by page through Debian's `pdftotext`, when it is there: pages end in form feeds.
fn pdftotext(bytes: &[u8]) -> Result<Vec<String>, Unreadable> {
    if !has_program("pdftotext") {
        return Err(Unreadable::Damaged("a PDF Skald's reader cannot open (installing poppler-utils may help)"));
    }
    let out = run("pdftotext", &["-q", "-enc", "UTF-8", "fd://0", "-"], bytes)
        .map_err(|_| Unreadable::Damaged("a damaged PDF that no reader here can open"))?;
    let text = String::from_utf8_lossy(&out);
    let mut pages: Vec<String> = text.split('\u{c}').map(str::to_owned).collect();
    // The last form feed ends the last page; what follows it is nothing.
    if pages.last().is_some_and(|p| p.trim().is_empty()) {
        pages.pop();
    }
    if pages.len() > MAX_PAGES {
        return Err(Unreadable::TooManyPages(pages.len()));
    }
    Ok(pages)
}

/// A page's text with its lines trimmed and runs of blank lines made one.
pub(crate) fn tidy(text: &str) -> String {
    let mut out = String::new();
    let mut blank = false;
    for line in text.lines().map(str::trim_end) {
        if line.trim().is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push('\n');
            blank = false;
        }
        out.push_str(line.trim_start());
        out.push('\n');
    }
    out
}

// ---- images ---------------------------------------------------------------------------

fn image(bytes: &[u8]) -> Result<Extracted, Unreadable> {
    if !has_program("tesseract") {
        let mut extracted = Extracted::new(vec![String::new()]);
        extracted.ocr_missing = true;
        return Ok(extracted);
    }
    let mut extracted = Extracted::new(vec![ocr(bytes)?]);
    extracted.ocr_used = true;
    Ok(extracted)
}

/// The words tesseract reads in an image, given and answered on pipes.
fn ocr(image: &[u8]) -> Result<String, Unreadable> {
    let out = run("tesseract", &["stdin", "stdout"], image)?;
    Ok(tidy(&String::from_utf8_lossy(&out)))
}

fn has_program(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
}

/// Runs `program` with `input` on its stdin; its stdout, or why it failed.
fn run(program: &str, args: &[&str], input: &[u8]) -> Result<Vec<u8>, Unreadable> {
    let mut process = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|_| Unreadable::Program(program.to_owned()))?;
    let mut stdin = process.stdin.take().expect("stdin was piped");
    let input = input.to_vec();
    // Written from another thread: a program that answers before reading all its input
    // would otherwise leave both ends waiting.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut out = Vec::new();
    let read = process.stdout.take().expect("stdout was piped").read_to_end(&mut out);
    let status = process.wait();
    let _ = writer.join();
    match (read, status) {
        (Ok(_), Ok(status)) if status.success() => Ok(out),
        _ => Err(Unreadable::Program(program.to_owned())),
    }
}

// ---- zipped formats -------------------------------------------------------------------

fn member(bytes: &[u8], name: &str) -> Result<String, Unreadable> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|_| Unreadable::Damaged("a damaged zip"))?;
    read_member(&mut archive, name)
}

fn read_member(archive: &mut zip::ZipArchive<Cursor<&[u8]>>, name: &str) -> Result<String, Unreadable> {
    let member = archive.by_name(name).map_err(|_| Unreadable::Damaged("a file with a part missing"))?;
    let mut text = String::new();
    member
        .take(MAX_MEMBER_BYTES)
        .read_to_string(&mut text)
        .map_err(|_| Unreadable::Damaged("a file whose parts do not unpack"))?;
    Ok(text)
}

/// Which XML elements carry text, and which end a line.
struct Vocabulary {
    text: &'static [&'static str],
    line_ends: &'static [&'static str],
    tabs: &'static [&'static str],
}

const DOCX: Vocabulary = Vocabulary { text: &["w:t"], line_ends: &["w:p", "w:br", "w:cr"], tabs: &["w:tab"] };
const ODT: Vocabulary = Vocabulary {
    text: &["text:p", "text:h", "text:span", "text:a", "text:list-item"],
    line_ends: &["text:p", "text:h", "text:line-break"],
    tabs: &["text:tab"],
};
const SLIDE: Vocabulary = Vocabulary { text: &["a:t"], line_ends: &["a:p", "a:br"], tabs: &[] };

/// The text of an Office or OpenDocument XML part: the characters inside the text
/// elements, with line ends where paragraphs end.
fn xml_text(xml: &str, words: &Vocabulary) -> String {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut out = String::new();
    let mut inside = 0usize;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) if words.text.contains(&e.name().as_ref()) => inside += 1,
            Ok(Event::Empty(e)) => {
                let name = e.name();
                if words.line_ends.contains(&name.as_ref()) {
                    out.push('\n');
                } else if words.tabs.contains(&name.as_ref()) {
                    out.push('\t');
                } else if name.as_ref() == "text:s" {
                    out.push(' ');
                }
            }
            Ok(Event::End(e)) => {
                let name = e.name();
                if words.text.contains(&name.as_ref()) {
                    inside = inside.saturating_sub(1);
                }
                if words.line_ends.contains(&name.as_ref()) {
                    out.push('\n');
                }
            }
            Ok(Event::Text(t)) if inside > 0 => out.push_str(&t.xml10_content()),
            Ok(Event::GeneralRef(r)) if inside > 0 => {
                if let Ok(Some(c)) = r.resolve_char_ref() {
                    out.push(c);
                } else {
                    out.push_str(match r.xml10_content().as_ref() {
                        "amp" => "&",
                        "lt" => "<",
                        "gt" => ">",
                        "quot" => "\"",
                        "apos" => "'",
                        _ => "",
                    });
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    out
}

/// A presentation: one page per slide, in the slides' order.
fn pptx(bytes: &[u8]) -> Result<Extracted, Unreadable> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|_| Unreadable::Damaged("a damaged zip"))?;
    let mut slides: Vec<(u32, String)> = archive
        .file_names()
        .filter_map(|name| {
            let name = name.ok()?;
            let number = name.strip_prefix("ppt/slides/slide")?.strip_suffix(".xml")?.parse().ok()?;
            Some((number, name.into_owned()))
        })
        .collect();
    slides.sort();
    if slides.len() > MAX_PAGES {
        return Err(Unreadable::TooManyPages(slides.len()));
    }
    let mut pages = Vec::new();
    for (_, name) in slides {
        pages.push(xml_text(&read_member(&mut archive, &name)?, &SLIDE));
    }
    Ok(Extracted::new(pages))
}

/// A workbook: one page per sheet (a long sheet over several), rows as tab-separated lines.
fn xlsx(bytes: &[u8]) -> Result<Extracted, Unreadable> {
    use calamine::Reader;
    let mut book: calamine::Xlsx<_> = calamine::open_workbook_from_rs(Cursor::new(bytes))
        .map_err(|_| Unreadable::Damaged("a damaged spreadsheet"))?;
    let mut pages = Vec::new();
    for name in book.sheet_names() {
        let Ok(range) = book.worksheet_range(&name) else { continue };
        let mut sheet = format!("Sheet: {name}\n");
        for row in range.rows() {
            let cells: Vec<String> = row.iter().map(ToString::to_string).collect();
            if cells.iter().all(String::is_empty) {
                continue;
            }
            sheet.push_str(cells.join("\t").trim_end());
            sheet.push('\n');
        }
        pages.extend(flowing(&sheet).pages);
        if pages.len() > MAX_PAGES {
            return Err(Unreadable::TooManyPages(pages.len()));
        }
    }
    Ok(Extracted::new(pages))
}

/// A book: its chapters in reading order (the package's spine), as flowing text.
fn epub(bytes: &[u8]) -> Result<Extracted, Unreadable> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|_| Unreadable::Damaged("a damaged zip"))?;
    let container = read_member(&mut archive, "META-INF/container.xml")?;
    let package_path = attribute_of(&container, "rootfile", "full-path")
        .into_iter()
        .next()
        .ok_or(Unreadable::Damaged("an EPUB that names no package"))?;
    let package = read_member(&mut archive, &package_path)?;
    let folder = package_path.rsplit_once('/').map(|(dir, _)| format!("{dir}/")).unwrap_or_default();
    let ids = attribute_of(&package, "item", "id");
    let hrefs = attribute_of(&package, "item", "href");
    let order = attribute_of(&package, "itemref", "idref");
    let mut text = String::new();
    for id in order {
        let Some(href) = ids.iter().position(|i| *i == id).and_then(|at| hrefs.get(at)) else { continue };
        let path = format!("{folder}{href}");
        if let Ok(chapter) = read_member(&mut archive, &path) {
            text.push_str(&super::html::html_to_text(&chapter));
            text.push_str("\n\n");
        }
    }
    let extracted = flowing(&text);
    if extracted.pages.len() > MAX_PAGES {
        return Err(Unreadable::TooManyPages(extracted.pages.len()));
    }
    Ok(extracted)
}

/// The values of `attribute` on every `element` in `xml`, in order; `None` entries are
/// kept as empty strings so two lists read from the same elements line up.
fn attribute_of(xml: &str, element: &str, attribute: &str) -> Vec<String> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut found = Vec::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == element => {
                let value = e
                    .attributes()
                    .flatten()
                    .find(|a| a.key.local_name().as_ref() == attribute)
                    .and_then(|a| a.normalized_value(quick_xml::XmlVersion::Implicit1_0).ok().map(|v| v.into_owned()))
                    .unwrap_or_default();
                found.push(value);
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by fuzzing: a damaged PDF on which pdf-extract panics is one it cannot read.
    #[test]
    fn a_pdf_that_makes_pdf_extract_panic_is_left_to_poppler() {
        let damaged = include_bytes!("../../fuzz/seeds/pdf_text/pdf-extract-panic.pdf");
        assert!(matches!(pdf_pages(damaged), Ok(None)));
    }

    /// Found by fuzzing: a page whose link up its tree is itself sent pdf-extract round for ever.
    #[test]
    fn a_pdf_whose_page_tree_loops_is_left_to_poppler() {
        let looped = include_bytes!("../../fuzz/seeds/pdf_text/page-tree-loop.pdf");
        assert!(matches!(pdf_pages(looped), Ok(None)));
    }

    #[test]
    fn flowing_text_is_cut_at_line_ends_into_pages_of_about_the_set_length() {
        let line = "word ".repeat(20) + "\n";
        let text = line.repeat(100);
        let extracted = flowing(&text);
        assert!(extracted.pages.len() > 1);
        assert!(extracted.pages.iter().all(|p| p.chars().count() <= PAGE_CHARS));
        assert_eq!(extracted.pages.concat(), text, "nothing lost, nothing added");
        let endless = "x".repeat(PAGE_CHARS * 2 + 5);
        assert_eq!(flowing(&endless).pages.len(), 3);
        assert!(flowing("  \n").pages.is_empty());
    }

    #[test]
    fn office_xml_gives_its_paragraphs_as_lines_and_nothing_of_its_markup() {
        let docx = r#"<w:document><w:body><w:p><w:r><w:t>Caf&#233; &amp; cr&#xE8;me</w:t></w:r><w:r><w:tab/><w:t xml:space="preserve"> bill</w:t></w:r></w:p><w:p><w:r><w:t>Second</w:t></w:r></w:p><w:sectPr><w:pgSz w:w="1"/></w:sectPr></w:body></w:document>"#;
        assert_eq!(xml_text(docx, &DOCX), "Café & crème\t bill\nSecond\n");
        let odt = r#"<office:text><text:h>Title</text:h><text:p>One<text:s/>two <text:span>three</text:span></text:p></office:text>"#;
        assert_eq!(xml_text(odt, &ODT), "Title\nOne two three\n");
    }

    #[test]
    fn attributes_line_up_element_by_element() {
        let opf = r#"<package><manifest><item id="a" href="one.xhtml"/><item id="b" href="two.xhtml"/></manifest><spine><itemref idref="b"/><itemref idref="a"/></spine></package>"#;
        assert_eq!(attribute_of(opf, "item", "href"), ["one.xhtml", "two.xhtml"]);
        assert_eq!(attribute_of(opf, "itemref", "idref"), ["b", "a"]);
    }

    #[test]
    fn tidy_trims_lines_and_keeps_one_blank_line_between_paragraphs() {
        assert_eq!(tidy("  a  \n\n\n\n b\n   \n"), "a\n\nb\n");
    }
}
