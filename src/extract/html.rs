//! Readable text from an HTML page, for `web_fetch` and for HTML and EPUB documents: the
//! visible words and the block structure a reader sees, without scripts, styles, comments
//! or markup.

use std::borrow::Cow;

/// A page's title is one line; a longer one is a page shouting.
const MAX_TITLE_CHARS: usize = 300;

/// Readable text from an HTML page: a "Title: …" line, then the visible text, with block
/// elements as line breaks. Not a full HTML parser: it only has to keep what a reader sees
/// and drop what they do not (scripts, styles, comments, hidden templates, drawings).
pub fn html_to_text(html: &str) -> String {
    // ASCII lowercasing keeps byte offsets, so tag names are found in `lower` and the text
    // taken from `html` at the same places.
    let lower = html.to_ascii_lowercase();
    let mut out = Readable::default();
    if let Some(title) = title(html, &lower) {
        out.words(&format!("Title: {title}"));
        out.paragraph();
    }
    let mut pre = 0usize;
    let mut at = 0;
    while let Some(found) = html[at..].find('<') {
        let start = at + found;
        out.text(&decode_entities(&html[at..start]), pre > 0);
        let rest = &html[start..];
        at = if let Some(comment) = rest.strip_prefix("<!--") {
            comment.find("-->").map_or(html.len(), |end| start + 4 + end + 3)
        } else if rest.starts_with("<!") || rest.starts_with("<?") || rest.starts_with("</>") {
            rest.find('>').map_or(html.len(), |end| start + end + 1)
        } else if let Some(tag) = Tag::parse(rest) {
            let after = start + tag.len;
            if !tag.closing && !tag.self_closing && HIDDEN.contains(&tag.name.as_str()) {
                skip_element(&lower, after, &tag.name)
            } else {
                out.tag(&tag, &mut pre);
                after
            }
        } else {
            out.text("<", pre > 0);
            start + 1
        };
    }
    out.text(&decode_entities(&html[at..]), pre > 0);
    out.finish()
}

/// Elements whose content a reader never sees. `head` is not here: its visible parts are
/// these, and a page may leave it unclosed.
const HIDDEN: &[&str] = &["script", "style", "noscript", "template", "svg", "math", "title", "iframe", "object"];

/// The first `<title>`'s text, decoded and on one line.
fn title(html: &str, lower: &str) -> Option<String> {
    let open = find_tag(lower, 0, "<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = find_tag(lower, start, "</title").unwrap_or(html.len());
    let title = decode_entities(&html[start..end]).split_whitespace().collect::<Vec<_>>().join(" ");
    let title: String = title.chars().take(MAX_TITLE_CHARS).collect();
    (!title.is_empty()).then_some(title)
}

/// Where the element whose content starts at `from` ends: just after its closing tag,
/// counting nested ones of the same name, or the end of a page that never closes it.
fn skip_element(lower: &str, from: usize, name: &str) -> usize {
    let (open, close) = (format!("<{name}"), format!("</{name}"));
    // Script-like content is raw text: an opening tag inside it is just text.
    let nests = matches!(name, "template" | "svg" | "math" | "object");
    let mut depth = 1;
    let mut at = from;
    loop {
        let next_close = find_tag(lower, at, &close);
        let next_open = if nests { find_tag(lower, at, &open) } else { None };
        match (next_open, next_close) {
            (Some(o), Some(c)) if o < c => {
                depth += 1;
                at = o + open.len();
            }
            (Some(o), None) => {
                depth += 1;
                at = o + open.len();
            }
            (_, Some(c)) => {
                depth -= 1;
                let end = lower[c..].find('>').map_or(lower.len(), |gt| c + gt + 1);
                if depth == 0 {
                    return end;
                }
                at = end;
            }
            (None, None) => return lower.len(),
        }
    }
}

/// The next `prefix` (like "</script") at or after `from` that is a whole tag name, so
/// "</head" does not match "</header".
fn find_tag(lower: &str, from: usize, prefix: &str) -> Option<usize> {
    let mut at = from;
    while let Some(found) = lower[at..].find(prefix) {
        let start = at + found;
        let next = lower.as_bytes().get(start + prefix.len());
        if !next.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b':') {
            return Some(start);
        }
        at = start + prefix.len();
    }
    None
}

/// One tag as written: `<name …>`, `</name>` or `<name … />`.
struct Tag {
    /// Lowercased.
    name: String,
    closing: bool,
    self_closing: bool,
    /// Bytes from `<` to just after `>`.
    len: usize,
}

