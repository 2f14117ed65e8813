/**
 * Telling speech from quiet in the microphone's samples, for hands-free turns
 * (docs/architecture.md §15): speech has begun once the level has stood clearly above the
 * room's own for a moment, and has ended once it has stayed down for a while. The room's
 * level is learnt as it goes (it follows quiet quickly and loud slowly), so a fan or a
 * street does not count as someone speaking. Pure: samples in, what was heard out.
 */

/** How the detector judges; every duration in milliseconds. */
export interface DetectorOptions {
  /** Loud enough for this long (short pauses count half against it) is speech. */
  readonly startMs: number;
  /** Quiet for this long after speech is its end. */
  readonly endMs: number;
  /** How far above the room's level speech stands, as a factor of its RMS. */
  readonly above: number;
  /** Nothing quieter than this RMS is speech, however quiet the room. */
  readonly floor: number;
}

/** Someone speaking to the computer from a usual distance. */
export const CONVERSATION: DetectorOptions = { startMs: 200, endMs: 900, above: 3, floor: 0.01 };

/**
 * While Skald itself talks: a voice must be plainer and longer to count, so that what
 * the speakers play and the echo canceller lets through does not interrupt it.
 */
export const OVER_PLAYBACK: DetectorOptions = { startMs: 300, endMs: 900, above: 6, floor: 0.03 };

/** What a stretch of samples showed. */
export type Heard = 'start' | 'end' | null;

/** The length of one judged block. */
const BLOCK_MS = 20;

export class SpeechDetector {
  readonly #block: number;
  #options: DetectorOptions;
  /** Samples of the block being filled. */
  #sum = 0;
  #filled = 0;
  /** The room's level (RMS), learnt from the blocks judged so far; `null` before one. */
  #room: number | null = null;
  #loudFor = 0;
  /** How long ago the stretch now counted towards a start began; 0 when none is. */
  #countedFor = 0;
  #quietFor = 0;
  #speaking = false;

  constructor(sampleRate: number, options: DetectorOptions = CONVERSATION) {
    this.#block = Math.max(1, Math.round((sampleRate * BLOCK_MS) / 1000));
    this.#options = options;
  }

  /** Whether speech has begun and not yet ended. */
  get speaking(): boolean {
    return this.#speaking;
  }

  /**
   * Milliseconds since the loud stretch now being counted towards a start began (0 when
   * none is). Speech is judged begun only once enough of it was loud, and its first quiet
   * syllables count little; what is kept from before a start must reach back this far.
   */
  get pendingMs(): number {
    return this.#speaking ? 0 : this.#countedFor;
  }

  /** Judges from here on with `options`; what was learnt of the room is kept. */
  set options(options: DetectorOptions) {
    this.#options = options;
  }

  /** Forgets the speech under way (it was taken), keeping the room's level. */
  reset(): void {
    this.#speaking = false;
    this.#loudFor = 0;
    this.#countedFor = 0;
    this.#quietFor = 0;
  }

  /**
   * Judges `samples` (mono, −1…1); `'start'` when speech began in them, `'end'` when it
   * ended, else `null`. A stretch holding both says the first.
   */
  feed(samples: Float32Array): Heard {
    let heard: Heard = null;
    for (const sample of samples) {
      this.#sum += sample * sample;
      if (++this.#filled < this.#block) continue;
      const level = Math.sqrt(this.#sum / this.#filled);
      this.#sum = 0;
      this.#filled = 0;
      heard ??= this.#judge(level);
    }
    return heard;
  }

  #judge(level: number): Heard {
    const { startMs, endMs, above, floor } = this.#options;
    const room = this.#room ?? level;
    const loud = level >= Math.max(floor, room * above);
    // Quiet is learnt at once, loud slowly, and not at all while someone speaks.
    if (!loud) this.#room = level < room ? room * 0.8 + level * 0.2 : room * 0.98 + level * 0.02;
    else if (!this.#speaking) this.#room = room * 0.995 + level * 0.005;
    if (loud) {
      this.#countedFor = this.#loudFor === 0 ? BLOCK_MS : this.#countedFor + BLOCK_MS;
      this.#loudFor += BLOCK_MS;
      this.#quietFor = 0;
      if (!this.#speaking && this.#loudFor >= startMs) {
        this.#speaking = true;
        return 'start';
      }
      return null;
    }
    this.#quietFor += BLOCK_MS;
    if (!this.#speaking) {
      // Words have gaps: a short pause before speech is counted begins does not undo it.
      this.#loudFor = Math.max(0, this.#loudFor - BLOCK_MS / 2);
      this.#countedFor = this.#loudFor === 0 ? 0 : this.#countedFor + BLOCK_MS;
      return null;
    }
    if (this.#quietFor >= endMs) {
      this.reset();
      return 'end';
    }
    return null;
  }
}
