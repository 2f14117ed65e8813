/**
 * How the page looks to the person: light, dark or as the system is set, and a text
 * size. Kept in their settings (`theme`, `text_size`), applied at login and at once when
 * changed, and back to the system's look when they lock. The chosen look is the
 * `data-theme` and `data-text-size` of <html>, which styles/global.css reads.
 */
export const THEMES = ['system', 'light', 'dark'] as const;
export type Theme = (typeof THEMES)[number];
export const TEXT_SIZES = ['small', 'normal', 'large', 'larger'] as const;
export type TextSize = (typeof TEXT_SIZES)[number];

/** The keys of the person's settings that hold their choices. */
export const THEME_SETTING = 'theme';
export const TEXT_SIZE_SETTING = 'text_size';

export interface Appearance {
  readonly theme: Theme;
  readonly textSize: TextSize;
}

export const SYSTEM_LOOK: Appearance = { theme: 'system', textSize: 'normal' };

/** Stored settings as a look; anything unknown (or nothing) is the system's. Pure. */
export function parseAppearance(settings: Readonly<Record<string, string>>): Appearance {
  const theme = settings[THEME_SETTING];
  const size = settings[TEXT_SIZE_SETTING];
  return {
    theme: (THEMES as readonly string[]).includes(theme ?? '') ? (theme as Theme) : 'system',
    textSize: (TEXT_SIZES as readonly string[]).includes(size ?? '') ? (size as TextSize) : 'normal',
  };
}

/** The theme drawn for a choice, given whether the system is dark now. Pure. */
export function drawnTheme(theme: Theme, systemDark: boolean): 'light' | 'dark' {
  return theme === 'system' ? (systemDark ? 'dark' : 'light') : theme;
}

const dark = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
let current: Appearance = SYSTEM_LOOK;

function draw(): void {
  const root = document.documentElement;
  root.dataset['theme'] = drawnTheme(current.theme, dark?.matches ?? false);
  if (current.textSize === 'normal') delete root.dataset['textSize'];
  else root.dataset['textSize'] = current.textSize;
}

// "As the system" follows the system while the page is open.
dark?.addEventListener('change', draw);

/** Makes `look` the page's. */
export function useAppearance(look: Appearance): void {
  current = look;
  draw();
}

export function activeAppearance(): Appearance {
  return current;
}
