/**
 * A form a tool server asks the person to fill in while its call runs (MCP
 * elicitation, §8.5): its fields drawn from the server's schema, with the
 * server's defaults filled in; sent, declined or cancelled. What is typed goes
 * to the server only: the page keeps it in the form and nowhere else.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import type { FormCard } from '../../api/types.js';
import { strings } from '../../i18n/en.js';
import { controls } from '../../styles/controls.js';
import { styles } from '../skald-approval-card/skald-approval-card.styles.js';
import { FormReplyEvent } from '../events.js';

/** One field of the server's schema, as far as a form shows it. */
interface Field {
  readonly name: string;
  readonly type: string;
  readonly title: string;
  readonly description: string;
  readonly required: boolean;
  readonly choices: readonly { readonly value: string; readonly label: string }[] | null;
  readonly format: string | null;
  readonly fallback: unknown;
}

/**
 * Test hooks: `[data-testid=form-field]` (each input, its `name` the field's),
 * `[data-testid=form-accept]`, `[data-testid=form-decline]`, `[data-testid=form-cancel]`.
 *
 * @summary A tool server's form, answered accept, decline or cancel.
 * @fires skald-form-reply - the person replied
 */
@customElement('skald-form-card')
export class SkaldFormCard extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) card: FormCard | null = null;
  @property({ type: Boolean }) busy = false;
  @property() error = '';
  @property() context = '';

  /** What the person entered, by field; the server's defaults until they change one. */
  @state() private values: Record<string, unknown> = {};
  #shown: string | null = null;

  override focus(options?: FocusOptions): void {
    void this.updateComplete.then(() => this.renderRoot.querySelector<HTMLElement>('section.card')?.focus(options));
  }

  protected override willUpdate(): void {
    const card = this.card;
    if (card !== null && card.id !== this.#shown) {
      this.#shown = card.id;
      this.values = Object.fromEntries(
        fields(card.details.schema).flatMap((field) => (field.fallback === undefined ? [] : [[field.name, field.fallback]])),
      );
    }
  }

  override render(): TemplateResult | typeof nothing {
    const card = this.card;
    if (card === null) return nothing;
    const server = card.details.server;
    return html`
      <section class="card form-card" aria-labelledby="form-message" tabindex="-1">
        <header>
          <span class="kind">${strings.formKind.replace('{server}', server)}</span>
          ${this.context ? html`<span class="context">${this.context}</span>` : nothing}
        </header>
        <p class="question" id="form-message">${card.details.message}</p>
        <form class="fields" @submit=${this.#submit}>
          ${fields(card.details.schema).map((field) => this.#renderField(field))}
          <p class="hint">${strings.formPrivate.replaceAll('{server}', server)}</p>
          ${this.error ? html`<p class="notice error" role="alert">${this.error}</p>` : nothing}
          <div class="actions">
            <button type="submit" class="primary" data-testid="form-accept" ?disabled=${this.busy}>${strings.formAccept}</button>
            <button type="button" data-testid="form-decline" ?disabled=${this.busy} @click=${() => this.#reply('decline')}>
              ${strings.formDecline}
            </button>
            <button type="button" data-testid="form-cancel" ?disabled=${this.busy} @click=${() => this.#reply('cancel')}>
              ${strings.formCancel}
            </button>
          </div>
        </form>
      </section>
    `;
  }

  #renderField(field: Field): TemplateResult {
    const id = `field-${field.name}`;
    const value = this.values[field.name];
    const label = html`<label for=${id}>
      ${field.title}${field.required ? html` <span class="hint">(${strings.formRequired})</span>` : nothing}
    </label>`;
    const help = field.description ? html`<span class="hint">${field.description}</span>` : nothing;
    if (field.type === 'boolean') {
      return html`<div class="field checkbox">
        <input
          id=${id}
          type="checkbox"
          name=${field.name}
          data-testid="form-field"
          .checked=${value === true}
          @change=${(e: Event) => this.#set(field.name, (e.target as HTMLInputElement).checked)}
        />
        ${label} ${help}
      </div>`;
    }
    if (field.type === 'array') {
      const chosen: string[] = Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
      return html`<fieldset class="field">
        <legend>${field.title}${field.required ? html` <span class="hint">(${strings.formRequired})</span>` : nothing}</legend>
        ${(field.choices ?? []).map(
          (c) => html`<label class="checkbox">
            <input
              type="checkbox"
              name=${field.name}
              value=${c.value}
              data-testid="form-field"
              .checked=${chosen.includes(c.value)}
              @change=${(e: Event) => {
                const on = (e.target as HTMLInputElement).checked;
                const next = on ? [...chosen, c.value] : chosen.filter((v) => v !== c.value);
                this.#set(field.name, next.length === 0 ? undefined : next);
              }}
            />
            ${c.label}
          </label>`,
        )}
        ${help}
      </fieldset>`;
    }
    if (field.choices !== null) {
      return html`<div class="field">
        ${label}
        <select
          id=${id}
          name=${field.name}
          data-testid="form-field"
          ?required=${field.required}
          @change=${(e: Event) => this.#set(field.name, (e.target as HTMLSelectElement).value || undefined)}
        >
          <option value="" ?selected=${value === undefined}>${strings.formChoose}</option>
          ${field.choices.map((c) => html`<option value=${c.value} ?selected=${value === c.value}>${c.label}</option>`)}
        </select>
        ${help}
      </div>`;
    }
    const numeric = field.type === 'number' || field.type === 'integer';
    const type = numeric ? 'number' : field.format === 'email' ? 'email' : field.format === 'date' ? 'date' : field.format === 'uri' ? 'url' : 'text';
    return html`<div class="field">
      ${label}
      <input
        id=${id}
        type=${type}
        name=${field.name}
        data-testid="form-field"
        autocomplete="off"
        step=${field.type === 'integer' ? '1' : 'any'}
        ?required=${field.required}
        .value=${typeof value === 'string' || typeof value === 'number' ? String(value) : ''}
        @input=${(e: Event) => {
          const text = (e.target as HTMLInputElement).value;
          this.#set(field.name, text === '' ? undefined : numeric ? Number(text) : text);
        }}
      />
      ${help}
    </div>`;
  }

  #set(name: string, value: unknown): void {
    const next = { ...this.values };
    if (value === undefined) delete next[name];
    else next[name] = value;
    this.values = next;
  }

  #submit(event: Event): void {
    event.preventDefault();
    this.#reply('accept');
  }

  #reply(decision: 'accept' | 'decline' | 'cancel'): void {
    if (this.card === null || this.busy) return;
    this.dispatchEvent(new FormReplyEvent(this.card, decision, decision === 'accept' ? { ...this.values } : null));
  }
}

