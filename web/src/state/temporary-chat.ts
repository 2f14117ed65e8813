/**
 * Deleting a temporary chat as the person leaves it (another conversation, a new one,
 * Lock). The server deletes one even while its turn runs (it stops the turn first); one
 * already gone (404: deleted from another window, or by the server at a lock) is what was
 * wanted. Needs only the one call it makes, so a test can play the server.
 */
import { ApiError, type ApiClient } from '../api/client.js';

export async function deleteTemporaryChat(client: Pick<ApiClient, 'deleteSession'>, id: string): Promise<void> {
  try {
    await client.deleteSession(id);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
  }
}
