/**
 * Whether a provider is local or remote (§16), for the administrator's
 * models page; and which of its models may be told to read pictures, with
 * the model list that says so.
 *
 * Pure. The server decides for real (`src/providers/privacy.rs`) and its
 * verdict, where the page has it through the model list, wins; without it
 * this mirrors the rule and errs on the side of "remote": loopback
 * addresses and `localhost` are local, as is a private-network IP address
 * the administrator marked trusted; every other host is remote.
 */
import type { Model, ModelInput, Privacy, Provider, ProviderModel } from '../api/types.js';

export function providerPrivacy(provider: Provider, models: readonly Model[]): Privacy {
  const known = models.find((model) => model.provider === provider.name);
  if (known !== undefined) return known.privacy;
  if (provider.kind === 'local') return 'local';
  let host: string;
  try {
    host = new URL(provider.base_url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return 'remote';
  }
  if (isLoopback(host)) return 'local';
  return provider.trusted_lan && isPrivateAddress(host) ? 'local' : 'remote';
}

/** Whether marking the provider "trusted" could make it local: a private-network IP address. */
export function mayBeTrusted(provider: Provider): boolean {
  try {
    return isPrivateAddress(new URL(provider.base_url).hostname.replace(/^\[|\]$/g, '').toLowerCase());
  } catch {
    return false;
  }
}

/**
 * Whether an administrator may say which of the provider's models read pictures. Not
 * the built-in provider's: its engine reads words only, and the server refuses it.
 */
export function mayReadPictures(provider: Provider): boolean {
  return provider.kind !== 'local';
}

/**
 * The model list `PATCH /api/providers/{id}` takes to change whether one model reads
 * pictures. The server replaces the provider's whole list with the one given, so every
 * model goes back with all it has; only `modelId`'s `images` changes.
 */
export function modelsWithImages(models: readonly ProviderModel[], modelId: string, images: boolean): ModelInput[] {
  return models.map((model) => ({
    id: model.model_id,
    context_window: model.context_window,
    strength: model.strength,
    tools: model.tools,
    images: model.model_id === modelId ? images : model.images,
  }));
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function isPrivateAddress(host: string): boolean {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.\d{1,3}\.\d{1,3}$/.exec(host);
  if (v4) {
    const a = Number(v4[1]);
    const b = Number(v4[2]);
    return a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254);
  }
  return /^f[cd][0-9a-f]{2}:/.test(host) || /^fe80:/.test(host);
}
