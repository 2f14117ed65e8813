/**
 * Explains the password strength floor while a person types: how many more
 * characters, or what to change. The attack it resists is an offline guess
 * by whoever copies this computer's files, so length matters more than
 * symbols; the hint says so. The server stays the judge.
 */
import { LitElement, html, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';

import { strings } from '../../i18n/en.js';
import { formatNumber } from '../../i18n/format.js';
import { plural } from '../../i18n/locale.js';
import { judgePassword, MIN_PASSWORD_CHARS } from '../../state/password.js';
import { styles } from './skald-password-hint.styles.js';

/**
 * @summary The live strength hint under a new-password field.
 */
@customElement('skald-password-hint')
export class SkaldPasswordHint extends LitElement {
  static override styles = styles;

  @property() password = '';
  /** The person's name, which a password should not contain. */
  @property() name = '';

  override render(): TemplateResult {
    const verdict = judgePassword(this.password, this.name);
    const filled = Math.min([...this.password].length, MIN_PASSWORD_CHARS);
    let text: string;
    if (this.password === '') text = strings.passwordRule;
    else if (verdict.ok) text = strings.passwordGood;
    else if (verdict.why === 'short') text = plural(verdict.missing, strings.passwordShort).replace('{n}', formatNumber(verdict.missing));
    else if (verdict.why === 'repetitive') text = strings.passwordRepetitive;
    else if (verdict.why === 'common') text = strings.passwordCommon;
    else text = strings.passwordHasName;
    const state = this.password === '' ? 'empty' : verdict.ok ? 'ok' : 'weak';
    return html`
      <div class="meter" aria-hidden="true" data-state=${state}>
        ${Array.from({ length: 4 }, (_, i) => html`<span class=${filled > (i * MIN_PASSWORD_CHARS) / 4 || verdict.ok ? 'on' : ''}></span>`)}
      </div>
      <p class="text" data-state=${state}>${text}</p>
      <p class="why">${strings.passwordWhy}</p>
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-password-hint': SkaldPasswordHint;
  }
}
