/**
 * Listening through the microphone: Web Audio takes the device's samples as they come
 * (WebKitGTK's MediaRecorder records no audio format, so the samples themselves are
 * kept), and stopping gives them back as a WAV file. Everything stays in memory; the
 * device is let go the moment listening ends.
 */
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

/** One recording, from start to the WAV file. */
export class Recording {
  readonly #stream: MediaStream;
  readonly #context: AudioContext;
  readonly #processor: ScriptProcessorNode;
  readonly #chunks: Float32Array[] = [];
  #frames = 0;
  #ended = false;

  private constructor(stream: MediaStream, context: AudioContext, onFull: () => void) {
    this.#stream = stream;
    this.#context = context;
    const source = context.createMediaStreamSource(stream);
    // A ScriptProcessor, not an AudioWorklet: a worklet's module would need a URL the
    // page's CSP allows and an engine that runs worklets; this runs everywhere.
    this.#processor = context.createScriptProcessor(4096, 1, 1);
    this.#processor.onaudioprocess = (event: AudioProcessingEvent) => {
      if (this.#ended) return;
      this.#chunks.push(new Float32Array(event.inputBuffer.getChannelData(0)));
      this.#frames += event.inputBuffer.length;
      if (this.#frames >= MAX_SECONDS * context.sampleRate) onFull();
    };
    source.connect(this.#processor);
    // Some engines run a processor only while it leads somewhere; it writes silence.
    this.#processor.connect(context.destination);
  }

  /** Starts listening; `onFull` is called once the longest recording is reached. */
  static async start(onFull: () => void): Promise<Recording> {
    const media = globalThis.navigator?.mediaDevices;
    if (media?.getUserMedia === undefined || globalThis.AudioContext === undefined) throw new MicrophoneError('unsupported');
    let stream: MediaStream;
    try {
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
      return new Recording(stream, context, onFull);
    } catch {
      for (const track of stream.getTracks()) track.stop();
      throw new MicrophoneError('failed');
    }
  }

  /** How long it has listened, in seconds. */
  get seconds(): number {
    return this.#frames / this.#context.sampleRate;
  }

  /** Stops listening and lets the device go; the recording as a WAV file. */
  async stop(): Promise<Blob> {
    this.#release();
    const rate = this.#context.sampleRate;
    await this.#context.close().catch(() => undefined);
    return encodeWav(this.#chunks, rate);
  }

  /** Stops listening and drops what was heard. */
  cancel(): void {
    this.#release();
    this.#chunks.length = 0;
    void this.#context.close().catch(() => undefined);
  }

  #release(): void {
    this.#ended = true;
    this.#processor.onaudioprocess = null;
    this.#processor.disconnect();
    for (const track of this.#stream.getTracks()) track.stop();
  }
}
