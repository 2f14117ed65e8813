/**
 * A message sent with documents, read back from the text the server keeps. The server puts
 * each document attached after the person's words as a block of its own — a line for the
 * model, then the document's name (and its text, when it fits) wrapped as outside content:
 *
 *     {words}\n\nDocument {id} ({whose}), … \n<untrusted_content source="document:{id}">\nName: {name}\n…</untrusted_content>
 *
 * Here the blocks become what the person sees and may send again: their words, and each
 * document's id and name. Pure: no calls, no DOM.
 */
import { ISSUED_DOCUMENT_ID } from './route.js';

/** The most documents one message carries: more are refused by the server (`too_many_documents`). */
export const MAX_ATTACHED_DOCUMENTS = 4;

/** A document that went with a message: its id, and its name as the block names it. */
export interface AttachedDocument {
  readonly id: string;
  readonly name: string;
}

/** A message as its sender wrote it, and the documents that went with it, in order. */
export interface SentMessage {
  readonly words: string;
  readonly documents: readonly AttachedDocument[];
}

const ID = ISSUED_DOCUMENT_ID.source;

/** Where a document's block may begin: after a blank line, its opening words. */
const BLOCK_START = new RegExp(`\\n\\nDocument ${ID} \\(`, 'g');

/**
 * One whole block, from the blank line before it: the line for the model, then the wrapper
 * whose source names the same document, its name on the first line inside, and everything
 * up to the wrapper's end. The server neutralises the wrapper's tag name inside, so the first
 * closing tag is the block's own.
 */
const BLOCK = `\\n\\nDocument (${ID}) \\([^\\n]*\\n<untrusted_content source="document:\\1">\\nName: ([^\\n]*)\\n[\\s\\S]*?</untrusted_content>`;

/**
 * The person's words and the documents of `text`, a message as the history gives it. The
 * blocks are the ones that run together at the end of the words (a tool server's
 * resources, attached the same way, may follow them and are left in the words as they
 * are). A message without any is its words alone.
 */
export function readSentMessage(text: string): SentMessage {
  for (const start of text.matchAll(BLOCK_START)) {
    const block = new RegExp(BLOCK, 'y');
    const documents: AttachedDocument[] = [];
    let at = start.index;
    for (;;) {
      block.lastIndex = at;
      const found = block.exec(text);
      if (found === null) break;
      documents.push({ id: found[1] ?? '', name: found[2] ?? '' });
      at = block.lastIndex;
    }
    // Blocks found, and nothing after them but more outside content: they are the message's.
    if (documents.length > 0 && (at === text.length || text.startsWith('\n\n', at))) {
      return { words: text.slice(0, start.index) + text.slice(at), documents };
    }
  }
  return { words: text, documents: [] };
}