impl Tag {
    /// The tag `text` starts with, or `None` when the `<` does not open one (as in "a < b").
    fn parse(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        let closing = bytes.get(1) == Some(&b'/');
        let start = if closing { 2 } else { 1 };
        if !bytes.get(start).is_some_and(u8::is_ascii_alphabetic) {
            return None;
        }
        let mut i = start;
        while bytes.get(i).is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'-' || b == b':') {
            i += 1;
        }
        let name = text[start..i].to_ascii_lowercase();
        // Find the `>` that ends the tag, skipping quoted attribute values. A quote opens a
        // value only right after `=`, as in HTML, so "it's" in an unquoted value is harmless.
        let (mut quote, mut after_equals) = (None, false);
        while let Some(&b) = bytes.get(i) {
            match quote {
                Some(q) if b == q => quote = None,
                Some(_) => {}
                None if b == b'>' => {
                    let self_closing = bytes[i - 1] == b'/';
                    return Some(Self { name, closing, self_closing, len: i + 1 });
                }
                None if after_equals && (b == b'"' || b == b'\'') => quote = Some(b),
                None if b == b'=' => after_equals = true,
                None if b.is_ascii_whitespace() => {}
                None => after_equals = false,
            }
            i += 1;
        }
        // A page cut off inside a tag: the rest is the tag.
        Some(Self { name, closing, self_closing: false, len: text.len() })
    }
}

/// The text being built, with whitespace collapsed as a browser would.
#[derive(Default)]
struct Readable {
    out: String,
    /// Whitespace seen but not yet written: it becomes one space before the next word.
    space: bool,
}

impl Readable {
    fn text(&mut self, text: &str, preformatted: bool) {
        if preformatted {
            self.out.push_str(text);
            self.space = false;
        } else {
            self.words(text);
        }
    }

    fn words(&mut self, text: &str) {
        for c in text.chars() {
            if c.is_whitespace() {
                self.space = true;
                continue;
            }
            if self.space && !self.out.is_empty() && !self.out.ends_with(['\n', ' ']) {
                self.out.push(' ');
            }
            self.space = false;
            self.out.push(c);
        }
    }

    /// Ends the current line; an empty line is not ended twice, so nested blocks such as
    /// `</div><div>` make one break, not a blank line.
    fn line(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
        self.space = false;
    }

    /// Leaves one blank line, however many paragraph-level elements meet here.
    fn paragraph(&mut self) {
        self.line();
        if !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
    }

    fn tag(&mut self, tag: &Tag, pre: &mut usize) {
        let name = tag.name.as_str();
        match name {
            // Each <br> is a break the author asked for, so two of them leave a blank line.
            "br" => {
                self.out.push('\n');
                self.space = false;
            }
            "hr" | "div" | "tr" | "dt" | "dd" | "caption" | "figcaption" | "option" | "summary" | "legend" => {
                self.line()
            }
            "li" if !tag.closing => {
                self.line();
                self.out.push_str("- ");
            }
            "li" => self.line(),
            "td" | "th" if !tag.closing && !self.out.is_empty() && !self.out.ends_with('\n') => {
                self.out.push_str(" | ");
                self.space = false;
            }
            "pre" => {
                *pre = if tag.closing { pre.saturating_sub(1) } else { *pre + 1 };
                self.paragraph();
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.paragraph();
                if !tag.closing {
                    let level = usize::from(name.as_bytes()[1] - b'0');
                    self.out.push_str(&"#".repeat(level));
                    self.out.push(' ');
                }
            }
            "p" | "blockquote" | "ul" | "ol" | "dl" | "table" | "section" | "article" | "header" | "footer" | "nav"
            | "aside" | "main" | "figure" | "form" | "fieldset" | "address" | "details" | "body" => self.paragraph(),
            _ => {}
        }
    }

    /// The text with trailing spaces trimmed and blank lines collapsed to one.
    fn finish(self) -> String {
        let mut text = String::with_capacity(self.out.len());
        let mut gap = false;
        for line in self.out.lines().map(str::trim_end) {
            if line.is_empty() {
                gap = !text.is_empty();
                continue;
            }
            if !text.is_empty() {
                text.push_str(if gap { "\n\n" } else { "\n" });
            }
            text.push_str(line);
            gap = false;
        }
        text
    }
}

