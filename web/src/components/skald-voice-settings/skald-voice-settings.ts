/**
 * The person's voice choices on My data (docs/architecture.md §15): which voice reads
 * answers aloud and at what pace, whether answers are read aloud as they come, and
 * whether what they say is sent at once. Kept in their settings; the chat reads them
 * from the login, which changes here at once.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { live } from 'lit/directives/live.js';

import type { VoiceOverview } from '../../api/types.js';
import { strings } from '../../i18n/en.js';
import { describeError } from '../../i18n/errors.js';
import type { Login } from '../../state/login.js';
import { SPEEDS, voiceSettingValues, type VoiceSettings } from '../../state/voice-settings.js';
import { controls, page } from '../../styles/controls.js';

/**
 * Test hooks: `[data-testid=voice-choice]`, `[data-testid=voice-speed]`,
 * `[data-testid=voice-read-aloud]`, `[data-testid=voice-auto-send]`,
 * `[data-testid=voice-saved]`, `[data-testid=voice-engine]` (who reads, when not a voice here).
 *
 * @summary The person's voice settings.
 */
@customElement('skald-voice-settings')
export class SkaldVoiceSettings extends LitElement {
  static override styles = [controls, page];

  @property({ attribute: false }) login: Login | null = null;

  @state() private overview: VoiceOverview | null = null;
  @state() private saving = false;
  @state() private saved = false;
  @state() private error = '';

  override connectedCallback(): void {
    super.connectedCallback();
    void this.login?.client
      .voice()
      .then((overview) => (this.overview = overview))
      .catch(() => undefined);
  }

  override render(): TemplateResult {
    const choice = this.login?.voice;
    if (!choice) return html``;
    const speech = this.overview?.speech;
    const pick = (change: Partial<VoiceSettings>): void => void this.#choose({ ...choice, ...change });
    return html`<section class="block" aria-labelledby="voice-title">
      <h3 id="voice-title">${strings.voiceTitle}</h3>
      ${this.error ? html`<p class="notice error" role="alert">${this.error}</p>` : nothing}
      ${speech && speech.engine !== 'piper'
        ? html`<p class="hint" data-testid="voice-engine">
            ${speech.engine === 'browser' ? strings.voiceByBrowser : strings.voiceByEspeak} ${speech.why ?? ''}
          </p>`
        : nothing}
      ${speech && speech.voices.length > 1
        ? html`<div class="field">
            <label for="voice-choice">${strings.voiceLabel}</label>
            <select id="voice-choice" data-testid="voice-choice" ?disabled=${this.saving}
              @change=${(e: Event) => pick({ voice: (e.target as HTMLSelectElement).value })}>
              <option value="" ?selected=${choice.voice === ''}>${strings.voiceFirst}</option>
              ${speech.voices.map((v) => html`<option value=${v.id} ?selected=${choice.voice === v.id}>${v.id} (${v.language})</option>`)}
            </select>
          </div>`
        : nothing}
      <div class="field">
        <label for="voice-speed">${strings.voiceSpeedLabel}</label>
        <select id="voice-speed" data-testid="voice-speed" ?disabled=${this.saving}
          @change=${(e: Event) => pick({ speed: Number((e.target as HTMLSelectElement).value) })}>
          ${SPEEDS.map((speed) => html`<option value=${String(speed)} ?selected=${choice.speed === speed}>${speed}×</option>`)}
        </select>
      </div>
      <div class="check">
        <input type="checkbox" id="voice-read-aloud" data-testid="voice-read-aloud" .checked=${live(choice.readAloud)}
          ?disabled=${this.saving} @change=${(e: Event) => pick({ readAloud: (e.target as HTMLInputElement).checked })} />
        <label for="voice-read-aloud">${strings.voiceReadAloudLabel}</label>
      </div>
      <div class="check">
        <input type="checkbox" id="voice-auto-send" data-testid="voice-auto-send" .checked=${live(choice.autoSend)}
          ?disabled=${this.saving} aria-describedby="voice-auto-send-hint"
          @change=${(e: Event) => pick({ autoSend: (e.target as HTMLInputElement).checked })} />
        <label for="voice-auto-send">${strings.voiceAutoSendLabel}</label>
      </div>
      <p class="hint" id="voice-auto-send-hint">${strings.voiceAutoSendHint}</p>
      <div aria-live="polite">${this.saved ? html`<p class="notice ok" data-testid="voice-saved">${strings.voiceSaved}</p>` : nothing}</div>
    </section>`;
  }

  /** Saves what changed; shown as chosen at once, put back if the save fails. */
  async #choose(next: VoiceSettings): Promise<void> {
    const login = this.login;
    if (!login || this.saving) return;
    const before = login.voice;
    const old = new Map(voiceSettingValues(before));
    login.voice = next;
    this.saving = true;
    this.saved = false;
    this.error = '';
    try {
      for (const [key, value] of voiceSettingValues(next)) {
        if (old.get(key) !== value) await login.client.putSetting(key, value);
      }
      this.saved = true;
    } catch (error) {
      login.voice = before;
      this.error = describeError(error);
    } finally {
      this.saving = false;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-voice-settings': SkaldVoiceSettings;
  }
}
