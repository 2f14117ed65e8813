//! The document reader (docs/architecture.md §12.2) as the server runs it: the real
//! binary's `extract-worker` helper under its limits, given files made here — a PDF with
//! accented text on two pages, a scanned page, a DOCX, an XLSX, an EPUB — and files made to
//! hurt it: damaged, deeply nested, too many pages, too big for its memory.

use std::io::{Cursor, Write};
use std::time::Duration;

use skald::extract::{Extractor, Failure, Kind, Limits};

use crate::support::BIN;

fn reader() -> Extractor {
    Extractor::new(BIN.into(), Limits::default())
}

/// A PDF of `objects` (numbered from 1, the first the catalog), with a correct xref.
fn pdf_of(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (index, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n", index + 1).as_bytes());
        out.extend(object);
        out.extend(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for offset in offsets {
        out.extend(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    out
}

fn stream(dictionary: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!("<< {dictionary} /Length {} >>\nstream\n", body.len()).into_bytes();
    out.extend(body);
    out.extend(b"\nendstream");
    out
}

/// Pages of Helvetica text; each page's text in WinAnsi bytes (é is \351).
pub(crate) fn text_pdf(pages: &[&[u8]]) -> Vec<u8> {
    let count = pages.len();
    let kids: Vec<String> = (0..count).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!("<< /Type /Pages /Kids [{}] /Count {count} >>", kids.join(" ")).into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec(),
    ];
    for (i, text) in pages.iter().enumerate() {
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
                5 + 2 * i
            )
            .into_bytes(),
        );
        let mut content = b"BT /F1 24 Tf 72 700 Td (".to_vec();
        content.extend(*text);
        content.extend(b") Tj ET");
        objects.push(stream("", &content));
    }
    pdf_of(&objects)
}

fn zip_of(members: &[(&str, &str)]) -> Vec<u8> {
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, body) in members {
        out.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
        out.write_all(body.as_bytes()).unwrap();
    }
    out.finish().unwrap().into_inner()
}

/// A workbook of one sheet, "Budget", holding `rows` (`<row>` elements).
pub(crate) fn xlsx_of(rows: &str) -> Vec<u8> {
    zip_of(&[
        (
            "[Content_Types].xml",
            r#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#,
        ),
        (
            "_rels/.rels",
            r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#,
        ),
        (
            "xl/workbook.xml",
            r#"<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Budget" sheetId="1" r:id="rId1"/></sheets></workbook>"#,
        ),
        (
            "xl/_rels/workbook.xml.rels",
            r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#,
        ),
        (
            "xl/worksheets/sheet1.xml",
            &format!(
                r#"<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{rows}</sheetData></worksheet>"#
            ),
        ),
    ])
}

#[tokio::test]
async fn a_pdf_gives_its_accented_text_page_by_page() {
    let pdf = text_pdf(&[b"Caf\xe9 cr\xe8me for the lease", b"The second page"]);
    assert_eq!(skald::extract::sniff(&pdf, "lease.bin"), Ok(Kind::Pdf));
    let read = reader().extract(Kind::Pdf, &pdf).await.expect("the PDF is read");
    assert_eq!(read.pages.len(), 2, "{read:?}");
    assert!(read.pages[0].contains("Café crème"), "{read:?}");
    assert!(read.pages[1].contains("second page"), "{read:?}");
    assert!(!read.ocr_missing && !read.ocr_used);
}

/// A grey JPEG of `words` in black on white, as a scanner makes one (ImageMagick's
/// `convert`, deps.sh test).
pub(crate) fn scan_of(words: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let jpeg = dir.path().join("scan.jpg");
    let made = std::process::Command::new("convert")
        .args(["-size", "900x200", "xc:white", "-font", "DejaVu-Sans", "-pointsize", "56", "-fill", "black"])
        .args(["-annotate", "+30+120"])
        .arg(words)
        .args(["-type", "Grayscale"])
        .arg(&jpeg)
        .status()
        .expect("ImageMagick's convert (deps.sh test) makes the scan");
    assert!(made.success());
    std::fs::read(&jpeg).unwrap()
}

/// A PDF of one scanned page: `jpeg` drawn over the page, no text.
pub(crate) fn scanned_pdf(jpeg: &[u8]) -> Vec<u8> {
    pdf_of(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 900 200] /Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>"
            .to_vec(),
        stream(
            "/Type /XObject /Subtype /Image /Width 900 /Height 200 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode",
            jpeg,
        ),
        stream("", b"q 900 0 0 200 0 0 cm /Im0 Do Q"),
    ])
}

#[tokio::test]
async fn a_scanned_page_is_read_by_ocr() {
    let jpeg = scan_of("Invoice total 42 euros");
    let pdf = scanned_pdf(&jpeg);
    let read = reader().extract(Kind::Pdf, &pdf).await.expect("the scan is read");
    assert!(read.ocr_used, "{read:?}");
    assert!(read.pages[0].contains("Invoice total 42"), "{read:?}");
    // The picture itself, as an image upload.
    let read = reader().extract(Kind::Jpeg, &jpeg).await.expect("the picture is read");
    assert!(read.pages[0].contains("Invoice"), "{read:?}");
}

