/**
 * One tool call of a reply, as a compact card: what the assistant used and
 * how it went, expandable (a native `<details>`, so keyboard and screen
 * readers know it) to the exact arguments and the result.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';

import { strings, toolLabel } from '../../i18n/en.js';
import type { ToolItem } from '../../state/transcript.js';
import { controls } from '../../styles/controls.js';
import { prettyArguments } from '../skald-approval-card/skald-approval-card.js';
import { styles } from './skald-tool-call.styles.js';

/**
 * Test hook: the host's `data-status` (`running`, `waiting`, `ok`, `error`,
 * `denied`, `cancelled`).
 *
 * @summary A tool call: name, status, arguments and result.
 */
@customElement('skald-tool-call')
export class SkaldToolCall extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) item: ToolItem | null = null;
  /** A card waits on the person for this call. */
  @property({ type: Boolean }) waiting = false;
  /** The turn has ended: a call still "running" was cut off. */
  @property({ type: Boolean }) ended = false;

  /** What the card shows: a call still "running" waits on a card, or was cut off with its turn. */
  get status(): string {
    const item = this.item;
    if (item === null) return '';
    if (item.status !== 'running') return item.status;
    return this.waiting ? 'waiting' : this.ended ? 'cancelled' : 'running';
  }

  protected override willUpdate(): void {
    this.dataset['status'] = this.status;
  }

  override render(): TemplateResult | typeof nothing {
    const item = this.item;
    if (item === null) return nothing;
    const status = this.status as 'running' | 'waiting' | 'ok' | 'error' | 'denied' | 'cancelled';
    const statusText = {
      running: strings.toolRunning,
      waiting: strings.toolWaiting,
      ok: strings.toolOk,
      error: strings.toolError,
      denied: strings.toolDenied,
      cancelled: strings.toolCancelled,
    }[status];
    return html`
      <details>
        <summary>
          <span class="icon" data-status=${status} aria-hidden="true"></span>
          <span class="label">${toolLabel(item.name)}</span>
          <code class="name">${item.name}</code>
          <span class="status" data-status=${status}>${statusText}</span>
        </summary>
        <div class="body">
          <p class="heading">${strings.toolArguments}</p>
          <pre class="args">${prettyArguments(item.arguments)}</pre>
          ${item.result !== null
            ? html`<p class="heading">${strings.toolResult}</p>
                <pre class="result">${item.result}</pre>`
            : nothing}
        </div>
      </details>
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-tool-call': SkaldToolCall;
  }
}
