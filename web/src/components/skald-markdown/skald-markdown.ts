/**
 * Model output, rendered as sanitized Markdown (see markdown/render.ts for
 * what is allowed). Code blocks carry a copy button, wired here by
 * delegation since the sanitized HTML has no handlers of its own. Links open
 * outside the app: the sanitizer gives them `target=_blank`, and a click is
 * never allowed to navigate this window — except a citation, a link to a
 * document or one of its pages, which opens the Files page here.
 */
import { LitElement, html, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { unsafeHTML } from 'lit/directives/unsafe-html.js';

import { writeClipboard } from '../../controllers/clipboard-controller.js';
import { strings } from '../../i18n/en.js';
import { renderMarkdown } from '../../markdown/render.js';
import { isDocumentLink } from '../../state/route.js';
import { styles } from './skald-markdown.styles.js';

/**
 * @summary Sanitized Markdown with copyable code blocks.
 */
@customElement('skald-markdown')
export class SkaldMarkdown extends LitElement {
  static override styles = styles;

  @property() text = '';

  #html = '';

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('text')) this.#html = renderMarkdown(this.text);
  }

  override render(): TemplateResult {
    return html`<div class="md" @click=${this.#onClick}>${unsafeHTML(this.#html)}</div>`;
  }

  #onClick(event: MouseEvent): void {
    const target = event.target instanceof Element ? event.target : null;
    const button = target?.closest<HTMLButtonElement>('button[data-copy-code]');
    if (button) {
      const code = button.closest('.md-code')?.querySelector('code')?.textContent ?? '';
      void writeClipboard(code).then((ok) => {
        button.textContent = ok ? strings.copied : strings.copyFailed;
        setTimeout(() => (button.textContent = strings.copyCode), 2000);
      });
      return;
    }
    const link = target?.closest('a');
    if (link) {
      const href = link.getAttribute('href');
      // A link without a safe address is text; one with it opens elsewhere.
      if (href === null) {
        event.preventDefault();
        return;
      }
      // A citation moves this window's address; the workspace opens the document.
      if (isDocumentLink(href)) return;
      if (link.getAttribute('target') !== '_blank') {
        event.preventDefault();
        window.open(href, '_blank', 'noopener,noreferrer');
      }
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-markdown': SkaldMarkdown;
  }
}