#[tokio::test]
async fn office_and_book_files_give_their_text() {
    let docx = zip_of(&[
        ("[Content_Types].xml", "<Types/>"),
        (
            "word/document.xml",
            r#"<?xml version="1.0"?><w:document xmlns:w="w"><w:body><w:p><w:r><w:t>The boiler is serviced in March.</w:t></w:r></w:p></w:body></w:document>"#,
        ),
    ]);
    assert_eq!(skald::extract::sniff(&docx, "x"), Ok(Kind::Docx));
    let read = reader().extract(Kind::Docx, &docx).await.expect("the DOCX is read");
    assert!(read.pages[0].contains("boiler is serviced"), "{read:?}");

    let xlsx =
        xlsx_of(r#"<row r="1"><c r="A1" t="inlineStr"><is><t>Groceries</t></is></c><c r="B1"><v>312</v></c></row>"#);
    assert_eq!(skald::extract::sniff(&xlsx, "x"), Ok(Kind::Xlsx));
    let read = reader().extract(Kind::Xlsx, &xlsx).await.expect("the XLSX is read");
    assert!(read.pages[0].contains("Sheet: Budget"), "{read:?}");
    assert!(read.pages[0].contains("Groceries\t312"), "{read:?}");

    let epub = zip_of(&[
        ("mimetype", "application/epub+zip"),
        (
            "META-INF/container.xml",
            r#"<?xml version="1.0"?><container><rootfiles><rootfile full-path="OEBPS/book.opf"/></rootfiles></container>"#,
        ),
        (
            "OEBPS/book.opf",
            r#"<?xml version="1.0"?><package><manifest><item id="c1" href="one.xhtml"/><item id="c2" href="two.xhtml"/></manifest><spine><itemref idref="c2"/><itemref idref="c1"/></spine></package>"#,
        ),
        ("OEBPS/one.xhtml", "<html><body><p>Chapter about otters.</p></body></html>"),
        (
            "OEBPS/two.xhtml",
            "<html><body><p>Foreword on rivers.</p><script>var x = 'never shown';</script></body></html>",
        ),
    ]);
    assert_eq!(skald::extract::sniff(&epub, "x"), Ok(Kind::Epub));
    let read = reader().extract(Kind::Epub, &epub).await.expect("the EPUB is read");
    let text = read.pages.concat();
    let (foreword, otters) = (text.find("Foreword on rivers").unwrap(), text.find("Chapter about otters").unwrap());
    assert!(foreword < otters, "the spine's order: {text}");
    assert!(!text.contains("never shown"), "{text}");
}

#[tokio::test]
async fn damaged_nested_and_oversized_files_fail_in_words_and_the_next_file_still_reads() {
    let reader = Extractor::new(BIN.into(), Limits { time: Duration::from_secs(20), ..Limits::default() });
    let damaged = reader.extract(Kind::Pdf, b"%PDF-1.4\nthis is not a PDF at all").await;
    assert!(matches!(damaged, Err(Failure::Unreadable(_))), "{damaged:?}");

    // Nesting a parser might recurse into until its stack runs out.
    let mut nested = b"<< /Type /Catalog /Pages 2 0 R /Deep ".to_vec();
    nested.extend(std::iter::repeat_n(b'[', 200_000));
    nested.extend(std::iter::repeat_n(b']', 200_000));
    nested.extend(b" >>");
    let nested = pdf_of(&[nested, b"<< /Type /Pages /Kids [] /Count 0 >>".to_vec()]);
    let deep = reader.extract(Kind::Pdf, &nested).await;
    assert!(deep.is_err(), "{deep:?}");

    // A page tree claiming more pages than a document may have.
    let many = 2_500;
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {many} >>",
            (0..many).map(|i| format!("{} 0 R", i + 3)).collect::<Vec<_>>().join(" ")
        )
        .into_bytes(),
    ];
    objects.extend((0..many).map(|_| b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>".to_vec()));
    let too_many = reader.extract(Kind::Pdf, &pdf_of(&objects)).await;
    assert!(matches!(&too_many, Err(Failure::Unreadable(why)) if why.contains("2500 pages")), "{too_many:?}");

    // A reader held to a little memory gives up on a huge sheet in words, not by crashing.
    // Its clock is long, so that on a loaded machine only the memory limit can end it.
    let tight = Extractor::new(BIN.into(), Limits { memory: 256 << 20, time: Duration::from_secs(900) });
    let rows = r#"<row><c t="inlineStr"><is><t>a word in a cell</t></is></c></row>"#.repeat(4_000_000);
    let starved = tight.extract(Kind::Xlsx, &xlsx_of(&rows)).await;
    assert_eq!(starved, Err(Failure::TooBig));

    let fine = reader.extract(Kind::Text, "still here".as_bytes()).await.expect("the next file reads");
    assert_eq!(fine.pages, ["still here"]);
}
