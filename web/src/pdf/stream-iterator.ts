/**
 * `for await` over a `ReadableStream` where the engine cannot do it: WebKitGTK, the
 * desktop window's engine, has no `ReadableStream.prototype[Symbol.asyncIterator]`, and
 * pdf.js reads streams that way. Installed on import, only where it is missing, before
 * pdf.js is loaded (pdf/render.ts imports this module first); an engine that has it keeps
 * its own.
 *
 * Behaves as the standard's iterator does: each chunk in turn, the lock released at the
 * end, and the stream cancelled when the loop is left early (`break`, a throw), unless
 * `values({ preventCancel: true })` asked otherwise.
 */

/** What the iterator needs of a stream: a reader. */
interface Readable<R> {
  getReader(): ReadableStreamDefaultReader<R>;
}

async function* values<R>(this: Readable<R>, options?: { readonly preventCancel?: boolean }): AsyncGenerator<R, undefined, undefined> {
  const reader = this.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return undefined;
      }
      yield value;
    }
  } finally {
    // A stream that errored rejects its cancel too; nothing more is to be done with it.
    if (!finished && options?.preventCancel !== true) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/**
 * Gives `prototype` (ReadableStream's, by default) `values()` and `[Symbol.asyncIterator]`
 * where it lacks them. Returns whether anything was added.
 */
export function installStreamIterator(prototype: object | undefined = globalThis.ReadableStream?.prototype): boolean {
  if (prototype === undefined || Symbol.asyncIterator in prototype) return false;
  const method = { value: values, writable: true, configurable: true, enumerable: false };
  if (!('values' in prototype)) Object.defineProperty(prototype, 'values', method);
  Object.defineProperty(prototype, Symbol.asyncIterator, method);
  return true;
}

installStreamIterator();
