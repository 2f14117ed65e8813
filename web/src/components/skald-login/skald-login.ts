/**
 * The way in: the people of this instance as a picker; pick yourself, type
 * your password. Also the two other doors that open a space: enrolment (a
 * new person with the code an administrator gave them chooses a password)
 * and recovery (a forgotten password, reset with the recovery code). Both
 * end on the new recovery code, shown to that person alone. Before an
 * enrolment's password is chosen, the screen says who will be able to open
 * the space, when the account was made with a supervisor (§6.2).
 *
 * Owns: the launch-token calls that unlock (login, enrol, recover) and
 * what the person typed, for as long as the form is on screen. Never keeps a
 * password or a code after the call returns.
 */
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';

import { ApiError, type ApiClient } from '../../api/client.js';
import type { Person, Unlocked } from '../../api/types.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { formatList, formatNumber } from '../../i18n/format.js';
import { plural } from '../../i18n/locale.js';
import { controls, screen } from '../../styles/controls.js';
import { SignedInEvent } from '../events.js';
import { formText } from '../form.js';
import '../skald-avatar/skald-avatar.js';
import '../skald-password-hint/skald-password-hint.js';
import '../skald-recovery-code/skald-recovery-code.js';
import { styles } from './skald-login.styles.js';

type View =
  | { readonly kind: 'picker' }
  | { readonly kind: 'password'; readonly person: Person }
  | { readonly kind: 'enrol'; readonly name: string }
  | { readonly kind: 'recover'; readonly name: string }
  | { readonly kind: 'code'; readonly unlocked: Unlocked; readonly reason: 'enrol' | 'recover' };

/**
 * Test hooks: `[data-testid=picker]` lists `[data-testid=person]` buttons
 * (their `data-name` is the person's name); the forms are
 * `[data-testid=login-form]`, `enrol-form` and `recover-form`; on the
 * enrolment form, `[data-testid=enrol-supervisors]` names who will be able
 * to open the space.
 *
 * @summary The login picker, enrolment and recovery.
 * @fires skald-signed-in - a person unlocked their space
 */
@customElement('skald-login')
export class SkaldLogin extends LitElement {
  static override styles = [controls, screen, styles];

  /** The launch-token client. */
  @property({ attribute: false }) client: ApiClient | null = null;
  /** A line to show above the picker, e.g. why the person is back here. */
  @property() notice = '';

  @state() private view: View = { kind: 'picker' };
  @state() private people: readonly Person[] | null = null;
  @state() private loadError = '';
  @state() private error = '';
  @state() private busy = false;
  @state() private password = '';
  @state() private confirm = '';
  @state() private showPassword = false;
  /** Until when (ms since the epoch) the server asked the person to wait after failed attempts; 0: no wait. */
  @state() private waitUntil = 0;
  /** The clock the countdown reads, moved once a second while there is a wait. */
  @state() private now = Date.now();
  #ticker: ReturnType<typeof setInterval> | undefined;
  /** Who will be able to open the space being enrolled, by name (`POST /api/enrol/check`). */
  @state() private supervisors: readonly string[] = [];
  /** The name and code last checked: the server counts each check as an attempt, so never twice. */
  #checked = '';
  #checking: AbortController | null = null;

