/**
 * How Skald listens and reads aloud for the person (docs/architecture.md §15): the voice
 * and its pace, whether what they say is sent at once, and whether answers are read aloud
 * as they come. Kept in their settings, read at login, changed on My data.
 */

export interface VoiceSettings {
  /** A voice's id on the server; `''` for the first there. */
  readonly voice: string;
  /** A factor of the voice's own pace. */
  readonly speed: number;
  /** What they said is sent as soon as it is written down, rather than left to check. */
  readonly autoSend: boolean;
  /** Each answer is read aloud as it streams. */
  readonly readAloud: boolean;
}

/** The keys of the person's settings that hold these choices. */
export const VOICE_SETTING_KEYS = {
  voice: 'voice',
  speed: 'voice_speed',
  autoSend: 'voice_auto_send',
  readAloud: 'voice_read_aloud',
} as const;

/** The paces offered. */
export const SPEEDS = [0.75, 1, 1.25, 1.5, 2] as const;

export const DEFAULT_VOICE_SETTINGS: VoiceSettings = { voice: '', speed: 1, autoSend: false, readAloud: false };

/** Stored settings as voice choices; anything unknown (or nothing) is the default. Pure. */
export function parseVoiceSettings(settings: Readonly<Record<string, string>>): VoiceSettings {
  const speed = Number(settings[VOICE_SETTING_KEYS.speed]);
  return {
    voice: settings[VOICE_SETTING_KEYS.voice] ?? '',
    speed: (SPEEDS as readonly number[]).includes(speed) ? speed : 1,
    autoSend: settings[VOICE_SETTING_KEYS.autoSend] === 'on',
    readAloud: settings[VOICE_SETTING_KEYS.readAloud] === 'on',
  };
}

/** `choice` as the settings that keep it. Pure. */
export function voiceSettingValues(choice: VoiceSettings): ReadonlyArray<readonly [string, string]> {
  return [
    [VOICE_SETTING_KEYS.voice, choice.voice],
    [VOICE_SETTING_KEYS.speed, String(choice.speed)],
    [VOICE_SETTING_KEYS.autoSend, choice.autoSend ? 'on' : 'off'],
    [VOICE_SETTING_KEYS.readAloud, choice.readAloud ? 'on' : 'off'],
  ];
}
