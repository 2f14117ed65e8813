/**
 * Listening through the microphone: Web Audio takes the device's samples as they come
 * (WebKitGTK's MediaRecorder records no audio format, so the samples themselves are
 * kept), and they are given back as a WAV file — at a second press (`Recording`), or at
 * each pause after speech (`Listener`, hands-free). Everything stays in memory; the
 * device is let go the moment listening ends.
 */
import { SpeechDetector, type DetectorOptions } from './end-of-speech.js';
import { encodeWav } from './wav.js';

/** Why listening could not start, as the page words it. */
export type MicrophoneProblem = 'refused' | 'missing' | 'unsupported' | 'failed';

export class MicrophoneError extends Error {
  constructor(readonly problem: MicrophoneProblem) {
    super(problem);
  }
}

/** The longest a recording may run: the server writes down ten minutes at most. */
export const MAX_SECONDS = 600;

/** The microphone open, its samples going to whoever listens. */
class Capture {
  readonly #stream: MediaStream;
  readonly context: AudioContext;
  readonly #processor: ScriptProcessorNode;
  #ended = false;

  private constructor(stream: MediaStream, context: AudioContext, onSamples: (samples: Float32Array) => void) {
    this.#stream = stream;
    this.context = context;
    const source = context.createMediaStreamSource(stream);
    // A ScriptProcessor, not an AudioWorklet: a worklet's module would need a URL the
    // page's CSP allows and an engine that runs worklets; this runs everywhere.
    this.#processor = context.createScriptProcessor(4096, 1, 1);
    this.#processor.onaudioprocess = (event: AudioProcessingEvent) => {
      if (!this.#ended) onSamples(new Float32Array(event.inputBuffer.getChannelData(0)));
    };
    source.connect(this.#processor);
    // Some engines run a processor only while it leads somewhere; it writes silence.
    this.#processor.connect(context.destination);
  }

  static async open(onSamples: (samples: Float32Array) => void): Promise<Capture> {
    const media = globalThis.navigator?.mediaDevices;
    if (media?.getUserMedia === undefined || globalThis.AudioContext === undefined) throw new MicrophoneError('unsupported');
    let stream: MediaStream;
    try {
      // The echo canceller keeps what the speakers play (an answer read aloud) out.
      stream = await media.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
    } catch (error) {
      const name = error instanceof DOMException ? error.name : '';
      if (name === 'NotAllowedError' || name === 'SecurityError') throw new MicrophoneError('refused');
      if (name === 'NotFoundError' || name === 'OverconstrainedError') throw new MicrophoneError('missing');
      throw new MicrophoneError('failed');
    }
    try {
      const context = new AudioContext();
      if (context.state === 'suspended') await context.resume();
      return new Capture(stream, context, onSamples);
    } catch {
      for (const track of stream.getTracks()) track.stop();
      throw new MicrophoneError('failed');
    }
  }

  /** Lets the device go. */
  async close(): Promise<void> {
    this.#ended = true;
    this.#processor.onaudioprocess = null;
    this.#processor.disconnect();
    for (const track of this.#stream.getTracks()) track.stop();
    await this.context.close().catch(() => undefined);
  }
}

/** One recording, from a press to the WAV file. */
export class Recording {
  readonly #capture: Capture;
  readonly #chunks: Float32Array[];
  #frames = 0;

  private constructor(capture: Capture, chunks: Float32Array[]) {
    this.#capture = capture;
    this.#chunks = chunks;
  }

  /** Starts listening; `onFull` is called once the longest recording is reached. */
  static async start(onFull: () => void): Promise<Recording> {
    const chunks: Float32Array[] = [];
    let recording: Recording | null = null;
    const capture = await Capture.open((samples) => {
      if (!recording) return;
      chunks.push(samples);
      recording.#frames += samples.length;
      if (recording.#frames >= MAX_SECONDS * capture.context.sampleRate) onFull();
    });
    recording = new Recording(capture, chunks);
    return recording;
  }

  /** How long it has listened, in seconds. */
  get seconds(): number {
    return this.#frames / this.#capture.context.sampleRate;
  }

  /** Stops listening and lets the device go; the recording as a WAV file. */
  async stop(): Promise<Blob> {
    const rate = this.#capture.context.sampleRate;
    await this.#capture.close();
    return encodeWav(this.#chunks, rate);
  }

  /** Stops listening and drops what was heard. */
  cancel(): void {
    this.#chunks.length = 0;
    void this.#capture.close();
  }
}

/** What a hands-free listener tells. */
export interface ListenerEvents {
  /** Someone began to speak. */
  readonly speech: () => void;
  /** They finished: what they said, as a WAV file. */
  readonly utterance: (audio: Blob) => void;
}

/**
 * Kept from before the loud stretch that speech was recognised by, so its first sound is
 * not cut: the detector may judge a start well after that stretch began (over an answer
 * being read it asks for a plainer voice, and quiet first words count little).
 */
const LEAD_SECONDS = 1;
/** At most this much of a stretch not yet judged speech is kept (a noisy room's hum). */
const LONGEST_PENDING_SECONDS = 5;
/** One utterance is cut here even if the speaker goes on. */
const LONGEST_UTTERANCE_SECONDS = 60;

/**
 * Hands-free listening: the microphone stays open, and each thing said, from its start
 * to the pause after it, becomes a WAV file of its own. While nobody speaks, only the
 * last second is kept (and any stretch that may yet be judged speech); nothing is kept
 * once an utterance is handed over.
 */
export class Listener {
  readonly #capture: Capture;
  readonly #detector: SpeechDetector;
  /** The samples since speech began, or the lead kept while it has not. */
  readonly #chunks: Float32Array[] = [];
  #frames = 0;

  private constructor(capture: Capture, detector: SpeechDetector) {
    this.#capture = capture;
    this.#detector = detector;
  }

  static async start(events: ListenerEvents): Promise<Listener> {
    let listener: Listener | null = null;
    const capture = await Capture.open((samples) => {
      if (listener) listener.#hear(samples, events);
    });
    listener = new Listener(capture, new SpeechDetector(capture.context.sampleRate));
    return listener;
  }

  /** Judges from here on as `options` say (plainer speech while Skald talks). */
  set options(options: DetectorOptions) {
    this.#detector.options = options;
  }

  /** Stops listening, drops what was heard and lets the device go. */
  close(): void {
    this.#chunks.length = 0;
    void this.#capture.close();
  }

  #hear(samples: Float32Array, events: ListenerEvents): void {
    const rate = this.#capture.context.sampleRate;
    const heard = this.#detector.feed(samples);
    this.#chunks.push(samples);
    this.#frames += samples.length;
    if (heard === 'start') events.speech();
    if (!this.#detector.speaking && heard !== 'end') {
      // Nobody speaks: only the lead is kept, reaching back to where a stretch that may
      // yet be judged speech began.
      const pending = Math.min(this.#detector.pendingMs / 1000, LONGEST_PENDING_SECONDS);
      const keep = (LEAD_SECONDS + pending) * rate;
      while (this.#chunks.length > 1 && this.#frames - (this.#chunks[0]?.length ?? 0) >= keep) {
        this.#frames -= this.#chunks.shift()?.length ?? 0;
      }
      return;
    }
    if (heard === 'end' || this.#frames >= LONGEST_UTTERANCE_SECONDS * rate) {
      this.#detector.reset();
      const audio = encodeWav(this.#chunks.splice(0), rate);
      this.#frames = 0;
      events.utterance(audio);
    }
  }
}
