/**
 * The page's keyboard shortcuts: one list, read by the key handler and by the help
 * dialog, so what the dialog says is what the keys do. Ctrl stands for ⌘ on a Mac.
 * Pure.
 */
export type ShortcutAction = 'new-chat' | 'search' | 'focus-composer' | 'speak' | 'stop' | 'help';

export interface Shortcut {
  readonly action: ShortcutAction;
  /** As shown: the keys, in order. */
  readonly keys: readonly string[];
}

export const SHORTCUTS: readonly Shortcut[] = [
  { action: 'new-chat', keys: ['Ctrl', 'Shift', 'O'] },
  { action: 'search', keys: ['Ctrl', 'K'] },
  { action: 'focus-composer', keys: ['Shift', 'Esc'] },
  { action: 'speak', keys: ['Ctrl', 'Shift', 'M'] },
  { action: 'stop', keys: ['Esc'] },
  { action: 'help', keys: ['Ctrl', '/'] },
];

/** What a key press asks for, if it is one of the shortcuts. */
export function shortcutOf(event: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'metaKey' | 'shiftKey' | 'altKey'>): ShortcutAction | null {
  const ctrl = event.ctrlKey || event.metaKey;
  if (event.altKey) return null;
  const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
  if (ctrl && event.shiftKey && key === 'o') return 'new-chat';
  if (ctrl && !event.shiftKey && key === 'k') return 'search';
  if (ctrl && event.shiftKey && key === 'm') return 'speak';
  if (ctrl && !event.shiftKey && key === '/') return 'help';
  if (!ctrl && event.shiftKey && key === 'Escape') return 'focus-composer';
  if (!ctrl && !event.shiftKey && key === 'Escape') return 'stop';
  return null;
}
