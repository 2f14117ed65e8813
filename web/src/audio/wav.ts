/**
 * A recording as a WAV file: one channel of 16-bit PCM at the rate it was captured. The
 * server reads any rate from 8 to 48 kHz and resamples it itself (docs/architecture.md
 * §15), so nothing is resampled here. WebKitGTK's MediaRecorder records no audio format
 * at all, which is why the page captures samples and writes this file itself.
 */

/** `chunks` of samples (full scale ±1) at `rate` Hz, as a WAV file. */
export function encodeWav(chunks: readonly Float32Array[], rate: number): Blob {
  const frames = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  const buffer = new ArrayBuffer(44 + frames * 2);
  const view = new DataView(buffer);
  const text = (at: number, value: string): void => {
    for (let i = 0; i < value.length; i++) view.setUint8(at + i, value.charCodeAt(i));
  };
  text(0, 'RIFF');
  view.setUint32(4, 36 + frames * 2, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // one channel
  view.setUint32(24, rate, true);
  view.setUint32(28, rate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  text(36, 'data');
  view.setUint32(40, frames * 2, true);
  let at = 44;
  for (const chunk of chunks) {
    for (const sample of chunk) {
      const clamped = Math.max(-1, Math.min(1, sample));
      view.setInt16(at, clamped < 0 ? Math.round(clamped * 0x8000) : Math.round(clamped * 0x7fff), true);
      at += 2;
    }
  }
  return new Blob([buffer], { type: 'audio/wav' });
}
