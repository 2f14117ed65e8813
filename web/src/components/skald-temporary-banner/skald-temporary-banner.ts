/**
 * At the top of a temporary chat: what makes it one. Nothing is remembered from it or
 * recalled into it (the server offers it no memory tool), it is not in the list of
 * conversations, and it is deleted when the person leaves it (the workspace does that).
 */
import { LitElement, html, type TemplateResult } from 'lit';
import { customElement } from 'lit/decorators.js';

import { strings } from '../../i18n/en.js';
import { controls } from '../../styles/controls.js';
import { clockIcon } from '../icons.js';
import { styles } from './skald-temporary-banner.styles.js';

/**
 * Test hook: `[data-testid=temporary-banner]`.
 *
 * @summary "Temporary chat — nothing is remembered…", above a temporary chat.
 */
@customElement('skald-temporary-banner')
export class SkaldTemporaryBanner extends LitElement {
  static override styles = [controls, styles];

  override render(): TemplateResult {
    const [before = '', after = ''] = strings.temporaryBanner.split('{title}');
    return html`<p class="banner" role="note" data-testid="temporary-banner">
      ${clockIcon}<span>${before}<strong>${strings.temporaryChat}</strong>${after}</span>
    </p>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-temporary-banner': SkaldTemporaryBanner;
  }
}
