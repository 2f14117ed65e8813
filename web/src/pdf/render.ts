/**
 * PDFs drawn by pdf.js: a page on a canvas, with its text laid over it as real, selectable
 * words (pdf.js's text layer), so a page can be read, searched with the browser's find and
 * copied from.
 *
 * Loaded only when a PDF is opened: the document viewer imports this module with
 * `import()`, so pdf.js is a chunk of its own and the page's main script does not grow.
 * The legacy build, because the desktop window's engine (WebKitGTK) trails the browsers
 * pdf.js's modern build targets; its polyfills come with it.
 *
 * Within the server's Content-Security-Policy: the worker is a file of our own origin,
 * bundled by Vite; pdf.js gets the bytes (fetched with the bearer), never an address; no
 * WebAssembly (script-src has no 'wasm-unsafe-eval'); pdf.js 6 compiles nothing with
 * eval, so there is no `isEvalSupported` left to turn off. Fonts go through the FontFace
 * API, and the text layer's CSS is ours (skald-document-view.styles.ts): style-src refuses
 * the <style> pdf.js would otherwise need, and the page lives in shadow DOM.
 *
 * Never: fetches anything itself, keeps a document after `destroy`, or runs the PDF's own
 * scripts (pdf.js's scripting sandbox is not loaded) or forms.
 */
import './stream-iterator.js';

import {
  getDocument,
  GlobalWorkerOptions,
  TextLayer,
  VerbosityLevel,
  type PDFDocumentLoadingTask,
  type PDFDocumentProxy,
  type RenderTask,
} from 'pdfjs-dist/legacy/build/pdf.mjs';
import workerUrl from 'pdfjs-dist/legacy/build/pdf.worker.min.mjs?url';

GlobalWorkerOptions.workerSrc = workerUrl;

/** The page is drawn to fit the width it is given, within these scales (1 = 72 dpi at 100%). */
const MIN_SCALE = 0.5;
const MAX_SCALE = 2.5;

/** Where a page is drawn: the canvas, and the element its text layer fills (class `textLayer`). */
export interface PageTarget {
  readonly canvas: HTMLCanvasElement;
  readonly textLayer: HTMLElement;
  /** The width, in CSS pixels, the page should fit. */
  readonly width: number;
}

/** One open PDF. */
export class PdfDocument {
  readonly #task: PDFDocumentLoadingTask;
  readonly #pdf: PDFDocumentProxy;
  #render: RenderTask | null = null;
  #text: TextLayer | null = null;

  private constructor(task: PDFDocumentLoadingTask, pdf: PDFDocumentProxy) {
    this.#task = task;
    this.#pdf = pdf;
  }

  /** Opens a PDF from its bytes (which pdf.js takes over: `data` is unusable afterwards). */
  static async open(data: Uint8Array): Promise<PdfDocument> {
    const task = getDocument({
      data,
      useWasm: false,
      // Warnings (a font left to the system, say) are pdf.js's business, not the console's.
      verbosity: VerbosityLevel.ERRORS,
    });
    try {
      return new PdfDocument(task, await task.promise);
    } catch (error) {
      await task.destroy();
      throw error;
    }
  }

  get pages(): number {
    return this.#pdf.numPages;
  }

  /**
   * Draws page `number` (counted from 1) into `target`, stopping any drawing still under
   * way. Resolves once the page and its text are drawn; rejects if a later call or
   * `destroy` cut it short, or the page cannot be drawn.
   */
  async drawPage(number: number, target: PageTarget): Promise<void> {
    this.#stop();
    const page = await this.#pdf.getPage(number);
    const natural = page.getViewport({ scale: 1 });
    const scale = Math.min(MAX_SCALE, Math.max(MIN_SCALE, target.width / natural.width));
    const viewport = page.getViewport({ scale });
    // Drawn at the screen's pixel density, shown at CSS size: sharp at 200% zoom too.
    const ratio = window.devicePixelRatio || 1;
    const { canvas, textLayer } = target;
    canvas.width = Math.floor(viewport.width * ratio);
    canvas.height = Math.floor(viewport.height * ratio);
    canvas.style.width = `${Math.floor(viewport.width)}px`;
    canvas.style.height = `${Math.floor(viewport.height)}px`;
    textLayer.textContent = '';
    textLayer.style.setProperty('--scale-factor', String(viewport.scale));
    const render = page.render({ canvas, viewport, ...(ratio === 1 ? {} : { transform: [ratio, 0, 0, ratio, 0, 0] }) });
    const text = new TextLayer({ textContentSource: page.streamTextContent(), container: textLayer, viewport });
    this.#render = render;
    this.#text = text;
    try {
      await Promise.all([render.promise, text.render()]);
    } finally {
      if (this.#render === render) this.#render = null;
      if (this.#text === text) this.#text = null;
    }
  }

  /** Stops any drawing and lets go of the document and its worker. */
  async destroy(): Promise<void> {
    this.#stop();
    await this.#task.destroy();
  }

  #stop(): void {
    this.#render?.cancel();
    this.#text?.cancel();
    this.#render = null;
    this.#text = null;
  }
}
