/**
 * The people of the instance, for an administrator: add someone (which
 * yields a one-time enrolment code that opens nothing — they choose their
 * own password at first login — and, where their role may be supervised, a
 * supervisor who can open their space once they enrol, as the enrolment
 * screen tells them first; §6.2), rename, change role, deactivate or
 * reactivate, a new enrolment code, and delete with their name typed.
 * Every change is recorded and shown to the person it affects (§3); the
 * server refuses to remove the last administrator.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import { ApiError } from '../../api/client.js';
import type { Enrolment, Person, RoleDetail } from '../../api/types.js';
import { ActionController } from '../../controllers/action-controller.js';
import { ClipboardController } from '../../controllers/clipboard-controller.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings } from '../../i18n/en.js';
import type { Login } from '../../state/login.js';
import { roleMayBeSupervised, supervisorChoices } from '../../state/supervision.js';
import { controls, page } from '../../styles/controls.js';
import { pencilIcon, plusIcon, trashIcon } from '../icons.js';
import '../skald-avatar/skald-avatar.js';
import type { SkaldConfirm } from '../skald-confirm/skald-confirm.js';
import '../skald-confirm/skald-confirm.js';
import { styles } from './skald-admin-people.styles.js';

interface PeoplePage {
  readonly people: readonly Person[];
  readonly roles: readonly RoleDetail[];
}

/**
 * Test hooks: `#person-name`, `#person-role`, `#person-supervisor` (only for a role
 * that may be supervised), `[data-testid=add-person]`,
 * `[data-testid=enrolment-code]`, `[data-testid=person-row]` (its
 * `data-name`, `data-status`) with `person-rename`, `person-role`,
 * `person-role-save`, `person-deactivate`, `person-reactivate`,
 * `person-code`, `person-delete`; `[data-testid=people-error]`.
 *
 * @summary People: add, rename, change role, deactivate, delete.
 */
@customElement('skald-admin-people')
export class SkaldAdminPeople extends LitElement {
  static override styles = [controls, page, styles];

  @property({ attribute: false }) login: Login | null = null;

  @state() private newName = '';
  @state() private newRole = 'member';
  /** The new person's supervisor's id; `''` for nobody. */
  @state() private newSupervisor = '';
  @state() private code: Enrolment | null = null;
  /** The supervisor the person just added was made with, by name. */
  @state() private codeSupervisor = '';
  @state() private renaming: string | null = null;
  @state() private roleChoice: ReadonlyMap<string, string> = new Map();
  readonly #action = new ActionController(this);
  @state() private announcement = '';

  @query('skald-confirm') private confirm?: SkaldConfirm;
  @query('#rename-field') private renameField?: HTMLInputElement;

