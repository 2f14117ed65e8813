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
export const noteIcon = icon(svg`<path d="M14 3H6a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V9Z"/><path d="M14 3v6h6"/><path d="M8 13h8"/><path d="M8 17h5"/>`);
/** A bookmark: what is kept. */
export const bookmarkIcon = icon(svg`<path d="M6 3h12v18l-6-4-6 4Z"/>`);
export const peopleIcon = icon(
  svg`<circle cx="9" cy="8" r="3.5"/><path d="M2.5 20a6.5 6.5 0 0 1 13 0"/><path d="M16 4.6a3.5 3.5 0 0 1 0 6.8"/><path d="M18 14a6.5 6.5 0 0 1 3.5 6"/>`,
);
export const eyeIcon = icon(svg`<path d="M2 12s3.5-7 10-7 10 7 10 7-3.5 7-10 7S2 12 2 12Z"/><circle cx="12" cy="12" r="3"/>`);
export const boxIcon = icon(svg`<path d="M21 8v13H3V8"/><path d="M1 3h22v5H1z"/><path d="M10 12h4"/>`);
export const gearIcon = icon(
  svg`<circle cx="12" cy="12" r="3"/><path d="M19.4 15a1.7 1.7 0 0 0 .3 1.8l.1.1a2 2 0 1 1-2.8 2.8l-.1-.1a1.7 1.7 0 0 0-1.8-.3 1.7 1.7 0 0 0-1 1.5V21a2 2 0 1 1-4 0v-.1a1.7 1.7 0 0 0-1.1-1.5 1.7 1.7 0 0 0-1.8.3l-.1.1a2 2 0 1 1-2.8-2.8l.1-.1a1.7 1.7 0 0 0 .3-1.8 1.7 1.7 0 0 0-1.5-1H3a2 2 0 1 1 0-4h.1a1.7 1.7 0 0 0 1.5-1.1 1.7 1.7 0 0 0-.3-1.8l-.1-.1a2 2 0 1 1 2.8-2.8l.1.1a1.7 1.7 0 0 0 1.8.3H9a1.7 1.7 0 0 0 1-1.5V3a2 2 0 1 1 4 0v.1a1.7 1.7 0 0 0 1 1.5 1.7 1.7 0 0 0 1.8-.3l.1-.1a2 2 0 1 1 2.8 2.8l-.1.1a1.7 1.7 0 0 0-.3 1.8V9a1.7 1.7 0 0 0 1.5 1H21a2 2 0 1 1 0 4h-.1a1.7 1.7 0 0 0-1.5 1Z"/>`,
);
export const copyIcon = icon(svg`<rect x="9" y="9" width="12" height="12" rx="2"/><path d="M5 15V5a2 2 0 0 1 2-2h10"/>`);
export const saveIcon = icon(svg`<path d="M12 3v12"/><path d="m7 10 5 5 5-5"/><path d="M5 21h14"/>`);
export const pinIcon = icon(svg`<path d="M12 17v5"/><path d="M9 3h6l-1 6 3 3v2H7v-2l3-3Z"/>`);
export const archiveIcon = icon(svg`<rect x="3" y="4" width="18" height="4" rx="1"/><path d="M5 8v11a1 1 0 0 0 1 1h12a1 1 0 0 0 1-1V8"/><path d="M10 12h4"/>`);
export const unarchiveIcon = icon(svg`<rect x="3" y="4" width="18" height="4" rx="1"/><path d="M5 8v11a1 1 0 0 0 1 1h12a1 1 0 0 0 1-1V8"/><path d="m9 15 3-3 3 3"/>`);
export const upIcon = icon(svg`<path d="m18 15-6-6-6 6"/>`);
export const downIcon = icon(svg`<path d="m6 9 6 6 6-6"/>`);
export const regenerateIcon = icon(svg`<path d="M21 12a9 9 0 1 1-2.6-6.4"/><path d="M21 3v6h-6"/>`);
export const leftIcon = icon(svg`<path d="m15 18-6-6 6-6"/>`);
export const rightIcon = icon(svg`<path d="m9 18 6-6-6-6"/>`);
/** A clock: what does not last (a temporary chat). */
export const clockIcon = icon(svg`<circle cx="12" cy="12" r="9"/><path d="M12 7v5l3 2"/>`);
/** A folder: the documents uploaded. */
export const folderIcon = icon(svg`<path d="M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2Z"/>`);
export const uploadIcon = icon(svg`<path d="M12 15V3"/><path d="m7 8 5-5 5 5"/><path d="M5 21h14"/>`);
/** A paperclip: a file that goes with a message. */
export const microphoneIcon = icon(
  svg`<rect x="9" y="3" width="6" height="11" rx="3"/><path d="M5 11a7 7 0 0 0 14 0"/><path d="M12 18v3"/>`,
);

/** A hands-free talk: a voice going back and forth. */
export const talkIcon = icon(
  svg`<path d="M3 10v4"/><path d="M7 7v10"/><path d="M11 4v16"/><path d="M15 8v8"/><path d="M19 11v2"/>`,
);

export const speakerIcon = icon(
  svg`<path d="M11 5 6 9H3v6h3l5 4z"/><path d="M15.5 8.5a5 5 0 0 1 0 7"/><path d="M18.5 5.5a9 9 0 0 1 0 13"/>`,
);

export const paperclipIcon = icon(
  svg`<path d="m21 11-8.6 8.6a5 5 0 0 1-7.1-7.1l8.6-8.6a3.3 3.3 0 0 1 4.7 4.7l-8.6 8.6a1.7 1.7 0 0 1-2.4-2.4L15.5 7"/>`,
);
