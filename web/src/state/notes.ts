/**
 * Notes as the page shows them. Pure.
 */

/** A search snippet's parts: the server wraps each match in `**`; odd parts are matches. */
export function snippetParts(snippet: string): { readonly text: string; readonly match: boolean }[] {
  return snippet
    .split('**')
    .map((text, index) => ({ text, match: index % 2 === 1 }))
    .filter((part) => part.text !== '');
}
