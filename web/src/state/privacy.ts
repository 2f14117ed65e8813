/**
 * Where a conversation's words go (§16), for the privacy badge: "Private to
 * you" only when the words stay on this machine; otherwise the provider they
 * go to is named.
 *
 * Pure. Errs on the side of naming a provider: a model the page cannot find
 * in the catalogue, or a choice the server has not made yet among models of
 * both kinds, never reads as private.
 */
import type { Model, NextModel } from '../api/types.js';

export type Badge =
  /** Every word stays on this computer (or the home network the administrator trusts). */
  | { readonly kind: 'private' }
  /** The words go to these providers; `certain` is false when it is one of them, not known which. */
  | { readonly kind: 'remote'; readonly providers: readonly string[]; readonly certain: boolean }
  /** No model is available at all. */
  | { readonly kind: 'none' };

/** The badge of a turn whose model is known. */
export function badgeForModel(name: string, models: readonly Model[]): Badge {
  const model = models.find((m) => m.name.toLowerCase() === name.toLowerCase());
  if (model?.privacy === 'local') return { kind: 'private' };
  const provider = model?.provider ?? name.split('/')[0] ?? name;
  return { kind: 'remote', providers: [provider], certain: true };
}

/**
 * The badge of the next message: the pinned model when there is one,
 * otherwise any model the role allows could be chosen, so it is private only
 * when all of them are local.
 */
export function badgeForNext(pinned: string | null, models: readonly Model[]): Badge {
  if (pinned !== null) return badgeForModel(pinned, models);
  if (models.length === 0) return { kind: 'none' };
  const remote = models.filter((m) => m.privacy !== 'local');
  if (remote.length === 0) return { kind: 'private' };
  const providers = [...new Set(remote.map((m) => m.provider))];
  return { kind: 'remote', providers, certain: remote.length === models.length && providers.length === 1 };
}

/**
 * The badge of the next message of a conversation, from the server's own
 * answer (`next_model`): exact, where `badgeForNext` can only guess among
 * the models the role allows.
 */
export function badgeForNextModel(next: NextModel | null): Badge {
  if (next === null) return { kind: 'none' };
  return next.privacy === 'local' ? { kind: 'private' } : { kind: 'remote', providers: [next.provider], certain: true };
}
