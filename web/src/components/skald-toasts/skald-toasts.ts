/**
 * Short messages in a corner: the assistant's `notify` calls and passing
 * problems. Announced politely to screen readers; each can be dismissed and
 * goes by itself after a while.
 */
import { LitElement, html, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';

import { strings } from '../../i18n/en.js';
import { controls } from '../../styles/controls.js';
import { closeIcon } from '../icons.js';
import { styles } from './skald-toasts.styles.js';

export interface Toast {
  readonly id: number;
  readonly title: string;
  readonly body: string;
  readonly kind: 'info' | 'error';
}

/** The person dismissed a toast. */
export class DismissToastEvent extends Event {
  static readonly type = 'skald-dismiss-toast';
  constructor(readonly id: number) {
    super(DismissToastEvent.type, { bubbles: true, composed: true });
  }
}

/**
 * @summary Dismissable notifications.
 * @fires skald-dismiss-toast - the person closed one
 */
@customElement('skald-toasts')
export class SkaldToasts extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) toasts: readonly Toast[] = [];

  override render(): TemplateResult {
    return html`<div class="region" role="status" aria-live="polite">
      ${repeat(
        this.toasts,
        (t) => t.id,
        (t) => html`<div class="toast" data-kind=${t.kind} data-testid="toast">
          <div class="text">
            <strong>${t.title}</strong>
            ${t.body ? html`<p>${t.body}</p>` : ''}
          </div>
          <button type="button" class="quiet" aria-label=${strings.dismiss} @click=${() => this.dispatchEvent(new DismissToastEvent(t.id))}>
            ${closeIcon}
          </button>
        </div>`,
      )}
    </div>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-toasts': SkaldToasts;
  }
  interface HTMLElementEventMap {
    [DismissToastEvent.type]: DismissToastEvent;
  }
}
