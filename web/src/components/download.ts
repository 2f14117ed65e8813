/**
 * Hands a file made in the page to the browser's download, and keeps no copy: the
 * object URL is released once the click has been handled. Used for the account archive
 * and for a conversation saved as Markdown.
 */

/** How long the object URL lives: the browser has its copy once the click is handled. */
const RELEASE_MS = 1_000;

/** Downloads `blob` as `filename` through a hidden link placed in `root`. */
export function saveBlob(blob: Blob, filename: string, root: ParentNode): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.rel = 'noopener';
  link.hidden = true;
  root.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), RELEASE_MS);
}
