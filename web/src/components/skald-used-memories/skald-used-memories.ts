/**
 * Under a reply: the memories its turn used (§10), as one quiet line — "Used 2
 * memories" — that opens (a native `<details>`, so keyboard and screen readers know it)
 * to their sentences, each a link to the Memory page showing that memory, where it can
 * be changed or erased. What the turn recalled comes from state/recall.ts.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';

import { strings } from '../../i18n/en.js';
import { formatNumber } from '../../i18n/format.js';
import { plural } from '../../i18n/locale.js';
import type { RecalledMemory } from '../../state/recall.js';
import { memoryLink } from '../../state/route.js';
import { controls } from '../../styles/controls.js';
import { bookmarkIcon } from '../icons.js';
import { styles } from './skald-used-memories.styles.js';

/**
 * Test hooks: `[data-testid=used-memories]` (the `<details>`, its `data-count`), in it
 * `[data-testid=used-memories-summary]` and one `[data-testid=used-memory]` link per
 * memory (its `data-id`).
 *
 * @summary "Used N memories" under a reply, opening to links to each on the Memory page.
 */
@customElement('skald-used-memories')
export class SkaldUsedMemories extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) memories: readonly RecalledMemory[] = [];

  override render(): TemplateResult | typeof nothing {
    const count = this.memories.length;
    if (count === 0) return nothing;
    return html`<details data-testid="used-memories" data-count=${count}>
      <summary data-testid="used-memories-summary">
        ${bookmarkIcon}<span>${plural(count, strings.usedMemories).replace('{n}', formatNumber(count))}</span>
      </summary>
      <ul aria-label=${strings.usedMemoriesLabel}>
        ${this.memories.map(
          (memory) => html`<li>
            <a href=${memoryLink(memory.id)} data-testid="used-memory" data-id=${memory.id}>${memory.text}</a>
            <span class="pool">${memory.pool === 'private' ? strings.usedMemoryPrivate : strings.usedMemoryShared}</span>
          </li>`,
        )}
      </ul>
      <p class="hint">${strings.usedMemoriesHint}</p>
    </details>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-used-memories': SkaldUsedMemories;
  }
}
