/**
 * A picture kept among the person's documents, shown in the conversation under the call
 * that made it: its bytes read with the client (the key goes in a header, never in an
 * address) and shown from a `data:` address, as the document viewer shows an image
 * (data-url.ts), at most the column's width and 360px high. The picture is a link that
 * opens it on the Files page. While it is read a small placeholder stands in; a picture
 * deleted since is a line saying so.
 *
 * Owns: the one read of the picture's bytes while it is on the page. Never: keeps them
 * after it leaves, or changes the document.
 */
import { LitElement, html, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import { ApiError, isCancelled, type ApiClient } from '../../api/client.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { pictureType } from '../../state/pictures.js';
import { documentLink } from '../../state/route.js';
import { controls } from '../../styles/controls.js';
import { dataUrl } from '../data-url.js';
import { styles } from './skald-picture.styles.js';

/** What has been read of the picture. */
type Shown =
  | { readonly kind: 'loading' }
  | { readonly kind: 'image'; readonly url: string }
  | { readonly kind: 'deleted' }
  | { readonly kind: 'failed'; readonly problem: string };

/**
 * Test hooks: `[data-testid=picture]` (the image) inside `picture-link`, `picture-loading`,
 * `picture-deleted`, `picture-problem`; the host's `data-state` (`loading`, `image`,
 * `deleted`, `failed`).
 *
 * @summary A picture among the person's documents, linking to it.
 */
@customElement('skald-picture')
export class SkaldPicture extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) client: ApiClient | null = null;
  /** The document's id, as the server issued it. */
  @property() document = '';
  /** What the picture shows, in words. */
  @property() alt = '';

  @state() private shown: Shown = { kind: 'loading' };

  /** Aborted when the picture read now is no longer wanted (another one, or leaving). */
  #reading = new AbortController();

  override connectedCallback(): void {
    super.connectedCallback();
    // Back in the page (moved, or a cached element put back): read again what was let go of.
    if (this.hasUpdated) this.#read();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#close();
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('document') || changed.has('client')) this.#read();
    this.dataset['state'] = this.shown.kind;
  }

  /** Forgets what was read and reads the picture's bytes. */
  #read(): void {
    this.#close();
    const client = this.client;
    if (client === null || this.document === '') return;
    void this.#readBytes(client, this.document, this.#reading.signal);
  }

  async #readBytes(client: ApiClient, id: string, signal: AbortSignal): Promise<void> {
    try {
      const bytes = await client.documentContent(id, signal);
      if (signal.aborted) return;
      const url = await dataUrl(bytes, pictureType(bytes.type));
      if (!signal.aborted) this.shown = { kind: 'image', url };
    } catch (error) {
      if (signal.aborted || isCancelled(error)) return;
      this.shown = error instanceof ApiError && error.status === 404 ? { kind: 'deleted' } : { kind: 'failed', problem: describeError(error) };
    }
  }

  /** Stops reading and drops the picture's address, so its bytes go with it. */
  #close(): void {
    this.#reading.abort();
    this.#reading = new AbortController();
    this.shown = { kind: 'loading' };
  }

  override render(): TemplateResult {
    const shown = this.shown;
    switch (shown.kind) {
      case 'loading':
        return html`<p class="placeholder hint" data-testid="picture-loading">${strings.pictureLoading}</p>`;
      case 'image':
        return html`<a href=${documentLink(this.document)} data-testid="picture-link"
          ><img src=${shown.url} alt=${this.alt} data-testid="picture"
        /></a>`;
      case 'deleted':
        return html`<p class="hint" data-testid="picture-deleted">${strings.pictureDeleted}</p>`;
      case 'failed':
        return html`<p class="hint" data-testid="picture-problem">${shown.problem}</p>`;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-picture': SkaldPicture;
  }
}
