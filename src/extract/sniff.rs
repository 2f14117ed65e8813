//! What a file is, told from its bytes (docs/architecture.md §12.2). The name a person
//! gave it decides nothing a file's bytes can contradict: a PNG named `notes.txt` is a PNG,
//! an SVG named `photo.png` is refused. Only among plain-text files, whose bytes cannot say
//! whether they are Markdown or CSV, does the name's ending choose the flavour.

use std::io::{Cursor, Read};

use serde::{Deserialize, Serialize};

/// The kinds of file Skald keeps and reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "DocumentKind")]
pub enum Kind {
    Pdf,
    Png,
    Jpeg,
    Webp,
    Gif,
    Text,
    Markdown,
    Csv,
    Docx,
    Xlsx,
    Pptx,
    Odt,
    Html,
    Epub,
}

impl Kind {
    pub const ALL: [Kind; 14] = [
        Kind::Pdf,
        Kind::Png,
        Kind::Jpeg,
        Kind::Webp,
        Kind::Gif,
        Kind::Text,
        Kind::Markdown,
        Kind::Csv,
        Kind::Docx,
        Kind::Xlsx,
        Kind::Pptx,
        Kind::Odt,
        Kind::Html,
        Kind::Epub,
    ];

    /// As stored and as the API says it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Pdf => "pdf",
            Kind::Png => "png",
            Kind::Jpeg => "jpeg",
            Kind::Webp => "webp",
            Kind::Gif => "gif",
            Kind::Text => "text",
            Kind::Markdown => "markdown",
            Kind::Csv => "csv",
            Kind::Docx => "docx",
            Kind::Xlsx => "xlsx",
            Kind::Pptx => "pptx",
            Kind::Odt => "odt",
            Kind::Html => "html",
            Kind::Epub => "epub",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == text)
    }

    /// The media type the original is served with. HTML is served as plain text: a kept
    /// page must never run in Skald's origin.
    pub fn media_type(self) -> &'static str {
        match self {
            Kind::Pdf => "application/pdf",
            Kind::Png => "image/png",
            Kind::Jpeg => "image/jpeg",
            Kind::Webp => "image/webp",
            Kind::Gif => "image/gif",
            Kind::Text | Kind::Html => "text/plain; charset=utf-8",
            Kind::Markdown => "text/markdown; charset=utf-8",
            Kind::Csv => "text/csv; charset=utf-8",
            Kind::Docx => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            Kind::Xlsx => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            Kind::Pptx => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
            Kind::Odt => "application/vnd.oasis.opendocument.text",
            Kind::Epub => "application/epub+zip",
        }
    }

    pub fn is_image(self) -> bool {
        matches!(self, Kind::Png | Kind::Jpeg | Kind::Webp | Kind::Gif)
    }
}

/// Why a file is not kept, in words for the person who sent it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("the file is empty")]
    Empty,
    #[error("this is {0}, which Skald does not keep: it could run code when opened")]
    Dangerous(&'static str),
    #[error(
        "Skald cannot read this kind of file; it reads PDF, PNG, JPEG, WebP, GIF, text, Markdown, CSV, \
         DOCX, XLSX, PPTX, ODT, HTML and EPUB"
    )]
    Unknown,
}

/// The kind of a file from its first bytes (all of them for a zip's table of contents),
/// `name` choosing only among text flavours.
pub fn sniff(bytes: &[u8], name: &str) -> Result<Kind, Refused> {
    if bytes.is_empty() {
        return Err(Refused::Empty);
    }
    if let Some(dangerous) = executable(bytes) {
        return Err(Refused::Dangerous(dangerous));
    }
    if bytes.starts_with(b"%PDF-") {
        return Ok(Kind::Pdf);
    }
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Ok(Kind::Png);
    }
    if bytes.starts_with(b"\xff\xd8\xff") {
        return Ok(Kind::Jpeg);
    }
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return Ok(Kind::Webp);
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        return Ok(Kind::Gif);
    }
    if bytes.starts_with(b"PK\x03\x04") {
        return zipped(bytes);
    }
    text(bytes, name)
}

/// What an executable or script header says the file is.
fn executable(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x7fELF") {
        Some("a Linux program")
    } else if bytes.starts_with(b"MZ") {
        Some("a Windows program")
    } else if [
        &b"\xfe\xed\xfa\xce"[..],
        b"\xfe\xed\xfa\xcf",
        b"\xce\xfa\xed\xfe",
        b"\xcf\xfa\xed\xfe",
        b"\xca\xfe\xba\xbe",
    ]
    .iter()
    .any(|magic| bytes.starts_with(magic))
    {
        Some("a macOS program")
    } else if bytes.starts_with(b"#!") {
        Some("a script")
    } else {
        None
    }
}

