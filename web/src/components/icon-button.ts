/**
 * A button that shows only an icon: its label is its name for screen readers and its
 * tooltip, so the two never differ. The conversation's tools under a reply and a
 * memory's Edit / Pin / Erase use it; its look is `.icon-button` in styles/controls.ts.
 */
import { html, nothing, type SVGTemplateResult, type TemplateResult } from 'lit';

export interface IconButton {
  readonly testid: string;
  /** What the button does, in words: its accessible name and its tooltip. */
  readonly label: string;
  readonly icon: SVGTemplateResult;
  readonly onClick: () => void;
  readonly className?: string;
  readonly disabled?: boolean;
  /** The id of what the button acts on, read after its name (a memory's sentence). */
  readonly describedBy?: string;
  /** For a button that turns something on and off: whether it is on. */
  readonly pressed?: boolean;
}

export function iconButton(button: IconButton): TemplateResult {
  return html`<button
    type="button"
    class="quiet icon-button ${button.className ?? ''}"
    data-testid=${button.testid}
    title=${button.label}
    aria-label=${button.label}
    aria-describedby=${button.describedBy ?? nothing}
    aria-pressed=${button.pressed === undefined ? nothing : button.pressed ? 'true' : 'false'}
    ?disabled=${button.disabled ?? false}
    @click=${button.onClick}
  >
    ${button.icon}
  </button>`;
}
