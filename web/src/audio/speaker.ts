/**
 * Reading aloud (docs/architecture.md §15): sentences queued in order, each read by the
 * engine on the computer Skald runs on (`POST /api/voice/speech`) and played with Web
 * Audio — the page's CSP allows no media source, and decoding bytes needs none — or, when
 * nothing there reads, by the webview's own `speechSynthesis`. The next sentences are
 * fetched while one plays, so a long answer reads without gaps; `stop` ends it all at once.
 */
import type { ApiClient } from '../api/client.js';
import { ApiError } from '../api/client.js';

/** Who reads: the server's engine, or the browser's own voice. */
export type SpeechSource = 'server' | 'browser';

export interface SpeechChoice {
  /** A voice's id on the server; `''` for the first there. */
  readonly voice: string;
  /** A factor of the voice's own pace, 0.5–2. */
  readonly speed: number;
}

/** How many sentences are fetched ahead of the one playing. */
const AHEAD = 2;

interface Queued {
  readonly text: string;
  /** The sentence's audio, once asked for; `null` when it could not be made. */
  audio: Promise<AudioBuffer | null> | null;
}

export class Speaker {
  #queue: Queued[] = [];
  #playing = false;
  #generation = 0;
  #context: AudioContext | null = null;
  #source: AudioBufferSourceNode | null = null;
  #abort: AbortController | null = null;

  /**
   * @param onChange called when reading starts or ends, and with words when it failed
   */
  constructor(
    private readonly client: ApiClient,
    private source: SpeechSource,
    private readonly choice: () => SpeechChoice,
    private readonly onChange: (reading: boolean, problem?: string) => void,
  ) {}

  /** Whether something is being read or waits to be. */
  get reading(): boolean {
    return this.#playing || this.#queue.length > 0;
  }

  /**
   * Makes the audio output ready. Call it from a press (a send, the speaker button):
   * browsers start sound only after one.
   */
  prime(): void {
    if (this.source !== 'server') return;
    this.#context ??= new AudioContext();
    if (this.#context.state === 'suspended') void this.#context.resume();
  }

  /** Queues `sentences` after what is already queued. */
  say(sentences: readonly string[]): void {
    const fresh = sentences.map((text) => text.trim()).filter((text) => text !== '');
    if (fresh.length === 0) return;
    const was = this.reading;
    this.#queue.push(...fresh.map((text) => ({ text, audio: null })));
    if (!was) this.onChange(true);
    this.#fetchAhead();
    if (!this.#playing) void this.#next();
  }

  /** Stops the sentence playing and drops the rest. */
  stop(): void {
    const was = this.reading;
    this.#generation++;
    this.#queue = [];
    this.#abort?.abort();
    this.#abort = null;
    try {
      this.#source?.stop();
    } catch {
      // It had not started, or had ended.
    }
    this.#source = null;
    if (typeof speechSynthesis !== 'undefined' && this.source === 'browser') speechSynthesis.cancel();
    this.#playing = false;
    if (was) this.onChange(false);
  }

  /** Lets go of the audio output. */
  close(): void {
    this.stop();
    void this.#context?.close();
    this.#context = null;
  }

  #fetchAhead(): void {
    if (this.source !== 'server') return;
    this.#abort ??= new AbortController();
    const signal = this.#abort.signal;
    for (const item of this.#queue.slice(0, AHEAD + 1)) {
      item.audio ??= this.#fetch(item.text, signal);
    }
  }

  async #fetch(text: string, signal: AbortSignal): Promise<AudioBuffer | null> {
    try {
      const { voice, speed } = this.choice();
      const { audio } = await this.client.speak(text, { ...(voice ? { voice } : {}), speed }, signal);
      this.#context ??= new AudioContext();
      return await this.#context.decodeAudioData(audio);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'no_speech_engine') {
        // Nothing on the computer reads: the browser's own voice does, from here on.
        this.source = 'browser';
        return null;
      }
      if (!signal.aborted) this.#fail(error instanceof Error ? error.message : String(error));
      return null;
    }
  }

  async #next(): Promise<void> {
    const generation = this.#generation;
    const item = this.#queue[0];
    if (!item) {
      if (this.#playing) {
        this.#playing = false;
        this.onChange(false);
      }
      return;
    }
    this.#playing = true;
    if (this.source === 'browser' && item.audio === null) {
      await this.#speakInBrowser(item.text);
    } else {
      this.#fetchAhead();
      const buffer = await (item.audio ?? Promise.resolve(null));
      if (generation !== this.#generation) return;
      if (buffer) await this.#play(buffer);
      else if (this.source === 'browser') await this.#speakInBrowser(item.text);
    }
    if (generation !== this.#generation) return;
    this.#queue.shift();
    this.#fetchAhead();
    await this.#next();
  }

  #play(buffer: AudioBuffer): Promise<void> {
    const context = this.#context ?? new AudioContext();
    this.#context = context;
    if (context.state === 'suspended') void context.resume();
    return new Promise((resolve) => {
      const node = context.createBufferSource();
      node.buffer = buffer;
      node.connect(context.destination);
      node.onended = () => resolve();
      this.#source = node;
      node.start();
    });
  }

  #speakInBrowser(text: string): Promise<void> {
    if (typeof speechSynthesis === 'undefined') {
      this.#fail('this browser cannot read aloud');
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const utterance = new SpeechSynthesisUtterance(text);
      utterance.rate = this.choice().speed;
      utterance.onend = () => resolve();
      utterance.onerror = () => resolve();
      speechSynthesis.speak(utterance);
    });
  }

  #fail(problem: string): void {
    this.#generation++;
    this.#queue = [];
    this.#abort?.abort();
    this.#abort = null;
    this.#playing = false;
    this.onChange(false, problem);
  }
}
