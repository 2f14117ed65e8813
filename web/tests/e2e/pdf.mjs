// Writes a small, valid PDF by hand: one line of Helvetica text per page, uncompressed, with
// its cross-reference table's offsets counted here. Enough for pdf.js to draw each page and
// lay its words out as a text layer, with no PDF library on the machine.
//
// Not a test file itself (node --test picks *.test.mjs only).

/**
 * A PDF string literal for `text`: Latin-1 bytes (WinAnsiEncoding agrees with it on the
 * letters used here, é and è among them), written as octal escapes above ASCII so the whole
 * file stays 7-bit, and `(`, `)` and `\` escaped.
 */
function pdfString(text) {
  let out = '(';
  for (const char of text) {
    const code = char.codePointAt(0);
    if (code > 0xff) throw new Error(`${char} is not Latin-1`);
    if (char === '(' || char === ')' || char === '\\') out += `\\${char}`;
    else if (code < 0x20 || code > 0x7e) out += `\\${code.toString(8).padStart(3, '0')}`;
    else out += char;
  }
  return `${out})`;
}

/**
 * A PDF with one page per item of `pages`, each showing that text in 24-point Helvetica
 * (not embedded: a viewer takes the standard font's metrics, and a system font to draw it).
 * Returns its bytes as a Buffer.
 */
export function tinyPdf(pages) {
  // Objects 1 (catalog), 2 (page tree), 3 (font), then a page and its contents for each page.
  const pageIds = pages.map((_, i) => 4 + 2 * i);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  ];
  for (const [i, text] of pages.entries()) {
    const contentsId = pageIds[i] + 1;
    const stream = `BT /F1 24 Tf 40 120 Td ${pdfString(text)} Tj ET\n`;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 240] /Resources << /Font << /F1 3 0 R >> >> /Contents ${contentsId} 0 R >>`);
    objects.push(`<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}endstream`);
  }
  // The binary comment tells file tools this is not text, as the specification suggests.
  let body = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets = [];
  for (const [i, object] of objects.entries()) {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  }
  const xref = Buffer.byteLength(body, 'latin1');
  // Each entry is exactly 20 bytes, its line ending included.
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}
