/**
 * What of an answer is read aloud (docs/architecture.md §15): its Markdown turned into
 * plain sentences. Code blocks, URLs, images and markup are never read; a link reads as
 * its words, a heading or list item as a sentence of its own, a table's cells one after
 * another. Pure, so the page can clean the text as it streams and the tests can check it.
 */

/** A web address, never read. */
const ADDRESS = /\b(?:https?|ftp|mailto|file):\/{0,2}[^\s)>\]]+|\bwww\.[^\s)>\]]+/giu;

/** Sentences end at `.`, `!`, `?` or `…` followed by a space, or at a line's end. */
const SENTENCE_END = /[.!?…]["”’)\]]*$/u;

/** `markdown` as plain text to read, a sentence or a block per line. */
export function speakable(markdown: string): string {
  const lines: string[] = [];
  let fence: string | null = null;
  for (const raw of markdown.split('\n')) {
    const line = raw.trimEnd();
    const opener = /^\s{0,3}(`{3,}|~{3,})/u.exec(line);
    if (fence !== null) {
      // Inside a code block: nothing is read until it closes.
      if (opener && opener[1].startsWith(fence)) fence = null;
      continue;
    }
    if (opener) {
      fence = opener[1]!;
      continue;
    }
    // An indented code block (four spaces, not inside a list) is code too.
    if (/^( {4}|\t)/u.test(raw) && lines.at(-1) === '') continue;
    const said = plain(line);
    if (said === '') {
      if (lines.at(-1) !== '') lines.push('');
      continue;
    }
    lines.push(said);
  }
  return lines
    .filter((line) => line !== '')
    .map((line) => (SENTENCE_END.test(line) || /[,:;]$/u.test(line) ? line : `${line}.`))
    .join('\n');
}

/** One line of Markdown as the words in it. */
function plain(line: string): string {
  let text = line;
  // Rules, and a table's separator row, say nothing. (No two runs of spaces side by side in
  // these patterns, nor one at the end, where the line has none: they take quadratic time.)
  if (/^\s*([-*_]\s*){3,}$/u.test(text) || /^\s*(?:\|\s*)?:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?$/u.test(text)) return '';
  text = text
    .replace(/^\s*>+\s?/u, '') // a quote
    .replace(/^\s*#{1,6}\s+/u, '') // a heading
    .replace(/(?<!\s)\s+#+\s*$/u, '') // (each run of spaces tried once: linear time)
    .replace(/^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?/u, '') // a list item, a task
    // Bracketed and parenthesised parts stop at the next opening one (an address may hold
    // one pair of parentheses): a line of a thousand unclosed `[` is read in linear time.
    .replace(/!\[([^[\]]*)\]\((?:[^()]|\([^()]*\))*\)/gu, '') // an image
    .replace(/\[([^[\]]+)\]\((?:[^()]|\([^()]*\))*\)/gu, '$1') // a link reads as its words
    .replace(/\[([^[\]]+)\]\[[^[\]]*\]/gu, '$1')
    .replace(/<\/?[a-z][^<>]*>/giu, '') // inline HTML
    .replace(/`+([^`]*)`+/gu, '$1') // inline code reads as its words
    .replace(/(\*\*|__|~~|\*|_)(?=\S)([^*_~]*?\S)\1/gu, '$2') // emphasis
    .replace(ADDRESS, '') // a bare address, after the markup that could hide one (`h__ttps`)
    .replace(/^\s*\|.*$/u, cells) // a table row: its cells one after another
    .replace(/(?:(?<!\s)\s+)?\|\s*/gu, ', ')
    .replace(/[*#`~^<>[\]{}\\]/gu, ' ') // markup left over is never read
    .replace(/(^|\s)_+(?=\s|$)/gu, '$1');
  // Closing up the space before a stop can join an address anew (`www ].example`).
  return tidy(tidy(text).replace(ADDRESS, ''));
}

function tidy(text: string): string {
  return text.replace(/\s+/gu, ' ').replace(/\s+([,.;:!?])/gu, '$1').trim();
}

/** A table row without its outer pipes. */
function cells(row: string): string {
  const inner = row.trimStart().slice(1).trimEnd();
  return inner.endsWith('|') ? inner.slice(0, -1) : inner;
}

/** `text` (from `speakable`) cut into sentences, in order. */
export function sentencesOf(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    let start = 0;
    const ends = /[.!?…]["”’)\]]*(?=\s)/gu;
    for (let match = ends.exec(line); match !== null; match = ends.exec(line)) {
      const end = match.index + match[0].length;
      const sentence = line.slice(start, end).trim();
      if (sentence !== '') out.push(sentence);
      start = end;
    }
    const rest = line.slice(start).trim();
    if (rest !== '') out.push(rest);
  }
  return out;
}

/**
 * An answer read as it streams: each `update` with the whole text so far gives the
 * sentences that are now complete and not yet given; `end` gives the rest. A sentence is
 * complete when text follows it, so a number or a link cut by the stream is never read
 * half-made.
 */
export class SentenceFeed {
  #given = 0;

  update(markdownSoFar: string): string[] {
    const all = sentencesOf(speakable(markdownSoFar));
    // The last sentence may still be growing (and `speakable` closes it with a stop).
    const complete = all.slice(0, Math.max(0, all.length - 1));
    const fresh = complete.slice(this.#given);
    this.#given = Math.max(this.#given, complete.length);
    return fresh;
  }

  end(markdown: string): string[] {
    const all = sentencesOf(speakable(markdown));
    const fresh = all.slice(this.#given);
    this.#given = all.length;
    return fresh;
  }
}
