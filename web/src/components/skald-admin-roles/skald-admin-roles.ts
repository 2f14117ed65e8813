/**
 * Roles are data (§6.1): every attribute of every role, editable here —
 * what its people may do, how long until their window locks, which models
 * and tools they may use, their privacy tier, a daily token cap, who may
 * supervise or be supervised, and whether what a role may not approve goes to the
 * person's supervisor (§6.2). New roles
 * can be added; a role nobody has can be deleted. The server validates
 * each change and refuses one that would leave nobody managing the
 * instance.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import { ApiError } from '../../api/client.js';
import type { PrivacyTier, RoleDetail, RolePatch } from '../../api/types.js';
import { ActionController } from '../../controllers/action-controller.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings } from '../../i18n/en.js';
import { formatNumber } from '../../i18n/format.js';
import { plural } from '../../i18n/locale.js';
import type { Login } from '../../state/login.js';
import { controls, page } from '../../styles/controls.js';
import { formText } from '../form.js';
import { closeIcon, pencilIcon, plusIcon, trashIcon } from '../icons.js';
import type { SkaldConfirm } from '../skald-confirm/skald-confirm.js';
import '../skald-confirm/skald-confirm.js';
import { styles } from './skald-admin-roles.styles.js';

// Only what a role changes today: scheduling and memory retention join when reminders
// and memory exist (a patch leaves the attributes it omits as they are).
const FLAGS = [
  ['manage_instance', 'roleManageInstance'],
  ['may_approve', 'roleMayApprove'],
  ['may_use_subagents', 'roleMaySubagents'],
  ['lock_on_close', 'roleLockOnClose'],
] as const;

/** Supervision (§6.2): each with a line saying what it lets happen. */
const SUPERVISION = [
  ['may_supervise', 'roleMaySupervise', 'roleMaySuperviseHint'],
  ['may_be_supervised', 'roleMayBeSupervised', 'roleMayBeSupervisedHint'],
  ['may_end_supervision', 'roleMayEndSupervision', 'roleMayEndSupervisionHint'],
  ['cards_to_supervisor', 'roleCardsToSupervisor', 'roleCardsToSupervisorHint'],
] as const;

const NUMBERS = [
  ['max_turns', 'roleMaxTurns', 1, 1000],
  ['idle_timeout_minutes', 'roleIdle', 1, 1440],
] as const;

/**
 * Test hooks: `[data-testid=role-item]` (its `data-id`) with `role-edit`,
 * `role-delete`; the open form `[data-testid=role-form]` with its fields
 * named after the attributes and `role-save`; `#new-role-id`,
 * `#new-role-label`, `[data-testid=add-role]`.
 *
 * @summary Roles: every attribute, editable.
 */
@customElement('skald-admin-roles')
export class SkaldAdminRoles extends LitElement {
  static override styles = [controls, page, styles];

  @property({ attribute: false }) login: Login | null = null;

  @state() private editing: string | null = null;
  readonly #action = new ActionController(this);
  @state() private announcement = '';
  @state() private newId = '';
  @state() private newLabel = '';

  @query('skald-confirm') private confirm?: SkaldConfirm;

