/**
 * Hands-free turns in a conversation (docs/architecture.md §15): Skald listens, notices
 * the pause that ends what the person said, has it written down and sends it, reads the
 * answer aloud as it streams, then listens again. Speaking while it talks interrupts it:
 * the audio stops, with the rest of that answer's reading, and what is said next is the
 * next message (a reply still being written is stopped first, as the Stop button would).
 *
 * The microphone stays open for the whole talk and is let go when it ends: by the
 * button, Escape, leaving the conversation, or two minutes with nothing said.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';

import { CONVERSATION, OVER_PLAYBACK } from '../audio/end-of-speech.js';
import { Listener, MicrophoneError } from '../audio/recorder.js';
import { strings } from '../i18n/en.js';
import { describeError, microphoneText } from '../i18n/errors.js';
import type { Login } from '../state/login.js';
import type { ReadAloudController } from './read-aloud-controller.js';

/**
 * Where a hands-free talk stands: `listening` for the person, `hearing` them speak,
 * `writing` down what they said, `answering` (Skald's reply streams or is read aloud,
 * and speaking interrupts it).
 */
export type TalkPhase = 'off' | 'listening' | 'hearing' | 'writing' | 'answering';

/** What the conversation lends the talk. */
export interface TalkHost {
  readonly login: () => Login | null;
  readonly readAloud: ReadAloudController;
  /** Whether a reply is being written now. */
  readonly busy: () => boolean;
  /** Stops the reply being written; resolves once it has stopped. */
  readonly stopReply: () => Promise<void>;
  /** Sends `text` as the person's message; whether it went. */
  readonly send: (text: string) => Promise<boolean>;
}

/** With nothing said for this long, the talk ends and the microphone is let go. */
export const QUIET_LIMIT_MS = 120_000;

export class ConversationController implements ReactiveController {
  readonly #host: ReactiveControllerHost;
  readonly #talk: TalkHost;
  #listener: Listener | null = null;
  #abort: AbortController | null = null;
  #quiet: ReturnType<typeof setTimeout> | undefined;
  /** Each start and end of a talk: work begun in an earlier one is dropped. */
  #generation = 0;
  phase: TalkPhase = 'off';
  /** Why the talk ended or what went wrong in it, in words; `''` when nothing did. */
  problem = '';

  constructor(host: ReactiveControllerHost, talk: TalkHost) {
    this.#host = host;
    this.#talk = talk;
    host.addController(this);
    talk.readAloud.onIdle = () => this.#answered();
  }

  hostDisconnected(): void {
    this.end();
  }

  get on(): boolean {
    return this.phase !== 'off';
  }

  /** Starts a talk, or ends the one under way. */
  async toggle(): Promise<void> {
    if (this.on) this.end();
    else await this.start();
  }

  async start(): Promise<void> {
    if (this.on) return;
    const generation = ++this.#generation;
    this.problem = '';
    this.#talk.readAloud.stop();
    // A press allows sound: the first answer can be heard.
    this.#talk.readAloud.always = true;
    this.#talk.readAloud.prime();
    let listener: Listener;
    try {
      listener = await Listener.start({ speech: () => this.#speech(), utterance: (audio) => void this.#utterance(audio) });
    } catch (error) {
      this.#talk.readAloud.always = false;
      this.problem = error instanceof MicrophoneError ? microphoneText(error.problem) : strings.micFailed;
      this.#host.requestUpdate();
      return;
    }
    if (generation !== this.#generation) {
      listener.close();
      return;
    }
    this.#listener = listener;
    this.#set(this.#talk.busy() ? 'answering' : 'listening');
  }

  /** Ends the talk: the microphone is let go and nothing more is read. */
  end(problem = ''): void {
    if (!this.on && this.#listener === null) return;
    this.#generation++;
    this.#listener?.close();
    this.#listener = null;
    this.#abort?.abort();
    this.#abort = null;
    clearTimeout(this.#quiet);
    this.#talk.readAloud.always = false;
    this.#talk.readAloud.stop();
    this.problem = problem;
    this.phase = 'off';
    this.#host.requestUpdate();
  }

  /** The reply ended (done, stopped or failed): once nothing is read, listen again. */
  replyEnded(): void {
    if (this.phase === 'answering' && this.#talk.readAloud.reading === null) this.#set('listening');
  }

  #answered(): void {
    if (this.phase === 'answering' && !this.#talk.busy()) this.#set('listening');
  }

  #set(phase: TalkPhase): void {
    this.phase = phase;
    if (this.#listener) this.#listener.options = phase === 'answering' ? OVER_PLAYBACK : CONVERSATION;
    clearTimeout(this.#quiet);
    if (phase === 'listening') this.#quiet = setTimeout(() => this.end(strings.talkEndedQuiet), QUIET_LIMIT_MS);
    this.#host.requestUpdate();
  }

  /** The person began to speak: Skald stops talking and hears them. */
  #speech(): void {
    if (this.phase !== 'listening' && this.phase !== 'answering') return;
    this.#talk.readAloud.stop();
    this.#set('hearing');
  }

  /** They paused: what they said is written down and sent. */
  async #utterance(audio: Blob): Promise<void> {
    const client = this.#talk.login()?.client;
    if (!client || this.phase !== 'hearing') return;
    const generation = this.#generation;
    this.#set('writing');
    this.#abort = new AbortController();
    let text: string;
    try {
      text = (await client.transcribe(audio, this.#abort.signal)).text.trim();
    } catch (error) {
      if (generation !== this.#generation) return;
      this.problem = strings.micNotWritten.replace('{reason}', describeError(error));
      this.#set(this.#talk.busy() ? 'answering' : 'listening');
      return;
    } finally {
      this.#abort = null;
    }
    if (generation !== this.#generation) return;
    if (text === '') {
      // A cough or a door: nothing to send; carry on as before.
      this.#set(this.#talk.busy() ? 'answering' : 'listening');
      return;
    }
    this.problem = '';
    if (this.#talk.busy()) await this.#talk.stopReply();
    if (generation !== this.#generation) return;
    this.#set('answering');
    const sent = await this.#talk.send(text);
    if (generation === this.#generation && !sent) this.#set('listening');
  }
}