  @query('[data-autofocus]') private autofocusTarget?: HTMLElement;

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('client')) void this.#loadPeople();
  }

  protected override updated(changed: PropertyValues): void {
    if (changed.has('view') || (changed.has('people') && this.view.kind === 'picker')) this.autofocusTarget?.focus();
  }

  async #loadPeople(): Promise<void> {
    if (this.client === null) return;
    this.loadError = '';
    try {
      this.people = await this.client.people();
    } catch (error) {
      this.loadError = describeError(error);
    }
  }

  #go(view: View): void {
    this.error = '';
    this.password = '';
    this.confirm = '';
    this.showPassword = false;
    this.supervisors = [];
    this.#checked = '';
    this.#checking?.abort();
    this.#checking = null;
    this.view = view;
  }

  override render(): TemplateResult {
    const view = this.view;
    switch (view.kind) {
      case 'picker':
        return this.#renderPicker();
      case 'password':
        return this.#renderPassword(view.person);
      case 'enrol':
        return this.#renderEnrol(view.name);
      case 'recover':
        return this.#renderRecover(view.name);
      case 'code':
        return html`<skald-recovery-code
          .code=${view.unlocked.recovery_code ?? ''}
          .name=${view.unlocked.user.name}
          .reason=${view.reason}
          @skald-recovery-code-kept=${() => this.dispatchEvent(new SignedInEvent(view.unlocked))}
        ></skald-recovery-code>`;
    }
  }

  #renderPicker(): TemplateResult {
    const people = this.people;
    return html`
      <div class="screen">
        <section class="panel wide" aria-labelledby="title">
          <p class="brand">${strings.productName}</p>
          <h1 id="title">${strings.pickerTitle}</h1>
          ${this.notice ? html`<p class="notice ok" role="status" data-testid="login-notice">${this.notice}</p>` : nothing}
          ${this.loadError
            ? html`<div class="notice error" role="alert">
                <p>${this.loadError}</p>
                <button type="button" @click=${() => void this.#loadPeople()}>${strings.retry}</button>
              </div>`
            : nothing}
          ${people === null && !this.loadError ? html`<p class="lead" role="status">${strings.loading}</p>` : nothing}
          ${people !== null
            ? html`<ul class="people" data-testid="picker" aria-label=${strings.pickerLabel}>
                ${people.map(
                  (person, index) => html`<li>
                    <button
                      type="button"
                      class="person"
                      data-testid="person"
                      data-name=${person.name}
                      ?data-autofocus=${index === 0}
                      @click=${() => this.#pick(person)}
                    >
                      <skald-avatar size="large" .name=${person.name}></skald-avatar>
                      <span class="person-name">${person.name}</span>
                      ${person.status === 'pending'
                        ? html`<span class="person-note">${strings.pickerPending}</span>`
                        : nothing}
                    </button>
                  </li>`,
                )}
              </ul>`
            : nothing}
          <p class="below">
            <button type="button" class="link" data-testid="have-code" @click=${() => this.#go({ kind: 'enrol', name: '' })}>
              ${strings.pickerHaveCode}
            </button>
          </p>
        </section>
      </div>
    `;
  }

  #pick(person: Person): void {
    if (person.status === 'pending') this.#go({ kind: 'enrol', name: person.name });
    else this.#go({ kind: 'password', person });
  }

  #renderPassword(person: Person): TemplateResult {
    return html`
      <div class="screen">
        <section class="panel" aria-labelledby="title">
          <form data-testid="login-form" @submit=${(e: Event) => this.#login(e, person)} novalidate>
            <div class="who">
              <skald-avatar size="large" .name=${person.name}></skald-avatar>
              <h1 id="title">${strings.loginTitle.replace('{name}', person.name)}</h1>
            </div>
            ${this.error ? html`<p class="notice error" role="alert" data-testid="login-error">${this.error}</p>` : nothing}
            ${this.#waiting()
              ? html`<p class="hint" role="timer" data-testid="login-wait">
                  ${this.#waitText()}
                </p>`
              : nothing}
            <div class="field">
              <label for="password">${strings.password}</label>
              ${this.#passwordInput('password', 'current-password', true)}
            </div>
            <div class="actions spread">
              <button type="submit" class="primary" ?disabled=${this.busy || this.password === '' || this.#waiting()}>
                ${this.busy ? strings.unlocking : strings.unlock}
              </button>
              <button type="button" class="link" @click=${() => this.#go({ kind: 'recover', name: person.name })}>
                ${strings.forgotPassword}
              </button>
            </div>
            <p class="below">
              <button type="button" class="link" @click=${() => this.#go({ kind: 'picker' })}>${strings.notYou}</button>
            </p>
          </form>
        </section>
      </div>
    `;
  }

  #passwordInput(id: string, autocomplete: string, autofocus: boolean, invalid = false): TemplateResult {
    return html`<div class="password-row">
      <input
        id=${id}
        name=${id}
        type=${this.showPassword ? 'text' : 'password'}
        autocomplete=${autocomplete}
        spellcheck="false"
        autocapitalize="off"
        ?data-autofocus=${autofocus}
        aria-invalid=${invalid ? 'true' : 'false'}
        aria-describedby=${autocomplete === 'new-password' ? 'password-hint' : nothing}
        .value=${this.password}
        @input=${(e: Event) => (this.password = (e.target as HTMLInputElement).value)}
      />
      <button
        type="button"
        class="quiet reveal"
        aria-pressed=${this.showPassword ? 'true' : 'false'}
        @click=${() => (this.showPassword = !this.showPassword)}
      >
        ${this.showPassword ? strings.hide : strings.show}
      </button>
    </div>`;
  }

  /** The seconds left, in the plural form the language uses for them. */
  #waitText(): string {
    const seconds = Math.ceil((this.waitUntil - this.now) / 1000);
    return plural(seconds, strings.loginWait).replace('{n}', formatNumber(seconds));
  }

  #waiting(): boolean {
    return this.waitUntil > this.now;
  }

  /**
   * Counts down the wait the server asked for. The password typed meanwhile is kept and
   * not sent (the server would refuse even the right one); when the wait is over, Enter
   * sends it.
   */
  #waitFor(seconds: number): void {
    clearInterval(this.#ticker);
    this.now = Date.now();
    this.waitUntil = this.now + seconds * 1000;
    this.#ticker = setInterval(() => {
      this.now = Date.now();
      if (this.#waiting()) return;
      clearInterval(this.#ticker);
      this.waitUntil = 0;
      this.error = '';
      this.autofocusTarget?.focus();
    }, 1000);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearInterval(this.#ticker);
  }

  async #login(event: Event, person: Person): Promise<void> {
    event.preventDefault();
    if (this.client === null || this.busy || this.password === '' || this.#waiting()) return;
    this.busy = true;
    this.error = '';
    try {
      const unlocked = await this.client.login(person.name, this.password);
      this.password = '';
      this.dispatchEvent(new SignedInEvent(unlocked));
    } catch (error) {
      if (error instanceof ApiError && error.status === 429 && error.retryAfter !== null) {
        // This attempt was not checked: keep what was typed for when the wait is over.
        this.error = strings.loginTooMany;
        this.#waitFor(error.retryAfter);
        return;
      }
      this.error = error instanceof ApiError && error.code === 'invalid_credentials' ? strings.wrongPassword : describeError(error);
      this.password = '';
      this.autofocusTarget?.focus();
    } finally {
      this.busy = false;
    }
  }

  #newPasswordFields(name: string): TemplateResult {
    const mismatch = this.confirm !== '' && this.confirm !== this.password;
    return html`
      <div class="field">
        <label for="password">${strings.newPassword}</label>
        ${this.#passwordInput('password', 'new-password', false)}
        <skald-password-hint id="password-hint" .password=${this.password} .name=${name}></skald-password-hint>
      </div>
      <div class="field">
        <label for="confirm">${strings.confirmPassword}</label>
        <input
          id="confirm"
          type=${this.showPassword ? 'text' : 'password'}
          autocomplete="new-password"
          aria-invalid=${mismatch ? 'true' : 'false'}
          aria-describedby="confirm-hint"
          .value=${this.confirm}
          @input=${(e: Event) => (this.confirm = (e.target as HTMLInputElement).value)}
        />
        <p class="hint" id="confirm-hint">${mismatch ? strings.passwordsDiffer : ''}</p>
      </div>
    `;
  }

  #renderEnrol(name: string): TemplateResult {
    return html`
      <div class="screen">
        <section class="panel" aria-labelledby="title">
          <form data-testid="enrol-form" @submit=${this.#enrol} novalidate>
            <p class="brand">${strings.productName}</p>
            <h1 id="title">${strings.enrolTitle}</h1>
            <p class="lead">${this.supervisors.length > 0 ? strings.enrolLeadSupervised : strings.enrolLead}</p>
            ${this.error ? html`<p class="notice error" role="alert" data-testid="enrol-error">${this.error}</p>` : nothing}
            <div class="field">
              <label for="name">${strings.yourName}</label>
              <input id="name" name="name" autocomplete="username" .value=${name} ?data-autofocus=${name === ''} @change=${this.#checkEnrolment} />
            </div>
            <div class="field">
              <label for="code">${strings.enrolmentCode}</label>
              <input
                id="code"
                name="code"
                autocomplete="one-time-code"
                spellcheck="false"
                autocapitalize="characters"
                class="mono"
                aria-describedby="code-hint"
                ?data-autofocus=${name !== ''}
                @change=${this.#checkEnrolment}
              />
              <p class="hint" id="code-hint">${strings.enrolmentCodeHint}</p>
            </div>
            <div role="status">
              ${this.supervisors.length > 0
                ? html`<div class="notice warn" data-testid="enrol-supervisors">
                    <p>
                      <strong>${plural(this.supervisors.length, strings.enrolSupervisors).replace('{names}', formatList(this.supervisors))}</strong>
                    </p>
                  </div>`
                : nothing}
            </div>
            ${this.#newPasswordFields(name)}
            <div class="actions">
              <button type="submit" class="primary" ?disabled=${this.busy}>${this.busy ? strings.working : strings.enrolSubmit}</button>
              <button type="button" class="quiet" @click=${() => this.#go({ kind: 'picker' })}>${strings.back}</button>
            </div>
          </form>
        </section>
      </div>
    `;
  }

  #renderRecover(name: string): TemplateResult {
    return html`
      <div class="screen">
        <section class="panel" aria-labelledby="title">
          <form data-testid="recover-form" @submit=${this.#recover} novalidate>
            <p class="brand">${strings.productName}</p>
            <h1 id="title">${strings.recoverTitle}</h1>
            <p class="lead">${strings.recoverLead}</p>
            <div class="notice warn" role="note"><p>${strings.recoverWarning}</p></div>
            ${this.error ? html`<p class="notice error" role="alert" data-testid="recover-error">${this.error}</p>` : nothing}
            <div class="field">
              <label for="name">${strings.yourName}</label>
              <input id="name" name="name" autocomplete="username" .value=${name} ?data-autofocus=${name === ''} />
            </div>
            <div class="field">
              <label for="code">${strings.recoveryCodeLabel}</label>
              <input id="code" name="code" spellcheck="false" autocapitalize="characters" class="mono" ?data-autofocus=${name !== ''} />
            </div>
            ${this.#newPasswordFields(name)}
            <div class="actions">
              <button type="submit" class="primary" ?disabled=${this.busy}>${this.busy ? strings.working : strings.recoverSubmit}</button>
              <button type="button" class="quiet" @click=${() => this.#go({ kind: 'picker' })}>${strings.back}</button>
            </div>
          </form>
        </section>
      </div>
    `;
  }

  /**
   * Once a name and a code are both filled in, asks who will be able to open the space,
   * so the person reads it before choosing a password. A check that fails says nothing:
   * the enrolment itself tells what is wrong, and is never held back by it.
   */
  async #checkEnrolment(event: Event): Promise<void> {
    const form = (event.target as HTMLInputElement).form;
    const client = this.client;
    if (form === null || client === null) return;
    const data = new FormData(form);
    const name = formText(data, 'name').trim();
    const code = formText(data, 'code').trim();
    if (name === '' || code === '') return;
    const key = `${name.toLowerCase()}\n${code}`;
    if (key === this.#checked) return;
    this.#checked = key;
    this.#checking?.abort();
    const checking = new AbortController();
    this.#checking = checking;
    this.supervisors = [];
    try {
      const check = await client.enrolmentCheck(name, code, checking.signal);
      if (!checking.signal.aborted) this.supervisors = check.supervisors;
    } catch {
      // Nothing to say yet: a wrong code is for the enrolment to tell.
    }
  }

  /** Reads name and code, checks the new password twice; `null` with `error` set when something is missing. */
  #readForm(form: HTMLFormElement): { name: string; code: string } | null {
    const data = new FormData(form);
    const name = formText(data, 'name').trim();
    const code = formText(data, 'code').trim();
    if (name === '' || code === '') {
      this.error = strings.fillEverything;
      return null;
    }
    if (this.password !== this.confirm) {
      this.error = strings.passwordsDiffer;
      return null;
    }
    return { name, code };
  }

  async #enrol(event: Event): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const read = this.#readForm(form);
    if (read === null || this.client === null || this.busy) return;
    this.busy = true;
    this.error = '';
    try {
      const unlocked = await this.client.enrol(read.name, read.code, this.password);
      this.#go({ kind: 'code', unlocked, reason: 'enrol' });
    } catch (error) {
      this.error = describeError(error);
    } finally {
      this.busy = false;
    }
  }

  async #recover(event: Event): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const read = this.#readForm(form);
    if (read === null || this.client === null || this.busy) return;
    this.busy = true;
    this.error = '';
    try {
      const unlocked = await this.client.recover(read.name, read.code, this.password);
      this.#go({ kind: 'code', unlocked, reason: 'recover' });
    } catch (error) {
      this.error = describeError(error);
    } finally {
      this.busy = false;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-login': SkaldLogin;
  }
}