/** The fields of a form schema, in its order. */
export function fields(schema: Record<string, unknown>): Field[] {
  const properties = isObject(schema['properties']) ? schema['properties'] : {};
  const required = Array.isArray(schema['required']) ? schema['required'].filter((r) => typeof r === 'string') : [];
  return Object.entries(properties).flatMap(([name, raw]) => {
    if (!isObject(raw)) return [];
    const text = (key: string): string => (typeof raw[key] === 'string' ? raw[key] : '');
    return [
      {
        name,
        type: text('type') || 'string',
        title: text('title') || name,
        description: text('description'),
        required: required.includes(name),
        choices: choicesOf(raw['type'] === 'array' && isObject(raw['items']) ? raw['items'] : raw),
        format: text('format') || null,
        fallback: raw['default'],
      },
    ];
  });
}

/** A field's choices: `enum` (with `enumNames`), or `oneOf` or `anyOf` of `const`/`title`. */
function choicesOf(field: Record<string, unknown>): Field['choices'] {
  if (Array.isArray(field['enum'])) {
    const names = Array.isArray(field['enumNames']) ? field['enumNames'] : [];
    return field['enum'].map((value, i) => ({ value: String(value), label: typeof names[i] === 'string' ? names[i] : String(value) }));
  }
  const listed = Array.isArray(field['oneOf']) ? field['oneOf'] : Array.isArray(field['anyOf']) ? field['anyOf'] : null;
  if (listed !== null) {
    return listed.filter(isObject).map((c) => ({ value: String(c['const']), label: typeof c['title'] === 'string' ? c['title'] : String(c['const']) }));
  }
  return null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-form-card': SkaldFormCard;
  }
}
