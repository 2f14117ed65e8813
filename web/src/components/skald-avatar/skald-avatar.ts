/**
 * A person's avatar: their initials on a colour picked from their name, so
 * the same person always looks the same. Decorative: the name is always
 * written beside it, so the avatar is hidden from screen readers.
 */
import { LitElement, html, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';

import { styles } from './skald-avatar.styles.js';

/** How many colours avatars are drawn from (see the styles). */
const HUES = 8;

/**
 * @summary Initials on a colour, for the picker and the navigation.
 */
@customElement('skald-avatar')
export class SkaldAvatar extends LitElement {
  static override styles = styles;

  @property() name = '';

  /** `small` (navigation), `medium` or `large` (the picker). */
  @property({ reflect: true }) size: 'small' | 'medium' | 'large' = 'medium';

  override render(): TemplateResult {
    return html`<span class="avatar" data-hue=${hueOf(this.name)} aria-hidden="true">${initials(this.name)}</span>`;
  }
}

/** Up to two letters: the first of the first two words. */
export function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const letters = words.slice(0, 2).map((word) => [...word][0] ?? '');
  return letters.join('').toUpperCase() || '?';
}

function hueOf(name: string): number {
  // FNV-1a: short names that differ in one letter still land apart.
  let hash = 0x811c9dc5;
  for (const char of name.trim().toLowerCase()) {
    hash ^= char.codePointAt(0) ?? 0;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return (hash ^ (hash >>> 16)) % HUES;
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-avatar': SkaldAvatar;
  }
}
