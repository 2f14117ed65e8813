/**
 * Voice input in the composer: a press of the microphone starts listening, a second press
 * stops, and what was said — written down by the speech engine on the computer Skald runs
 * on (docs/architecture.md §15) — goes into the message field for the person to check and
 * send. Nothing is recorded before the press, and nothing heard is kept. While the
 * engine cannot be used here (no speech model yet), a press says why instead of listening:
 * the reason is not shown before it is asked for, so the composer keeps its one line.
 */
import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';

import type { VoiceOverview } from '../../api/types.js';
import type { TalkPhase } from '../../controllers/conversation-controller.js';
import { MicrophoneError, Recording } from '../../audio/recorder.js';
import { strings } from '../../i18n/en.js';
import { describeError, microphoneText } from '../../i18n/errors.js';
import type { Login } from '../../state/login.js';
import { controls } from '../../styles/controls.js';
import { iconButton } from '../icon-button.js';
import { microphoneIcon, talkIcon } from '../icons.js';
import { styles } from './skald-microphone.styles.js';

/** What was said, written down: for the message field. */
export class TranscriptEvent extends Event {
  static readonly type = 'skald-transcript';
  constructor(readonly text: string) {
    super(TranscriptEvent.type, { bubbles: true, composed: true });
  }
}

/** Listening began: anything being read aloud stops, so Skald does not hear itself. */
export class ListeningEvent extends Event {
  static readonly type = 'skald-listening';
  constructor() {
    super(ListeningEvent.type, { bubbles: true, composed: true });
  }
}

/** The hands-free talk button was pressed: start one, or end the one under way. */
export class TalkToggleEvent extends Event {
  static readonly type = 'skald-talk-toggle';
  constructor() {
    super(TalkToggleEvent.type, { bubbles: true, composed: true });
  }
}

type Phase = 'idle' | 'listening' | 'writing';

/**
 * Beside it, the hands-free talk button: the conversation runs the talk and says here
 * how it stands (`talk`).
 *
 * Test hooks: `[data-testid=microphone]` (its `data-phase`: idle, listening, writing),
 * `[data-testid=microphone-state]` (what it is doing, or why it cannot),
 * `[data-testid=talk]` (its `data-phase`: off, listening, hearing, writing, answering).
 *
 * @summary The microphone button: listen, then put what was said in the message field.
 * @fires skald-transcript - what was said, written down (empty text is never sent)
 * @fires skald-listening - listening began
 * @fires skald-talk-toggle - the hands-free talk button was pressed
 */
@customElement('skald-microphone')
export class SkaldMicrophone extends LitElement {
  static override styles = [controls, styles];

  @property({ attribute: false }) login: Login | null = null;
  /** Sending is not possible now: neither is listening. */
  @property({ type: Boolean }) disabled = false;
  /** How the hands-free talk stands. */
  @property() talk: TalkPhase = 'off';
  /** What went wrong in the talk, or why it ended; `''` when nothing did. */
  @property() talkProblem = '';

  @state() private phase: Phase = 'idle';
  @state() private seconds = 0;
  /** Why voice input cannot be used here, from the server; `''` when it can. */
  @state() private unavailable = '';
  /** What the last attempt ended with, when it did not give words. */
  @state() private problem = '';

  #recording: Recording | null = null;
  #ticker: ReturnType<typeof setInterval> | undefined;
  #abort: AbortController | null = null;

