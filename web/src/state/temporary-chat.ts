/**
 * Deleting a temporary chat as the person leaves it (another conversation, a new one,
 * Lock): the server refuses (409) while a turn runs in it, so the turn is stopped first
 * and the deletion asked again; one already gone (404: deleted from another window, or
 * by the server at a lock) is what was wanted. Needs only the two calls it makes, so a
 * test can play the server.
 */
import { ApiError, type ApiClient } from '../api/client.js';

/** How many times the deletion is asked for after stopping, and how long between. */
const ATTEMPTS = 3;
const PAUSE_MS = 300;

export async function deleteTemporaryChat(
  client: Pick<ApiClient, 'deleteSession' | 'stop'>,
  id: string,
  pause: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await client.deleteSession(id);
      return;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.status === 404) return;
      if (error.status !== 409 || attempt >= ATTEMPTS) throw error;
    }
    // A turn is running (or waits on a card): it is stopped, then the deletion asked again.
    try {
      await client.stop(id);
    } catch (error) {
      // Ended on its own meanwhile: the deletion is asked again all the same.
      if (!(error instanceof ApiError) || error.status === 0) throw error;
    }
    if (attempt > 0) await pause(PAUSE_MS);
  }
}
