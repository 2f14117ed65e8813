/**
 * The few icons the UI draws, as inline SVG templates: no image files to
 * fetch, no icon font, and they take the text colour. Decorative: every
 * button that shows one also has a text label for screen readers.
 */
import { svg, type SVGTemplateResult } from 'lit';

function icon(paths: SVGTemplateResult): SVGTemplateResult {
  return svg`<svg class="icon-svg" viewBox="0 0 24 24" width="16" height="16" fill="none" stroke="currentColor"
    stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">${paths}</svg>`;
}

export const pencilIcon = icon(svg`<path d="M12 20h9"/><path d="M16.5 3.5a2.1 2.1 0 0 1 3 3L7 19l-4 1 1-4Z"/>`);
export const trashIcon = icon(
  svg`<path d="M3 6h18"/><path d="M8 6V4h8v2"/><path d="M19 6l-1 14H6L5 6"/><path d="M10 11v6"/><path d="M14 11v6"/>`,
);
export const plusIcon = icon(svg`<path d="M12 5v14"/><path d="M5 12h14"/>`);
export const menuIcon = icon(svg`<path d="M3 6h18"/><path d="M3 12h18"/><path d="M3 18h18"/>`);
export const lockIcon = icon(svg`<rect x="4" y="11" width="16" height="10" rx="2"/><path d="M8 11V7a4 4 0 0 1 8 0v4"/>`);
export const inboxIcon = icon(
  svg`<path d="M22 12h-6l-2 3h-4l-2-3H2"/><path d="M5.5 5h13L22 12v6a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2v-6Z"/>`,
);
export const closeIcon = icon(svg`<path d="M18 6 6 18"/><path d="m6 6 12 12"/>`);
