/**
 * My data: the language the page speaks to the person, everything in their
 * space as a readable archive, and deleting the account — which destroys the
 * encrypted file — after the password and the person's own name, typed.
 *
 * Owns: saving the language in the person's settings and switching to it at
 * once; the export download (fetched with the bearer in a header, handed to
 * the browser as an in-memory object URL that is revoked soon after) and the
 * account deletion call. Never: keeps the archive or the password.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { live } from 'lit/directives/live.js';

import { ApiError, type ApiClient } from '../../api/client.js';
import type { PersonalRule } from '../../api/types.js';
import { ActionController } from '../../controllers/action-controller.js';
import { ResourceController } from '../../controllers/resource-controller.js';
import { strings, toolLabel } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import { formatDay, formatNumber } from '../../i18n/format.js';
import {
  LANGUAGE_SETTING,
  LOCALE_NAMES,
  LOCALES,
  parseChoice,
  plural,
  resolveLocale,
  useLocale,
  type LanguageChoice,
} from '../../i18n/locale.js';
import {
  activeAppearance,
  TEXT_SIZE_SETTING,
  TEXT_SIZES,
  THEME_SETTING,
  THEMES,
  useAppearance,
  type Appearance,
  type TextSize,
  type Theme,
} from '../../state/appearance.js';
import { AUTO_TITLES_SETTING, type Login } from '../../state/login.js';
import { controls, page, pageHost } from '../../styles/controls.js';
import { saveBlob } from '../download.js';
import { AccountDeletedEvent } from '../events.js';
import { boxIcon, trashIcon } from '../icons.js';
import '../skald-voice-settings/skald-voice-settings.js';
import { styles } from './skald-my-data.styles.js';

/**
 * Test hooks: `[data-testid=language]` (the language menu; its values are
 * `system`, `en`, `fr`, `it`), `[data-testid=language-saved]`,
 * `[data-testid=language-error]`, `[data-testid=export]`, `[data-testid=export-done]`,
 * `#delete-password`, `#delete-confirm`, `[data-testid=delete-account]`,
 * `[data-testid=delete-error]`.
 *
 * @summary Choose my language; export my space; delete my account.
 * @fires skald-account-deleted - the account and its file are gone
 */
@customElement('skald-my-data')
export class SkaldMyData extends LitElement {
  static override styles = [controls, pageHost, page, styles];

  @property({ attribute: false }) login: Login | null = null;