/// An Office, OpenDocument or EPUB file, from the names (and `mimetype`) inside the zip.
fn zipped(bytes: &[u8]) -> Result<Kind, Refused> {
    let Ok(mut archive) = zip::ZipArchive::new(Cursor::new(bytes)) else {
        return Err(Refused::Unknown);
    };
    let has = |archive: &zip::ZipArchive<Cursor<&[u8]>>, name: &str| archive.index_for_name(name).is_some();
    if has(&archive, "word/document.xml") {
        return Ok(Kind::Docx);
    }
    if has(&archive, "xl/workbook.xml") {
        return Ok(Kind::Xlsx);
    }
    if has(&archive, "ppt/presentation.xml") {
        return Ok(Kind::Pptx);
    }
    let mut declared = String::new();
    if let Ok(member) = archive.by_name("mimetype") {
        // A `mimetype` member is a few dozen bytes; a longer one is not one of these.
        let _ = member.take(100).read_to_string(&mut declared);
    }
    match declared.trim() {
        "application/vnd.oasis.opendocument.text" => Ok(Kind::Odt),
        "application/epub+zip" => Ok(Kind::Epub),
        _ => Err(Refused::Unknown),
    }
}

/// UTF-8 text, then which flavour: HTML from its start, SVG refused, else by the name's ending.
fn text(bytes: &[u8], name: &str) -> Result<Kind, Refused> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Err(Refused::Unknown);
    };
    // Control characters other than whitespace mark a binary file that happens to decode.
    if text.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\u{c}')) {
        return Err(Refused::Unknown);
    }
    let head: String = text.trim_start().chars().take(1024).collect::<String>().to_ascii_lowercase();
    if head.contains("<svg") {
        return Err(Refused::Dangerous("an SVG drawing, which can carry scripts"));
    }
    if head.starts_with("<!doctype html") || head.starts_with("<html") {
        return Ok(Kind::Html);
    }
    let lower = name.to_ascii_lowercase();
    let ending = lower.rsplit_once('.').map(|(_, ending)| ending).unwrap_or("");
    Ok(match ending {
        "md" | "markdown" => Kind::Markdown,
        "csv" => Kind::Csv,
        "htm" | "html" => Kind::Html,
        _ => Kind::Text,
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn zip_of(members: &[(&str, &str)]) -> Vec<u8> {
        let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, body) in members {
            out.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
            out.write_all(body.as_bytes()).unwrap();
        }
        out.finish().unwrap().into_inner()
    }

    #[test]
    fn bytes_decide_and_the_name_only_picks_a_text_flavour() {
        assert_eq!(sniff(b"%PDF-1.7\n...", "notes.txt"), Ok(Kind::Pdf));
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n....", "a.pdf"), Ok(Kind::Png));
        assert_eq!(sniff(b"\xff\xd8\xff\xe0..", "a"), Ok(Kind::Jpeg));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 ", "a"), Ok(Kind::Webp));
        assert_eq!(sniff(b"GIF89a..", "a"), Ok(Kind::Gif));
        assert_eq!(sniff("# Titre\n\nCafé".as_bytes(), "read.MD"), Ok(Kind::Markdown));
        assert_eq!(sniff(b"a,b\n1,2\n", "sums.csv"), Ok(Kind::Csv));
        assert_eq!(sniff(b"plain words", "x.csv.exe"), Ok(Kind::Text));
        assert_eq!(sniff(b"\xef\xbb\xbf  <!DOCTYPE html><p>hi", "page.txt"), Ok(Kind::Html));
    }

    #[test]
    fn programs_scripts_svg_and_binary_blobs_are_refused() {
        assert!(matches!(sniff(b"\x7fELF\x02\x01", "photo.png"), Err(Refused::Dangerous(_))));
        assert!(matches!(sniff(b"MZ\x90\0", "a.pdf"), Err(Refused::Dangerous(_))));
        assert!(matches!(sniff(b"#!/bin/sh\nrm -rf ~", "notes.txt"), Err(Refused::Dangerous(_))));
        let svg = b"<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>";
        assert!(matches!(sniff(svg, "image.png"), Err(Refused::Dangerous(_))));
        assert_eq!(sniff(b"\0\x01\x02binary", "a.txt"), Err(Refused::Unknown));
        assert_eq!(sniff(b"\xc3\x28 not utf-8", "a.txt"), Err(Refused::Unknown));
        assert_eq!(sniff(b"", "a.txt"), Err(Refused::Empty));
    }

    #[test]
    fn zips_are_told_apart_by_what_they_hold() {
        assert_eq!(sniff(&zip_of(&[("word/document.xml", "<w/>")]), "a.zip"), Ok(Kind::Docx));
        assert_eq!(sniff(&zip_of(&[("xl/workbook.xml", "<x/>")]), "a"), Ok(Kind::Xlsx));
        assert_eq!(sniff(&zip_of(&[("ppt/presentation.xml", "<p/>")]), "a"), Ok(Kind::Pptx));
        assert_eq!(sniff(&zip_of(&[("mimetype", "application/epub+zip")]), "a"), Ok(Kind::Epub));
        assert_eq!(sniff(&zip_of(&[("mimetype", "application/vnd.oasis.opendocument.text")]), "a"), Ok(Kind::Odt));
        assert_eq!(sniff(&zip_of(&[("readme.txt", "hello")]), "a.docx"), Err(Refused::Unknown));
        assert_eq!(sniff(b"PK\x03\x04 truncated", "a.docx"), Err(Refused::Unknown));
    }
}
