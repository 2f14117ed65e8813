/**
 * An image's bytes as a `data:` address an `<img>` can show: the page's CSP allows images
 * from itself and `data:` only, and refuses `blob:` ones (so there is no object URL to
 * revoke). Used by the document viewer and by a picture shown in the conversation.
 */

/** The bytes as a `data:` address under `type`, the media type the caller vouches for — never what the bytes claim. */
export function dataUrl(bytes: Blob, type: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.addEventListener('load', () => (typeof reader.result === 'string' ? resolve(reader.result) : reject(new Error('unreadable'))));
    reader.addEventListener('error', () => reject(reader.error ?? new Error('unreadable')));
    reader.readAsDataURL(new Blob([bytes], { type }));
  });
}
