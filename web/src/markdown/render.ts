/**
 * Model output → safe HTML. The model's words are untrusted: a reply may
 * carry what a web page or a document put in front of it (prompt injection),
 * so nothing it writes may load a resource, run a script or move the app.
 *
 * Two layers:
 * 1. marked, with a renderer that never emits model-written HTML: raw HTML
 *    is shown as text, images become a labelled link that loads nothing,
 *    code blocks get a copy button (wired by the component, no inline
 *    handlers).
 * 2. DOMPurify over the result, with a short allow-list of tags and
 *    attributes; links keep only http(s) and mailto addresses and open
 *    outside the app (`target=_blank`, `rel=noopener noreferrer`). One
 *    address inside the app is kept, in this window: a document or one of
 *    its pages exactly (`#/files/<id>?page=<n>`, state/route.ts), which is
 *    how a reply cites what it read. Any other in-app address is text.
 *
 * Parsing happens in an inert document, so even a string that slipped past
 * both layers could not fetch while being cleaned.
 */
import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';

import { strings } from '../i18n/en.js';
import { isDocumentLink } from '../state/route.js';

/** Addresses a link may keep; everything else becomes plain text. */
const SAFE_LINK = /^(?:https?:\/\/|mailto:)/i;

const ALLOWED_TAGS = [
  'p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 'del', 's', 'code', 'pre',
  'blockquote', 'ul', 'ol', 'li', 'a', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'div', 'span',
  'button', 'input',
];
const ALLOWED_ATTR = ['href', 'title', 'class', 'type', 'checked', 'disabled', 'start', 'align', 'aria-label', 'data-copy-code', 'target', 'rel'];

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    // Raw HTML in a reply is shown, never interpreted.
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(text);
    },
    // An image would load from wherever the model says: show a link instead.
    image({ href, text }: Tokens.Image): string {
      const label = escapeHtml(strings.markdownImage.replace('{alt}', text || href));
      return SAFE_LINK.test(href) ? `<a href="${escapeHtml(href)}">${label}</a>` : `<span>${label}</span>`;
    },
    code({ text, lang }: Tokens.Code): string {
      const language = (lang ?? '').trim().split(/\s+/)[0] ?? '';
      const copy = escapeHtml(strings.copyCode);
      return (
        `<div class="md-code"><div class="md-code-bar"><span class="md-code-lang">${escapeHtml(language)}</span>` +
        `<button type="button" class="md-copy" data-copy-code aria-label="${copy}">${copy}</button></div>` +
        `<pre><code>${escapeHtml(text)}</code></pre></div>`
      );
    },
  },
});

let hooked = false;

function installHooks(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node instanceof Element && node.hasAttribute('class')) {
      // Only the renderer's own classes (md-…) survive.
      const kept = (node.getAttribute('class') ?? '').split(/\s+/).filter((c) => c.startsWith('md-'));
      if (kept.length === 0) node.removeAttribute('class');
      else node.setAttribute('class', kept.join(' '));
    }
    if (node.tagName === 'INPUT' && (node.getAttribute('type') !== 'checkbox' || !node.hasAttribute('disabled'))) {
      node.remove();
      return;
    }
    if (node.tagName !== 'A') return;
    const href = node.getAttribute('href') ?? '';
    if (isDocumentLink(href)) {
      // A citation: the Files page opens here, on that page of the document.
      node.removeAttribute('target');
      node.removeAttribute('rel');
      return;
    }
    if (!SAFE_LINK.test(href.trim())) {
      node.removeAttribute('href');
      node.removeAttribute('target');
      node.removeAttribute('rel');
      return;
    }
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  });
}

/** Renders model output as sanitized HTML, ready for `unsafeHTML`. */
export function renderMarkdown(source: string): string {
  installHooks();
  const html = marked.parse(source) as string;
  return DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    // DOMPurify tests addresses with their spaces taken out: the hook above checks a document link as written.
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#\/files\/)/i,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    FORBID_TAGS: ['style', 'script', 'iframe', 'img', 'svg', 'math', 'object', 'embed', 'form', 'video', 'audio', 'source', 'link', 'meta'],
    FORBID_ATTR: ['style', 'srcset', 'src', 'action', 'formaction', 'background', 'poster'],
  });
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}
