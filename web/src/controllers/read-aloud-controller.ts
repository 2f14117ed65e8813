/**
 * Reading answers aloud in a conversation (docs/architecture.md §15): the speaker button
 * of a reply reads it from its start, or stops it; with the person's "read answers
 * aloud" on, a reply is read sentence by sentence while it streams. One reply is read at
 * a time; a new one, a stop, the microphone or leaving the conversation ends the reading.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';

import { SentenceFeed, sentencesOf, speakable } from '../audio/speakable.js';
import { Speaker } from '../audio/speaker.js';
import { replyText } from '../state/conversation-markdown.js';
import type { Login } from '../state/login.js';
import type { Turn } from '../state/transcript.js';

export class ReadAloudController implements ReactiveController {
  readonly #host: ReactiveControllerHost;
  readonly #login: () => Login | null;
  #speaker: Speaker | null = null;
  #feed: SentenceFeed | null = null;
  /** The reply read as it streams: its turn id. */
  #following: string | null = null;
  /**
   * The reply whose reading was stopped while it streamed: what it streams next is not
   * read (a stop, Escape, the person speaking or the engine failing ends its reading for good).
   */
  #dropped: string | null = null;
  /** The reply being read (its turn id), for its button; `null` when nothing is. */
  reading: string | null = null;
  /** Why the last reading stopped short, in words; `''` when it did not. */
  problem = '';
  /** Replies are read as they stream whatever the person's setting (a hands-free talk). */
  always = false;
  /** Called each time reading ends and nothing more of the reply is to come. */
  onIdle: () => void = () => undefined;

  constructor(host: ReactiveControllerHost, login: () => Login | null) {
    this.#host = host;
    this.#login = login;
    host.addController(this);
  }

  hostDisconnected(): void {
    this.#speaker?.close();
    this.#speaker = null;
    this.#feed = null;
    this.#following = null;
    this.reading = null;
  }

  /** The speaker button of `turn`: reads the whole reply, or stops it if it is being read. */
  toggle(turn: Turn): void {
    const id = turn.id ?? turn.key;
    if (this.reading === id) {
      this.stop();
      return;
    }
    this.stop();
    const speaker = this.#speakerNow();
    if (!speaker) return;
    speaker.prime();
    this.reading = id;
    this.problem = '';
    speaker.say(sentencesOf(speakable(replyText(turn))));
    this.#host.requestUpdate();
  }

  /** A message is being sent: readies the sound (a press allows it) when replies are read aloud. */
  prime(): void {
    if (this.always || this.#login()?.voice.readAloud) this.#speakerNow()?.prime();
  }

  /**
   * `turn` changed as it streams: with "read answers aloud" on, the sentences it has
   * completed are read; at its end (`ended`, with its status) the rest, unless it was
   * stopped or failed.
   */
  follow(turn: Turn, ended: boolean): void {
    const login = this.#login();
    if (!login || !(this.always || login.voice.readAloud) || turn.id === null) return;
    if (this.#following !== turn.id) {
      if (ended || turn.status !== 'running' || turn.id === this.#dropped) return;
      this.stop();
      this.#following = turn.id;
      this.#feed = new SentenceFeed();
      this.reading = turn.id;
      this.problem = '';
      this.#host.requestUpdate();
    }
    const feed = this.#feed;
    const speaker = this.#speakerNow();
    if (!feed || !speaker) return;
    const text = replyText(turn);
    if (!ended) {
      speaker.say(feed.update(text));
      return;
    }
    this.#following = null;
    this.#feed = null;
    if (turn.status === 'done') speaker.say(feed.end(text));
    else this.stop();
    if (!speaker.reading) this.#ended();
  }

  /** Stops reading, and reading as the reply streams. Whether anything was being read. */
  stop(): boolean {
    const was = this.reading !== null;
    if (this.#following !== null) this.#dropped = this.#following;
    this.#feed = null;
    this.#following = null;
    this.#speaker?.stop();
    this.reading = null;
    if (was) this.#host.requestUpdate();
    return was;
  }

  #ended(): void {
    if (this.#following !== null) return; // More is coming.
    this.reading = null;
    this.#host.requestUpdate();
    this.onIdle();
  }

  #speakerNow(): Speaker | null {
    const login = this.#login();
    if (!login) return null;
    this.#speaker ??= new Speaker(
      login.client,
      'server',
      () => ({ voice: login.voice.voice, speed: login.voice.speed }),
      (reading, problem) => {
        if (problem !== undefined) {
          this.problem = problem;
          if (this.#following !== null) this.#dropped = this.#following;
          this.#feed = null;
          this.#following = null;
        }
        if (!reading) this.#ended();
      },
    );
    return this.#speaker;
  }
}