  override connectedCallback(): void {
    super.connectedCallback();
    void this.#look();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#recording?.cancel();
    this.#recording = null;
    this.#abort?.abort();
    clearInterval(this.#ticker);
  }

  override render(): TemplateResult {
    const label =
      this.phase === 'listening' ? strings.micStop : this.phase === 'writing' ? strings.micWriting : strings.micStart;
    const said = this.#stateText();
    const talking = this.talk !== 'off';
    return html`${iconButton({
        icon: microphoneIcon,
        label,
        testid: 'microphone',
        className: `microphone ${this.phase}`,
        pressed: this.phase === 'listening',
        ...(said === '' ? {} : { describedBy: 'microphone-state' }),
        disabled: this.disabled || this.phase === 'writing' || talking,
        onClick: () => void this.#press(),
      })}
      ${iconButton({
        icon: talkIcon,
        label: talking ? strings.talkStop : strings.talkStart,
        testid: 'talk',
        className: `microphone talk ${this.talk}`,
        pressed: talking,
        ...(said === '' ? {} : { describedBy: 'microphone-state' }),
        disabled: (this.disabled && !talking) || this.phase !== 'idle',
        onClick: () => this.#pressTalk(),
      })}
      ${said === ''
        ? nothing
        : html`<p class="state" id="microphone-state" data-testid="microphone-state" role=${this.#isProblem() ? 'alert' : 'status'}>${said}</p>`}`;
  }

  protected override updated(): void {
    this.shadowRoot?.querySelector('[data-testid=microphone]')?.setAttribute('data-phase', this.phase);
    this.shadowRoot?.querySelector('[data-testid=talk]')?.setAttribute('data-phase', this.talk);
  }

  #isProblem(): boolean {
    return this.talk === 'off' ? this.problem !== '' || this.talkProblem !== '' : false;
  }

  #pressTalk(): void {
    if (this.talk === 'off' && this.unavailable !== '') {
      this.problem = this.unavailable;
      return;
    }
    this.problem = '';
    this.dispatchEvent(new TalkToggleEvent());
  }

  #stateText(): string {
    switch (this.talk) {
      case 'listening':
        return this.talkProblem === '' ? strings.talkListening : `${this.talkProblem} ${strings.talkListening}`;
      case 'hearing':
        return strings.talkHearing;
      case 'writing':
        return strings.micWriting;
      case 'answering':
        return strings.talkAnswering;
      case 'off':
        break;
    }
    if (this.phase === 'listening') return strings.micListening.replace('{seconds}', String(Math.floor(this.seconds)));
    if (this.phase === 'writing') return strings.micWriting;
    return this.problem || this.talkProblem;
  }

  /** Asks the server whether voice input works here. */
  async #look(): Promise<void> {
    const client = this.login?.client;
    if (!client) return;
    try {
      const voice: VoiceOverview = await client.voice();
      this.unavailable = voice.transcription.available ? '' : strings.micUnavailable.replace('{why}', voice.transcription.why ?? '');
    } catch {
      // The press says what is wrong if the server cannot be asked now.
    }
  }

  /** Starts listening, or stops and writes down (the shortcut does what a press does). */
  toggle(): void {
    if (this.disabled || this.phase === 'writing') return;
    void this.#press();
  }

  async #press(): Promise<void> {
    if (this.phase === 'listening') {
      await this.#finish();
      return;
    }
    if (this.phase !== 'idle') return;
    if (this.unavailable !== '') {
      this.problem = this.unavailable;
      return;
    }
    this.problem = '';
    try {
      this.#recording = await Recording.start(() => void this.#finish());
    } catch (error) {
      this.problem = error instanceof MicrophoneError ? microphoneText(error.problem) : strings.micFailed;
      return;
    }
    this.phase = 'listening';
    this.dispatchEvent(new ListeningEvent());
    this.seconds = 0;
    this.#ticker = setInterval(() => {
      this.seconds = this.#recording?.seconds ?? 0;
    }, 250);
  }

  /** Stops listening and has what was heard written down. */
  async #finish(): Promise<void> {
    const recording = this.#recording;
    const client = this.login?.client;
    if (!recording || this.phase !== 'listening') return;
    this.#recording = null;
    clearInterval(this.#ticker);
    this.phase = 'writing';
    const audio = await recording.stop();
    this.#abort = new AbortController();
    try {
      if (!client) throw new Error('no session');
      const transcript = await client.transcribe(audio, this.#abort.signal);
      const text = transcript.text.trim();
      if (text === '') this.problem = strings.micNothingHeard;
      else this.dispatchEvent(new TranscriptEvent(text));
    } catch (error) {
      this.problem = strings.micNotWritten.replace('{reason}', describeError(error));
    } finally {
      this.#abort = null;
      this.phase = 'idle';
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'skald-microphone': SkaldMicrophone;
  }
  interface HTMLElementEventMap {
    [TranscriptEvent.type]: TranscriptEvent;
    [ListeningEvent.type]: ListeningEvent;
    [TalkToggleEvent.type]: TalkToggleEvent;
  }
}
