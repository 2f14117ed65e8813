/**
 * Copies text and says so for a moment: the "Copied" state of copy buttons
 * (recovery codes, code blocks, messages).
 *
 * Tries the asynchronous Clipboard API first; where the webview refuses it,
 * falls back to selecting the text in a hidden field and `execCommand`.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';

const SHOWN_MS = 2000;

export class ClipboardController implements ReactiveController {
  readonly #host: ReactiveControllerHost;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** What was copied last, for as long as "Copied" is shown; `null` otherwise. */
  copied: string | null = null;
  failed = false;

  constructor(host: ReactiveControllerHost) {
    this.#host = host;
    host.addController(this);
  }

  hostDisconnected(): void {
    clearTimeout(this.#timer);
  }

  /** Copies `text`; `key` names what was copied so the right button says so. */
  async copy(text: string, key = text): Promise<boolean> {
    const ok = await writeClipboard(text);
    this.copied = ok ? key : null;
    this.failed = !ok;
    this.#host.requestUpdate();
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.copied = null;
      this.failed = false;
      this.#host.requestUpdate();
    }, SHOWN_MS);
    return ok;
  }
}

export async function writeClipboard(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const field = document.createElement('textarea');
    field.value = text;
    field.setAttribute('readonly', '');
    field.className = 'skald-offscreen';
    document.body.append(field);
    field.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    } finally {
      field.remove();
    }
  }
}