  readonly #roles = new ResourceController<readonly RoleDetail[]>(this, (signal) => {
    const client = this.login?.client;
    if (!client) return Promise.reject(new ApiError('network', '', 0));
    return client.roles(signal);
  });

  override render(): TemplateResult {
    const roles = this.#roles.value;
    return html`
      <p class="lead">${strings.rolesLead}</p>
      ${this.#action.error ? html`<p class="notice error" role="alert" data-testid="roles-error">${this.#action.error}</p>` : nothing}
      ${this.#roles.status()}
      ${roles ? html`<ul class="role-list">${roles.map((role) => this.#renderRole(role))}</ul>` : nothing}
      <section class="block" aria-labelledby="new-role-title">
        <h3 id="new-role-title">${strings.rolesAddTitle}</h3>
        <form class="add" @submit=${this.#add} novalidate>
          <div class="field">
            <label for="new-role-label">${strings.roleLabel}</label>
            <input id="new-role-label" .value=${this.newLabel} @input=${(e: Event) => this.#labelTyped((e.target as HTMLInputElement).value)} />
          </div>
          <div class="field">
            <label for="new-role-id">${strings.roleId}</label>
            <input id="new-role-id" spellcheck="false" aria-describedby="role-id-hint" .value=${this.newId}
              @input=${(e: Event) => (this.newId = (e.target as HTMLInputElement).value)} />
            <p class="hint" id="role-id-hint">${strings.roleIdHint}</p>
          </div>
          <div class="field submit">
            <button type="submit" class="primary" data-testid="add-role" ?disabled=${this.#action.busy}>${plusIcon}${strings.rolesAdd}</button>
          </div>
        </form>
      </section>
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
      <skald-confirm></skald-confirm>
    `;
  }

  #labelTyped(label: string): void {
    const suggested = (text: string): string =>
      text
        .toLowerCase()
        .normalize('NFKD')
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-+|-+$/g, '')
        .slice(0, 40);
    if (this.newId === '' || this.newId === suggested(this.newLabel)) this.newId = suggested(label);
    this.newLabel = label;
  }

  #renderRole(role: RoleDetail): TemplateResult {
    const editing = this.editing === role.id;
    return html`<li class="block" data-testid="role-item" data-id=${role.id}>
      <div class="row-head">
        <span class="row-title"><h3>${role.label}</h3><span class="muted small">${role.id}</span>
          ${role.manage_instance ? html`<span class="tag plain">${strings.roleManages}</span>` : nothing}
          <span class="tag ${role.privacy_tier === 'local_only' ? 'local' : 'remote'}">${role.privacy_tier === 'local_only' ? strings.roleTierLocal : strings.roleTierAny}</span>
        </span>
        <span class="actions">
          <button type="button" data-testid="role-edit" aria-expanded=${editing ? 'true' : 'false'} aria-controls="form-${role.id}"
            @click=${() => (this.editing = editing ? null : role.id)}>
            ${editing ? closeIcon : pencilIcon}${editing ? strings.close : strings.edit}<span class="visually-hidden"> ${role.label}</span>
          </button>
          <button type="button" class="quiet danger-text" data-testid="role-delete"
            ?disabled=${this.#action.busy} @click=${() => void this.#delete(role)}>${trashIcon}${strings.delete}<span class="visually-hidden"> ${role.label}</span></button>
        </span>
      </div>
      ${role.description ? html`<p class="small">${role.description}</p>` : nothing}
      <p class="small muted">${summary(role)}</p>
      ${editing ? this.#renderForm(role) : nothing}
    </li>`;
  }

  #renderForm(role: RoleDetail): TemplateResult {
    const id = (field: string): string => `${role.id}-${field}`;
    return html`<form id="form-${role.id}" data-testid="role-form" class="role-form" @submit=${(e: Event) => void this.#save(e, role)} novalidate>
      <div class="grid-fields">
        <div class="field">
          <label for=${id('label')}>${strings.roleLabel}</label>
          <input id=${id('label')} name="label" .value=${role.label} />
        </div>
        <div class="field">
          <label for=${id('preferred_strength')}>${strings.roleStrength}</label>
          <select id=${id('preferred_strength')} name="preferred_strength">
            ${(['fast', 'balanced', 'strong'] as const).map(
              (s) => html`<option value=${s} ?selected=${role.preferred_strength === s}>${strings[strengthKey(s)]}</option>`,
            )}
          </select>
        </div>
        <div class="field">
          <label for=${id('privacy_tier')}>${strings.roleTier}</label>
          <select id=${id('privacy_tier')} name="privacy_tier">
            <option value="any" ?selected=${role.privacy_tier === 'any'}>${strings.roleTierAnyLong}</option>
            <option value="local_only" ?selected=${role.privacy_tier === 'local_only'}>${strings.roleTierLocalLong}</option>
          </select>
        </div>
        ${NUMBERS.map(
          ([field, label, min, max]) => html`<div class="field">
            <label for=${id(field)}>${strings[label]}</label>
            <input id=${id(field)} name=${field} type="number" min=${min} max=${max} required .value=${String(role[field])} />
          </div>`,
        )}
        <div class="field">
          <label for=${id('usage_cap_tokens')}>${strings.roleCap}</label>
          <input id=${id('usage_cap_tokens')} name="usage_cap_tokens" type="number" min="0" aria-describedby=${id('cap-hint')}
            .value=${role.usage_cap_tokens === null ? '' : String(role.usage_cap_tokens)} />
          <p class="hint" id=${id('cap-hint')}>${strings.roleCapHint}</p>
        </div>
      </div>
      <div class="field">
        <label for=${id('description')}>${strings.roleDescription}</label>
        <textarea id=${id('description')} name="description" rows="2" .value=${role.description}></textarea>
      </div>
      <fieldset>
        <legend>${strings.roleAllows}</legend>
        ${FLAGS.map(
          ([field, label]) => html`<div class="check">
            <input type="checkbox" id=${id(field)} name=${field} ?checked=${role[field]} />
            <label for=${id(field)}>${strings[label]}</label>
          </div>`,
        )}
      </fieldset>
      <fieldset data-testid="role-supervision">
        <legend>${strings.roleSupervision}</legend>
        ${SUPERVISION.map(
          ([field, label, hint]) => html`<div class="check">
            <input type="checkbox" id=${id(field)} name=${field} ?checked=${role[field]} aria-describedby=${id(`${field}-hint`)} />
            <span>
              <label for=${id(field)}>${strings[label]}</label>
              <span class="hint" id=${id(`${field}-hint`)}>${strings[hint]}</span>
            </span>
          </div>`,
        )}
      </fieldset>
      <div class="grid-fields">
        <div class="field">
          <label for=${id('allowed_models')}>${strings.roleModels}</label>
          <textarea id=${id('allowed_models')} name="allowed_models" rows="3" spellcheck="false" aria-describedby=${id('models-hint')}
            .value=${role.allowed_models.join('\n')}></textarea>
          <p class="hint" id=${id('models-hint')}>${strings.rolePatternsHint}</p>
        </div>
        <div class="field">
          <label for=${id('tools')}>${strings.roleTools}</label>
          <textarea id=${id('tools')} name="tools" rows="3" spellcheck="false" aria-describedby=${id('tools-hint')}
            .value=${role.tools.join('\n')}></textarea>
          <p class="hint" id=${id('tools-hint')}>${strings.rolePatternsHint}</p>
        </div>
      </div>
      <div class="actions">
        <button type="submit" class="primary" data-testid="role-save" ?disabled=${this.#action.busy}>${this.#action.busy ? strings.saving : strings.save}</button>
        <button type="button" @click=${() => (this.editing = null)}>${strings.cancel}</button>
      </div>
    </form>`;
  }

  #run(call: () => Promise<unknown>, done: string): Promise<boolean> {
    return this.#action.run(call, {
      done: async () => {
        this.announcement = done;
        await this.#roles.reload();
      },
    });
  }


  async #save(event: Event, role: RoleDetail): Promise<void> {
    event.preventDefault();
    const client = this.login?.client;
    if (!client) return;
    const form = new FormData(event.target as HTMLFormElement);
    const text = (name: string): string => formText(form, name).trim();
    const lines = (name: string): string[] =>
      text(name)
        .split(/[\n,]+/)
        .map((line) => line.trim())
        .filter((line) => line !== '');
    const cap = text('usage_cap_tokens');
    const patch: RolePatch = {
      label: text('label'),
      description: text('description'),
      preferred_strength: text('preferred_strength'),
      // The select offers only the tiers there are.
      privacy_tier: text('privacy_tier') as PrivacyTier,
      max_turns: Number(text('max_turns')),
      idle_timeout_minutes: Number(text('idle_timeout_minutes')),
      usage_cap_tokens: cap === '' ? null : Number(cap),
      allowed_models: lines('allowed_models'),
      tools: lines('tools'),
      manage_instance: form.has('manage_instance'),
      may_approve: form.has('may_approve'),
      may_use_subagents: form.has('may_use_subagents'),
      lock_on_close: form.has('lock_on_close'),
      may_supervise: form.has('may_supervise'),
      may_be_supervised: form.has('may_be_supervised'),
      may_end_supervision: form.has('may_end_supervision'),
      cards_to_supervisor: form.has('cards_to_supervisor'),
    };
    if (await this.#run(() => client.updateRole(role.id, patch), strings.roleSaved.replace('{name}', patch.label ?? role.label))) {
      this.editing = null;
    }
  }

  async #add(event: Event): Promise<void> {
    event.preventDefault();
    const client = this.login?.client;
    const id = this.newId.trim();
    const label = this.newLabel.trim();
    if (!client) return;
    if (id === '' || label === '') {
      this.#action.error = strings.fillEverything;
      return;
    }
    if (await this.#run(() => client.createRole(id, label), strings.roleAdded.replace('{name}', label))) {
      this.newId = '';
      this.newLabel = '';
      this.editing = id;
    }
  }

  async #delete(role: RoleDetail): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    const confirmed = await this.confirm?.ask({
      title: strings.roleDeleteTitle.replace('{name}', role.label),
      body: strings.roleDeleteBody,
      action: strings.delete,
    });
    if (confirmed) await this.#run(() => client.deleteRole(role.id), strings.roleDeleted.replace('{name}', role.label));
  }
}

function strengthKey(strength: 'fast' | 'balanced' | 'strong'): 'strengthFast' | 'strengthBalanced' | 'strengthStrong' {
  return strength === 'fast' ? 'strengthFast' : strength === 'balanced' ? 'strengthBalanced' : 'strengthStrong';
}

/** A role's settings in one line. */
function summary(role: RoleDetail): string {
  const parts = [
    role.may_approve ? strings.roleSumApproves : strings.roleSumNoApprove,
    strings.roleSumIdle.replace('{n}', formatNumber(role.idle_timeout_minutes)),
    role.usage_cap_tokens === null
      ? strings.roleSumNoCap
      : plural(role.usage_cap_tokens, strings.roleSumCap).replace('{n}', formatNumber(role.usage_cap_tokens)),
    strings.roleSumModels.replace('{models}', role.allowed_models.join(', ')),
    ...(role.may_supervise ? [strings.roleSumSupervises] : []),
    ...(role.may_be_supervised ? [role.may_end_supervision ? strings.roleSumSupervisedEnds : strings.roleSumSupervised] : []),
    ...(role.cards_to_supervisor && !role.may_approve ? [strings.roleSumCardsToSupervisor] : []),
  ];
  return parts.join(' · ');
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-admin-roles': SkaldAdminRoles;
  }
}