  /** Which of the person's choices (language, look) was saved last, is being saved, or failed. */
  @state() private saved: Choice | null = null;
  @state() private announcement = '';
  readonly #rules = new ResourceController<PersonalRule[]>(this, (signal) => {
    const client = this.login?.client;
    return client ? client.myRules(signal) : Promise.resolve([]);
  });
  readonly #takingBack = new ActionController(this);
  @state() private saving: Choice | null = null;
  @state() private choiceError: { readonly of: Choice; readonly text: string } | null = null;
  @state() private exporting = false;
  @state() private exported = '';
  @state() private exportError = '';
  @state() private password = '';
  @state() private typedName = '';
  @state() private deleting = false;
  @state() private deleteError = '';

  override render(): TemplateResult {
    const name = this.login?.me.user.name ?? '';
    const ready = this.password !== '' && this.typedName === name && name !== '';
    return html`
      <header class="bar"><h2>${strings.dataTitle}</h2></header>
      <div class="scroll">
        <div class="column">
          <p class="lead">${strings.dataLead}</p>
          ${this.#renderLanguage()} ${this.#renderLook()} ${this.#renderTitles()}
          <skald-voice-settings .login=${this.login}></skald-voice-settings>
          ${this.#renderRules()}
          <p class="visually-hidden" role="status" aria-live="polite">${this.announcement}</p>
          <section class="block" aria-labelledby="export-title">
            <h3 id="export-title">${strings.exportTitle}</h3>
            <p>${strings.exportLead}</p>
            <ul class="contents">
              <li>${strings.exportConversations}</li>
              <li>${strings.exportNotes}</li>
              <li>${strings.exportSettings}</li>
            </ul>
            <p class="muted small">${strings.exportCare}</p>
            ${this.exportError ? html`<p class="notice error" role="alert">${this.exportError}</p>` : nothing}
            <div aria-live="polite">
              ${this.exported ? html`<p class="notice ok" data-testid="export-done">${this.exported}</p>` : nothing}
            </div>
            <button type="button" class="primary" data-testid="export" ?disabled=${this.exporting} @click=${() => void this.#export()}>
              ${boxIcon}${this.exporting ? strings.exporting : strings.exportButton}
            </button>
          </section>

          <section class="block danger-zone" aria-labelledby="delete-title">
            <h3 id="delete-title">${strings.deleteAccountTitle}</h3>
            <p>${strings.deleteAccountLead}</p>
            <p class="notice warn">${strings.deleteAccountWarning}</p>
            <form @submit=${this.#delete} novalidate>
              ${this.deleteError ? html`<p class="notice error" role="alert" data-testid="delete-error">${this.deleteError}</p>` : nothing}
              <div class="grid-fields">
                <div class="field">
                  <label for="delete-password">${strings.password}</label>
                  <input id="delete-password" type="password" autocomplete="current-password" .value=${this.password}
                    @input=${(e: Event) => (this.password = (e.target as HTMLInputElement).value)} />
                </div>
                <div class="field">
                  <label for="delete-confirm">${strings.confirmType.replace('{name}', name)}</label>
                  <input id="delete-confirm" autocomplete="off" spellcheck="false" .value=${this.typedName}
                    @input=${(e: Event) => (this.typedName = (e.target as HTMLInputElement).value)} />
                </div>
              </div>
              <button type="submit" class="danger" data-testid="delete-account" ?disabled=${!ready || this.deleting}>
                ${trashIcon}${this.deleting ? strings.working : strings.deleteAccountButton}
              </button>
            </form>
          </section>
        </div>
      </div>
    `;
  }

  #renderLanguage(): TemplateResult {
    const choice = this.login?.language ?? 'system';
    const browser = LOCALE_NAMES[resolveLocale('system', navigator.languages).id];
    return html`<section class="block" aria-labelledby="language-title">
      <h3 id="language-title">${strings.languageTitle}</h3>
      <p>${strings.languageLead}</p>
      ${this.choiceError?.of === 'language'
        ? html`<p class="notice error" role="alert" data-testid="language-error">${this.choiceError.text}</p>`
        : nothing}
      <div class="field">
        <label for="language">${strings.languageLabel}</label>
        <select id="language" data-testid="language" ?disabled=${this.saving !== null}
          @change=${(e: Event) => void this.#chooseLanguage(parseChoice((e.target as HTMLSelectElement).value))}>
          <option value="system" ?selected=${choice === 'system'}>${strings.languageSystem.replace('{language}', browser)}</option>
          ${LOCALES.map((id) => html`<option value=${id} lang=${id} ?selected=${choice === id}>${LOCALE_NAMES[id]}</option>`)}
        </select>
      </div>
      <div aria-live="polite">
        ${this.saved === 'language' ? html`<p class="notice ok" data-testid="language-saved">${strings.languageSaved}</p>` : nothing}
      </div>
    </section>`;
  }

  /** My "always allow" rules, each with a way to be asked again. */
  #renderRules(): TemplateResult {
    const rules = this.#rules.value;
    return html`<section class="block" aria-labelledby="rules-title" data-testid="my-rules">
      <h3 id="rules-title">${strings.myRulesTitle}</h3>
      <p>${strings.myRulesLead}</p>
      ${this.#rules.status()}
      ${this.#takingBack.error ? html`<p class="notice error" role="alert">${this.#takingBack.error}</p>` : nothing}
      ${rules?.length === 0 ? html`<p class="hint" data-testid="my-rules-none">${strings.myRulesNone}</p>` : nothing}
      ${rules && rules.length > 0
        ? html`<ul class="rows">
            ${rules.map(
              (rule) => html`<li class="row" data-testid="my-rule" data-tool=${rule.tool}>
                <span>${toolLabel(rule.tool)} <span class="hint">· ${strings.myRuleSince.replace('{date}', formatDay(rule.created_at))}</span></span>
                <button type="button" data-testid="my-rule-revoke" ?disabled=${this.#takingBack.busy} @click=${() => void this.#takeBack(rule)}>
                  ${strings.myRuleRevoke}
                </button>
              </li>`,
            )}
          </ul>`
        : nothing}
    </section>`;
  }

  async #takeBack(rule: PersonalRule): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    await this.#takingBack.run(() => client.deleteMyRule(rule.id), {
      done: async () => {
        await this.#rules.reload();
        this.announcement = strings.myRuleRevoked.replace('{tool}', toolLabel(rule.tool));
      },
    });
  }

  #renderLook(): TemplateResult {
    const look = activeAppearance();
    const themes: Readonly<Record<Theme, string>> = { system: strings.themeSystem, light: strings.themeLight, dark: strings.themeDark };
    const sizes: Readonly<Record<TextSize, string>> = {
      small: strings.textSmall,
      normal: strings.textNormal,
      large: strings.textLarge,
      larger: strings.textLarger,
    };
    const pick = (change: Partial<Appearance>): void => void this.#chooseLook({ ...activeAppearance(), ...change });
    return html`<section class="block" aria-labelledby="look-title">
      <h3 id="look-title">${strings.lookTitle}</h3>
      ${this.choiceError?.of === 'look' ? html`<p class="notice error" role="alert" data-testid="look-error">${this.choiceError.text}</p>` : nothing}
      <div class="field">
        <label for="theme">${strings.themeLabel}</label>
        <select id="theme" data-testid="theme" ?disabled=${this.saving !== null}
          @change=${(e: Event) => pick({ theme: (e.target as HTMLSelectElement).value as Theme })}>
          ${THEMES.map((theme) => html`<option value=${theme} ?selected=${look.theme === theme}>${themes[theme]}</option>`)}
        </select>
      </div>
      <div class="field">
        <label for="text-size">${strings.textSizeLabel}</label>
        <select id="text-size" data-testid="text-size" ?disabled=${this.saving !== null}
          @change=${(e: Event) => pick({ textSize: (e.target as HTMLSelectElement).value as TextSize })}>
          ${TEXT_SIZES.map((size) => html`<option value=${size} ?selected=${look.textSize === size}>${sizes[size]}</option>`)}
        </select>
      </div>
      <div aria-live="polite">
        ${this.saved === 'look' ? html`<p class="notice ok" data-testid="look-saved">${strings.lookSaved}</p>` : nothing}
      </div>
    </section>`;
  }

  /** Whether the conversations' own models name them. */
  #renderTitles(): TemplateResult {
    const on = this.login?.autoTitles ?? true;
    return html`<section class="block" aria-labelledby="titles-title">
      <h3 id="titles-title">${strings.conversationsTitle}</h3>
      ${this.choiceError?.of === 'titles' ? html`<p class="notice error" role="alert">${this.choiceError.text}</p>` : nothing}
      <div class="check">
        <input
          type="checkbox"
          id="auto-titles"
          data-testid="auto-titles"
          .checked=${live(on)}
          ?disabled=${this.saving !== null}
          aria-describedby="auto-titles-hint"
          @change=${(e: Event) => void this.#chooseTitles((e.target as HTMLInputElement).checked)}
        />
        <label for="auto-titles">${strings.autoTitlesLabel}</label>
      </div>
      <p class="hint" id="auto-titles-hint">${strings.autoTitlesHint}</p>
      <div aria-live="polite">
        ${this.saved === 'titles' ? html`<p class="notice ok" data-testid="auto-titles-saved">${strings.autoTitlesSaved}</p>` : nothing}
      </div>
    </section>`;
  }

  async #chooseTitles(on: boolean): Promise<void> {
    const login = this.login;
    if (!login) return;
    // Shown as chosen at once (the box re-renders while it is saved), put back if the save fails.
    login.autoTitles = on;
    await this.#keep('titles', (client) => client.putSetting(AUTO_TITLES_SETTING, on ? 'on' : 'off'));
    if (this.choiceError?.of === 'titles') {
      login.autoTitles = !on;
      this.requestUpdate();
    }
  }

  /** Saves the look in the person's settings, then shows it at once. */
  async #chooseLook(look: Appearance): Promise<void> {
    await this.#keep('look', async (client) => {
      await client.putSetting(THEME_SETTING, look.theme);
      await client.putSetting(TEXT_SIZE_SETTING, look.textSize);
      useAppearance(look);
    });
  }

  /** Runs one save of a choice, saying when it is done or why it failed. */
  async #keep(of: Choice, save: (client: ApiClient) => Promise<void>): Promise<void> {
    const client = this.login?.client;
    if (!client || this.saving !== null) return;
    this.saving = of;
    this.saved = null;
    this.choiceError = null;
    try {
      await save(client);
      this.saved = of;
    } catch (error) {
      this.choiceError = { of, text: describeError(error) };
    } finally {
      this.saving = null;
    }
  }

  /** Saves the choice in the person's settings, then speaks it at once. */
  async #chooseLanguage(choice: LanguageChoice): Promise<void> {
    const login = this.login;
    if (!login) return;
    await this.#keep('language', async (client) => {
      await client.putSetting(LANGUAGE_SETTING, choice);
      login.language = choice;
      useLocale(resolveLocale(choice, navigator.languages));
    });
  }

  async #export(): Promise<void> {
    const client = this.login?.client;
    if (!client || this.exporting) return;
    this.exporting = true;
    this.exported = '';
    this.exportError = '';
    try {
      const { blob, filename } = await client.exportArchive();
      saveBlob(blob, filename, this.renderRoot);
      this.exported = strings.exportDone.replace('{file}', filename).replace('{size}', formatSize(blob.size));
    } catch (error) {
      this.exportError = describeError(error);
    } finally {
      this.exporting = false;
    }
  }

  async #delete(event: Event): Promise<void> {
    event.preventDefault();
    const login = this.login;
    if (!login || this.deleting || this.password === '' || this.typedName !== login.me.user.name) return;
    this.deleting = true;
    this.deleteError = '';
    // The server closes this login's socket as it deletes: the picker should say why.
    login.farewell = strings.accountDeletedNotice;
    try {
      await login.client.deleteAccount(this.password, this.typedName);
      this.password = '';
      this.dispatchEvent(new AccountDeletedEvent());
    } catch (error) {
      login.farewell = null;
      this.password = '';
      this.deleteError =
        error instanceof ApiError && error.code === 'invalid_credentials' ? strings.currentPasswordWrong : describeError(error);
    } finally {
      this.deleting = false;
    }
  }
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return plural(bytes, strings.sizeBytes).replace('{n}', formatNumber(bytes));
  if (bytes < 1024 * 1024) return strings.sizeKib.replace('{n}', formatNumber(bytes / 1024, 1));
  return strings.sizeMib.replace('{n}', formatNumber(bytes / 1024 / 1024, 1));
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-my-data': SkaldMyData;
  }
}

/** The person's choices this page saves. */
type Choice = 'language' | 'look' | 'titles';