/// Text with the common character references decoded; unknown ones are left as written.
fn decode_entities(text: &str) -> Cow<'_, str> {
    if !text.contains('&') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match entity(rest) {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The character a reference at the start of `text` stands for, and its length in bytes.
fn entity(text: &str) -> Option<(char, usize)> {
    let end = text.bytes().take(12).position(|b| b == b';')?;
    let name = &text[1..end];
    let c = match name.strip_prefix('#') {
        Some(number) => {
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) if hex.bytes().all(|b| b.is_ascii_hexdigit()) => u32::from_str_radix(hex, 16).ok()?,
                Some(_) => return None,
                None if number.bytes().all(|b| b.is_ascii_digit()) => number.parse().ok()?,
                None => return None,
            };
            char::from_u32(code).filter(|&c| c != '\0').unwrap_or('\u{FFFD}')
        }
        None => match name {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            "nbsp" => ' ',
            "ndash" => '–',
            "mdash" => '—',
            "hellip" => '…',
            "lsquo" => '‘',
            "rsquo" => '’',
            "ldquo" => '“',
            "rdquo" => '”',
            "laquo" => '«',
            "raquo" => '»',
            "bull" => '•',
            "middot" => '·',
            "copy" => '©',
            "reg" => '®',
            "trade" => '™',
            "euro" => '€',
            "pound" => '£',
            "deg" => '°',
            "times" => '×',
            _ => return None,
        },
    };
    Some((c, end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_keeps_the_title_and_the_visible_text_and_drops_the_rest() {
        let html = "<!DOCTYPE html><html><head><title> Tiny &amp; page </title>\
                    <style>p { color: red }</style><script>var a = '<p>not this</p>';</script>\
                    <meta charset=utf-8></head><body><!-- a comment <p>hidden</p> -->\
                    <noscript>Enable JavaScript</noscript><template><p>later</p></template>\
                    <svg><text>drawn</text><svg><text>nested</text></svg><text>still drawn</text></svg>\
                    <p>Hello <b>there</b>, reader.</p></body></html>";
        assert_eq!(html_to_text(html), "Title: Tiny & page\n\nHello there, reader.");
    }

    #[test]
    fn block_elements_become_line_breaks_and_blank_lines_collapse() {
        let html = "<h1>News</h1><p>First   paragraph\n  spread over lines.</p>\n\n\n\
                    <div>One</div><div>Two<br>Three</div>\
                    <ul><li>apples</li><li>pears</li></ul><table><tr><th>Name</th><th>Age</th></tr>\
                    <tr><td>Ada</td><td>36</td></tr></table><p></p><p></p><p>End</p>";
        let expected = "# News\n\nFirst paragraph spread over lines.\n\nOne\nTwo\nThree\n\n- apples\n- pears\n\n\
                        Name | Age\nAda | 36\n\nEnd";
        assert_eq!(html_to_text(html), expected);
        assert_eq!(html_to_text("<div><div><p>Deep</p></div></div><div>Next</div>"), "Deep\n\nNext");
        assert_eq!(html_to_text("Line<br>Line<br><br>After a gap"), "Line\nLine\n\nAfter a gap");
    }

    #[test]
    fn common_entities_are_decoded_and_unknown_ones_left_as_written() {
        let html = "<p>&lt;a&gt; &quot;q&quot; &#39;s&apos; a&nbsp;b &#233; &#xE9; &#X1F600; &copy; \
                    &bogus; AT&T &#0; &#xZZ;</p>";
        assert_eq!(html_to_text(html), "<a> \"q\" 's' a b é é 😀 © &bogus; AT&T \u{FFFD} &#xZZ;");
    }

    #[test]
    fn preformatted_text_keeps_its_spacing() {
        let html = "<p>Run:</p><pre>fn main() {\n    println!(\"&lt;hi&gt;\");\n}</pre><p>Done.</p>";
        assert_eq!(html_to_text(html), "Run:\n\nfn main() {\n    println!(\"<hi>\");\n}\n\nDone.");
    }

    #[test]
    fn odd_markup_does_not_swallow_the_page() {
        assert_eq!(html_to_text("<p>1 < 2 and 3 > 2</p>"), "1 < 2 and 3 > 2");
        assert_eq!(html_to_text("<a title=\"a > b\" href=x>link</a> text"), "link text");
        assert_eq!(html_to_text("<a title=it's>one</a> and <b>two</b>"), "one and two");
        assert_eq!(html_to_text("<header>Top</header><p>Body</p>"), "Top\n\nBody");
        assert_eq!(html_to_text("<html><head><title>T</title><p>No body tag"), "Title: T\n\nNo body tag");
        assert_eq!(html_to_text("<svg/><p>After a self-closed drawing</p>"), "After a self-closed drawing");
        assert_eq!(html_to_text("<p>Cut off in a tag <a href=\"x"), "Cut off in a tag");
        assert_eq!(html_to_text("<p>Cut off in a script<script>var x"), "Cut off in a script");
    }
}
