/**
 * A labelled progress bar for a download: the model manager's chat models and its voice
 * models show their transfers alike. Its look is `.progress` in each page's styles.
 */
import { html, nothing, type TemplateResult } from 'lit';

/** A labelled progress bar: exact when `percent` is known, moving otherwise; `text` says how far in words. */
export function progressBar(testid: string, label: string, percent: number | null, text: string): TemplateResult {
  return html`<div class="progress">
    <div
      role="progressbar"
      data-testid=${testid}
      aria-label=${label}
      aria-valuemin="0"
      aria-valuemax="100"
      aria-valuenow=${percent ?? nothing}
      aria-valuetext=${text}
    >
      ${percent === null
        ? html`<progress aria-hidden="true"></progress>`
        : html`<progress max="100" .value=${percent} aria-hidden="true"></progress>`}
    </div>
    <p class="hint num" aria-hidden="true" data-testid="${testid}-text">${text}</p>
  </div>`;
}
