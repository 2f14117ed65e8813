/**
 * Which model a conversation uses: "Automatic" (each turn picks the best
 * the role allows) or one model, from those the role allows only. Models
 * whose words stay on this computer are listed first and say so; a model
 * that reads pictures says so too, in words (an option holds text only). It
 * can change between turns; the next turn goes to the new choice.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { live } from 'lit/directives/live.js';

import type { Model } from '../../api/types.js';
import { strings } from '../../i18n/en.js';
import { controls } from '../../styles/controls.js';
import { styles } from './skald-model-picker.styles.js';

/** The person chose a model (`null`: automatic). */
export class ModelChangeEvent extends Event {
  static readonly type = 'skald-model-change';
  constructor(readonly model: string | null) {
    super(ModelChangeEvent.type, { bubbles: true, composed: true });
  }
}

const AUTOMATIC = '';

/**
 * @summary A select of the models the role allows.
 * @fires skald-model-change - the choice changed
 */
@customElement('skald-model-picker')
export class SkaldModelPicker extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) models: readonly Model[] = [];
  /** The chosen model's name, or `null` for automatic. */
  @property({ attribute: false }) value: string | null = null;
  /** While a reply is being written, the model cannot change. */
  @property({ type: Boolean }) disabled = false;

  override render(): TemplateResult {
    const local = this.models.filter((m) => m.privacy === 'local');
    const remote = this.models.filter((m) => m.privacy !== 'local');
    return html`
      <label class="visually-hidden" for="model">${strings.modelLabel}</label>
      <select
        id="model"
        data-testid="model-picker"
        .value=${live(this.value ?? AUTOMATIC)}
        ?disabled=${this.disabled || this.models.length === 0}
        title=${this.disabled ? strings.modelWait : strings.modelLabel}
        @change=${this.#changed}
      >
        <option value=${AUTOMATIC} ?selected=${this.value === null}>${strings.modelAutomatic}</option>
        ${local.length > 0
          ? html`<optgroup label=${strings.modelGroupLocal}>
              ${local.map((m) => html`<option value=${m.name} ?selected=${m.name === this.value}>${withPictures(m, m.name)}</option>`)}
            </optgroup>`
          : nothing}
        ${remote.length > 0
          ? html`<optgroup label=${strings.modelGroupRemote}>
              ${remote.map(
                (m) => html`<option value=${m.name} ?selected=${m.name === this.value}>
                  ${withPictures(m, strings.modelRemoteOption.replace('{model}', m.name).replace('{provider}', m.provider))}
                </option>`,
              )}
            </optgroup>`
          : nothing}
      </select>
    `;
  }

  #changed(event: Event): void {
    const value = (event.target as HTMLSelectElement).value;
    this.dispatchEvent(new ModelChangeEvent(value === AUTOMATIC ? null : value));
  }
}

/** An option's words, with "reads pictures" after them for a model that does. */
function withPictures(model: Model, option: string): string {
  return model.images ? strings.modelPicturesOption.replace('{option}', option) : option;
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-model-picker': SkaldModelPicker;
  }
  interface HTMLElementEventMap {
    [ModelChangeEvent.type]: ModelChangeEvent;
  }
}
