/**
 * What covers a drop target while files are dragged over it: a title with its icon, then
 * where the files will go. It is aria-hidden: it only accompanies a pointer's drag. The
 * conversation and the Files page use it; its look is styles/drop-overlay.ts, which the
 * component's `static styles` must include.
 */
import { html, nothing, type SVGTemplateResult, type TemplateResult } from 'lit';

export interface DropOverlay {
  readonly icon: SVGTemplateResult;
  /** What a drop does, e.g. "Drop the files to attach them". */
  readonly title: string;
  /** Where the files go and who will read them. */
  readonly detail: string;
  readonly testid?: string;
}

export function dropOverlay(overlay: DropOverlay): TemplateResult {
  return html`<div class="drop-overlay" data-testid=${overlay.testid ?? nothing} aria-hidden="true">
    <p class="drop-title">${overlay.icon}${overlay.title}</p>
    <p>${overlay.detail}</p>
  </div>`;
}
