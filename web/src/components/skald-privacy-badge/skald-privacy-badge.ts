/**
 * The privacy badge (§16): "Private to you" only when the words stay on this
 * computer; otherwise it names the provider they go to. Never reassures
 * when unsure: see state/privacy.ts.
 */
import { LitElement, html, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';

import { strings } from '../../i18n/en.js';
import type { Badge } from '../../state/privacy.js';
import { styles } from './skald-privacy-badge.styles.js';

/**
 * Test hook: the host's `data-kind` attribute is `private`, `remote` or `none`.
 *
 * @summary Where the words of a conversation go.
 */
@customElement('skald-privacy-badge')
export class SkaldPrivacyBadge extends LitElement {
  static override styles = styles;

  @property({ attribute: false }) badge: Badge = { kind: 'none' };

  protected override willUpdate(): void {
    this.dataset['kind'] = this.badge.kind;
  }

  override render(): TemplateResult {
    const badge = this.badge;
    let label: string;
    let title: string;
    switch (badge.kind) {
      case 'private':
        label = strings.privatePrivate;
        title = strings.privatePrivateTitle;
        break;
      case 'remote': {
        const providers = badge.providers.join(', ');
        label = (badge.certain ? strings.privateRemote : strings.privateMaybeRemote).replace('{provider}', providers);
        title = strings.privateRemoteTitle.replace('{provider}', providers);
        break;
      }
      case 'none':
        label = strings.privateNone;
        title = strings.privateNoneTitle;
        break;
    }
    return html`<span class="badge" data-kind=${badge.kind} title=${title}>
      <span class="dot" aria-hidden="true"></span><span data-testid="privacy-badge">${label}</span>
      <span class="visually-hidden">. ${title}</span>
    </span>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-privacy-badge': SkaldPrivacyBadge;
  }
}