  readonly #clipboard = new ClipboardController(this);
  readonly #data = new ResourceController<PeoplePage>(this, async (signal) => {
    const login = this.login;
    if (!login) throw new ApiError('network', '', 0);
    const [people, roles] = await Promise.all([login.client.everyone(signal), login.client.roles(signal)]);
    return { people, roles };
  });

  override render(): TemplateResult {
    const data = this.#data.value;
    return html`
      <p class="lead">${strings.peopleLead}</p>
      <section class="block" aria-labelledby="add-title">
        <h3 id="add-title">${strings.peopleAddTitle}</h3>
        <form class="add" @submit=${this.#add} novalidate>
          <div class="field">
            <label for="person-name">${strings.peopleName}</label>
            <input id="person-name" autocomplete="off" .value=${this.newName} @input=${(e: Event) => (this.newName = (e.target as HTMLInputElement).value)} />
          </div>
          <div class="field">
            <label for="person-role">${strings.peopleRole}</label>
            <select id="person-role" .value=${this.newRole} @change=${(e: Event) => (this.newRole = (e.target as HTMLSelectElement).value)}>
              ${(data?.roles ?? []).map((role) => html`<option value=${role.id} ?selected=${role.id === this.newRole}>${role.label}</option>`)}
            </select>
          </div>
          ${data && roleMayBeSupervised(data.roles, this.newRole) ? this.#renderSupervisorChoice(data) : nothing}
          <div class="field submit">
            <button type="submit" class="primary" data-testid="add-person" ?disabled=${this.#action.busy || data === undefined}>${plusIcon}${strings.peopleAdd}</button>
          </div>
        </form>
        <p class="muted small">${strings.peopleAddHint}</p>
        ${this.code ? this.#renderCode(this.code) : nothing}
      </section>
      ${this.#action.error ? html`<p class="notice error" role="alert" data-testid="people-error">${this.#action.error}</p>` : nothing}
      ${this.#data.status()}
      ${data
        ? html`<section class="block" aria-labelledby="people-title">
            <h3 id="people-title" tabindex="-1">${strings.peopleListTitle.replace('{n}', String(data.people.length))}</h3>
            <ul class="rows">
              ${data.people.map((person) => this.#renderPerson(person, data.roles))}
            </ul>
          </section>`
        : nothing}
      <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
      <skald-confirm></skald-confirm>
    `;
  }

  /** Who may supervise the person being added: active people whose role may supervise. */
  #renderSupervisorChoice(data: PeoplePage): TemplateResult {
    const choices = supervisorChoices(data.people, data.roles);
    return html`<div class="field">
      <label for="person-supervisor">${strings.peopleSupervisor}</label>
      <select id="person-supervisor" aria-describedby="person-supervisor-hint" .value=${this.newSupervisor}
        @change=${(e: Event) => (this.newSupervisor = (e.target as HTMLSelectElement).value)}>
        <option value="" ?selected=${this.newSupervisor === ''}>${strings.peopleSupervisorNone}</option>
        ${choices.map((person) => html`<option value=${person.id} ?selected=${person.id === this.newSupervisor}>${person.name}</option>`)}
      </select>
      <p class="hint" id="person-supervisor-hint">${strings.peopleSupervisorHint}</p>
    </div>`;
  }

  #renderCode(enrolment: Enrolment): TemplateResult {
    const copied = this.#clipboard.copied !== null;
    return html`<div class="notice ok code-box" role="status">
      <p>${strings.peopleCodeLead.replace(/\{name\}/g, enrolment.user.name)}</p>
      ${this.codeSupervisor
        ? html`<p data-testid="enrolment-supervisor">${strings.peopleCodeSupervisor.replace('{supervisor}', this.codeSupervisor).replace(/\{name\}/g, enrolment.user.name)}</p>`
        : nothing}
      <p class="code" data-testid="enrolment-code">${enrolment.enrolment_code}</p>
      <div class="actions">
        <button type="button" @click=${() => void this.#clipboard.copy(enrolment.enrolment_code)}>${copied ? strings.copied : strings.copy}</button>
        <button type="button" class="quiet" @click=${() => (this.code = null)}>${strings.done}</button>
      </div>
      <p class="small">${strings.peopleCodeOnce}</p>
    </div>`;
  }

  #renderPerson(person: Person, roles: readonly RoleDetail[]): TemplateResult {
    const me = this.login?.me.user.id === person.id;
    const role = roles.find((r) => r.id === person.role);
    const choice = this.roleChoice.get(person.id) ?? person.role;
    const status =
      person.status === 'pending'
        ? html`<span class="tag plain">${strings.peoplePending}</span>`
        : person.status === 'deactivated'
          ? html`<span class="tag bad">${strings.peopleDeactivated}</span>`
          : nothing;
    return html`<li data-testid="person-row" data-name=${person.name} data-status=${person.status}>
      <div class="person">
        <skald-avatar size="small" .name=${person.name}></skald-avatar>
        ${this.renaming === person.id
          ? html`<form class="rename" @submit=${(e: Event) => void this.#rename(e, person)}>
              <label class="visually-hidden" for="rename-field">${strings.peopleRenameLabel.replace('{name}', person.name)}</label>
              <input id="rename-field" .value=${person.name} @keydown=${(e: KeyboardEvent) => e.key === 'Escape' && (this.renaming = null)} />
              <button type="submit" class="primary">${strings.save}</button>
              <button type="button" @click=${() => (this.renaming = null)}>${strings.cancel}</button>
            </form>`
          : html`<span class="row-title">
              <strong>${person.name}</strong>${me ? html`<span class="muted small">${strings.peopleYou}</span>` : nothing}
              <span class="muted small">${role?.label ?? person.role}</span>${status}
            </span>`}
      </div>
      <div class="tools">
        <span class="role-change">
          <label class="visually-hidden" for="role-${person.id}">${strings.peopleRoleOf.replace('{name}', person.name)}</label>
          <select id="role-${person.id}" data-testid="person-role" .value=${choice}
            @change=${(e: Event) => (this.roleChoice = new Map(this.roleChoice).set(person.id, (e.target as HTMLSelectElement).value))}>
            ${roles.map((r) => html`<option value=${r.id} ?selected=${r.id === choice}>${r.label}</option>`)}
          </select>
          ${choice !== person.role
            ? html`<button type="button" class="primary" data-testid="person-role-save" ?disabled=${this.#action.busy} @click=${() => void this.#changeRole(person, choice)}>
                ${strings.peopleApplyRole}
              </button>`
            : nothing}
        </span>
        <button type="button" class="quiet" data-testid="person-rename"
          @click=${() => this.#startRename(person)}>${pencilIcon}${strings.rename}<span class="visually-hidden"> ${person.name}</span></button>
        ${person.status === 'pending'
          ? html`<button type="button" class="quiet" data-testid="person-code" ?disabled=${this.#action.busy} @click=${() => void this.#reissue(person)}>${strings.peopleNewCode}<span class="visually-hidden"> ${person.name}</span></button>`
          : nothing}
        ${person.status === 'deactivated'
          ? html`<button type="button" class="quiet" data-testid="person-reactivate" ?disabled=${this.#action.busy} @click=${() => void this.#setActive(person, true)}>${strings.peopleReactivate}<span class="visually-hidden"> ${person.name}</span></button>`
          : person.status === 'active' && !me
            ? html`<button type="button" class="quiet" data-testid="person-deactivate" ?disabled=${this.#action.busy} @click=${() => void this.#setActive(person, false)}>${strings.peopleDeactivate}<span class="visually-hidden"> ${person.name}</span></button>`
            : nothing}
        ${me
          ? nothing
          : html`<button type="button" class="quiet danger-text" data-testid="person-delete"
              ?disabled=${this.#action.busy} @click=${() => void this.#delete(person)}>${trashIcon}${strings.delete}<span class="visually-hidden"> ${person.name}</span></button>`}
      </div>
    </li>`;
  }

  #startRename(person: Person): void {
    this.renaming = person.id;
    void this.updateComplete.then(() => {
      this.renameField?.focus();
      this.renameField?.select();
    });
  }

  #run(call: () => Promise<unknown>, done: string): Promise<boolean> {
    return this.#action.run(call, {
      done: async () => {
        this.announcement = done;
        await this.#data.reload();
      },
    });
  }


  async #add(event: Event): Promise<void> {
    event.preventDefault();
    const name = this.newName.trim();
    const login = this.login;
    if (!login) return;
    if (name === '') {
      this.#action.error = strings.peopleNeedsName;
      return;
    }
    const data = this.#data.value;
    // Only a role that may be supervised shows the choice; one left over from another role is dropped.
    const supervisor = data && roleMayBeSupervised(data.roles, this.newRole) ? data.people.find((p) => p.id === this.newSupervisor) : undefined;
    const ok = await this.#run(async () => {
      this.code = await login.client.addPerson(name, this.newRole, supervisor?.id);
      this.codeSupervisor = supervisor?.name ?? '';
    }, strings.peopleAdded.replace('{name}', name));
    if (ok) {
      this.newName = '';
      this.newSupervisor = '';
    }
  }

  async #rename(event: Event, person: Person): Promise<void> {
    event.preventDefault();
    const name = this.renameField?.value.trim() ?? '';
    this.renaming = null;
    if (name === '' || name === person.name || !this.login) return;
    const client = this.login.client;
    await this.#run(() => client.updatePerson(person.id, { name }), strings.peopleRenamed.replace('{name}', name));
  }

  async #changeRole(person: Person, role: string): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    await this.#run(() => client.updatePerson(person.id, { role }), strings.peopleRoleChanged.replace('{name}', person.name));
    // Refused or done, the list now shows the role the person has.
    const choices = new Map(this.roleChoice);
    choices.delete(person.id);
    this.roleChoice = choices;
  }

  async #setActive(person: Person, active: boolean): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    if (!active) {
      const confirmed = await this.confirm?.ask({
        title: strings.peopleDeactivateTitle.replace('{name}', person.name),
        body: strings.peopleDeactivateBody.replace(/\{name\}/g, person.name),
        action: strings.peopleDeactivate,
      });
      if (!confirmed) return;
    }
    await this.#run(
      () => client.setPersonActive(person.id, active),
      (active ? strings.peopleReactivated : strings.peopleDeactivatedDone).replace('{name}', person.name),
    );
  }

  async #reissue(person: Person): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    await this.#run(async () => {
      this.code = await client.reissueEnrolment(person.id);
      this.codeSupervisor = '';
    }, strings.peopleCodeReissued.replace('{name}', person.name));
  }

  async #delete(person: Person): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    const confirmed = await this.confirm?.ask({
      title: strings.peopleDeleteTitle.replace('{name}', person.name),
      body: strings.peopleDeleteBody.replace(/\{name\}/g, person.name),
      action: strings.peopleDeleteAction,
      typed: person.name,
    });
    if (!confirmed) return;
    if (await this.#run(() => client.deletePerson(person.id, person.name), strings.peopleDeleted.replace('{name}', person.name))) {
      // The row that had focus is gone: focus goes to the list's heading.
      await this.updateComplete;
      this.renderRoot.querySelector<HTMLElement>('#people-title')?.focus();
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-admin-people': SkaldAdminPeople;
  }
}
