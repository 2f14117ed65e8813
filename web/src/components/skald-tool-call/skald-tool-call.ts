/**
 * One tool call of a reply, as a compact card: what the assistant used and
 * how it went, expandable (a native `<details>`, so keyboard and screen
 * readers know it) to the exact arguments and the result. A picture a call
 * made (`image_generate`) shows under it, open, when the element is given a
 * client to read it with.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';

import type { ApiClient } from '../../api/client.js';
import { strings, toolLabel } from '../../i18n/en.js';
import { describeCall } from '../../i18n/tool-sentences.js';
import { madePicture, type MadePicture } from '../../state/pictures.js';
import type { ToolItem, ToolProgress } from '../../state/transcript.js';
import { controls } from '../../styles/controls.js';
import { prettyArguments } from '../skald-approval-card/skald-approval-card.js';
import '../skald-picture/skald-picture.js';
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
  /** Reads a picture the call made; without one, none is shown. */
  @property({ attribute: false }) client: ApiClient | null = null;
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
    const sentence = describeCall(item.name, item.arguments);
    const picture = this.client === null ? null : madePicture(item);
    return html`
      <details>
        <summary>
          <span class="icon" data-status=${status} aria-hidden="true"></span>
          <span class="label" title=${item.name}>${toolLabel(item.name)}</span>
          <span class="status" data-status=${status}>${statusText}</span>
          ${status === 'running' && item.progress ? this.#renderProgress(item.progress) : nothing}
        </summary>
        <div class="body">
          ${sentence !== null ? html`<p class="sentence" data-testid="tool-sentence">${sentence}</p>` : nothing}
          <p class="heading">${strings.toolArguments}</p>
          <pre class="args">${prettyArguments(item.arguments)}</pre>
          ${item.result !== null
            ? html`<p class="heading">${strings.toolResult}</p>
                <pre class="result">${readableResult(item.result)}</pre>`
            : nothing}
        </div>
      </details>
      ${picture !== null ? this.#renderPicture(picture) : nothing}
    `;
  }

  #renderPicture({ document, prompt }: MadePicture): TemplateResult {
    const alt = prompt === '' ? strings.pictureAltBare : strings.pictureAlt.replace('{prompt}', () => prompt);
    return html`<skald-picture .client=${this.client} document=${document} alt=${alt}></skald-picture>`;
  }

  #renderProgress(progress: ToolProgress): TemplateResult {
    const { total, message } = progress;
    const share = total !== null && total > 0 ? Math.min(1, Math.max(0, progress.progress / total)) : null;
    const label = message ?? (share !== null ? strings.toolProgress.replace('{percent}', String(Math.round(share * 100))) : '');
    return html`<span class="progress" data-testid="tool-progress">
      ${share !== null
        ? html`<progress max="1" .value=${share} aria-label=${strings.toolProgressLabel}></progress>`
        : html`<progress aria-label=${strings.toolProgressLabel}></progress>`}
      ${label ? html`<span class="progress-text">${label}</span>` : nothing}
    </span>`;
  }
}

/**
 * A result as a person reads it: a JSON string is shown as its text (real line breaks, not
 * `\n`), other JSON indented, anything else as it came.
 */
export function readableResult(result: string): string {
  try {
    const value = JSON.parse(result) as unknown;
    return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  } catch {
    return result;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-tool-call': SkaldToolCall;
  }
}
