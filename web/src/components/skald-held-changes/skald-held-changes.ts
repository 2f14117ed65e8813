/**
 * Changes that hold my next message (§3): an administrator — or someone
 * editing the files outside Skald — widened where my words go or what may
 * run without asking me. Each says what changed and who did it, and asks me
 * to continue with it or without it; nothing is sent until I decide. Shown
 * above the composer, which waits while any is open.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import { StoreController } from '../../controllers/store-controller.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import type { Login } from '../../state/login.js';
import { viewNotice } from '../../state/notices.js';
import { controls } from '../../styles/controls.js';
import { sentenceFor } from '../skald-notice-list/skald-notice-list.js';
import { styles } from './skald-held-changes.styles.js';

/**
 * Test hooks: `[data-testid=held-change]` per change (its `data-key`), with
 * `[data-testid=held-continue]` and `[data-testid=held-decline]`.
 *
 * @summary The changes my next message waits on, each to continue with or without.
 */
@customElement('skald-held-changes')
export class SkaldHeldChanges extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) login: Login | null = null;

  @state() private busy: number | null = null;
  @state() private error = '';

  constructor() {
    super();
    new StoreController(this, () => this.login?.notices);
  }

  override render(): TemplateResult | typeof nothing {
    const held = this.login?.notices.held ?? [];
    if (held.length === 0) return nothing;
    const names = { providers: new Map<string, string>(), agents: new Map<string, string>() };
    return html`<section class="held" role="alert" aria-labelledby="held-title" data-testid="held-changes">
      <h3 id="held-title">${strings.heldTitle}</h3>
      <p class="small">${strings.heldLead}</p>
      ${this.error ? html`<p class="notice error" role="alert">${this.error}</p>` : nothing}
      <ul>
        ${held.map((notice) => {
          const key = typeof notice.body?.['key'] === 'string' ? notice.body['key'] : '';
          return html`<li data-testid="held-change" data-key=${key}>
            <p class="sentence">${sentenceFor(viewNotice(notice, names))}</p>
            <div class="actions">
              <button
                type="button"
                class="primary"
                data-testid="held-continue"
                ?disabled=${this.busy !== null}
                @click=${() => void this.#decide(notice.id, 'accept')}
              >
                ${strings.heldContinue}
              </button>
              <button
                type="button"
                data-testid="held-decline"
                title=${strings.heldDeclineHint}
                ?disabled=${this.busy !== null}
                @click=${() => void this.#decide(notice.id, 'decline')}
              >
                ${strings.heldDecline}
              </button>
            </div>
          </li>`;
        })}
      </ul>
    </section>`;
  }

  async #decide(id: number, decision: 'accept' | 'decline'): Promise<void> {
    const notices = this.login?.notices;
    if (!notices || this.busy !== null) return;
    this.busy = id;
    this.error = '';
    try {
      await notices.decide(id, decision);
    } catch (error) {
      this.error = describeError(error);
    } finally {
      this.busy = null;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-held-changes': SkaldHeldChanges;
  }
}
