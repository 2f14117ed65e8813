/**
 * One conversation as Markdown, for the person to keep or share: who said what, in
 * order, with what the assistant used in words. Built from the transcript on screen, in
 * memory: nothing is written anywhere but the file the person saves. Pure.
 */
import { strings } from '../i18n/en.js';
import { describeCall } from '../i18n/tool-sentences.js';
import type { Transcript, Turn } from './transcript.js';

export function conversationMarkdown(title: string, transcript: Transcript, exportedAt: Date): string {
  const lines = [`# ${oneLine(title) || strings.newChat}`, '', `_${strings.exportedOn.replace('{date}', exportedAt.toLocaleString())}_`, ''];
  for (const turn of transcript.turns) lines.push(...turnLines(turn));
  return `${lines.join('\n').trimEnd()}\n`;
}

/** The text of a reply as the person copies it: its words, without the tool calls. */
export function replyText(turn: Turn): string {
  return turn.items
    .flatMap((item) => (item.kind === 'text' ? [item.text] : []))
    .join('\n\n')
    .trim();
}

function turnLines(turn: Turn): string[] {
  const lines: string[] = [];
  if (turn.userText !== null) lines.push(`## ${strings.exportYou}`, '', turn.userText.trim(), '');
  const used = turn.items.flatMap((item) => (item.kind === 'tool' ? [describeCall(item.name, item.arguments) ?? item.name] : []));
  const reply = replyText(turn);
  if (reply === '' && used.length === 0) return lines;
  lines.push(`## ${strings.exportAssistant}${turn.model ? ` (${turn.model})` : ''}`, '');
  for (const call of used) lines.push(`> ${strings.exportUsed.replace('{call}', oneLine(call))}`, '');
  if (reply !== '') lines.push(reply, '');
  if (turn.status === 'stopped') lines.push(`_${strings.turnStopped}_`, '');
  return lines;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** A file name for the conversation: its title with only safe characters, and `.md`. */
export function markdownFileName(title: string): string {
  const safe = title
    .normalize('NFKD')
    .replace(/[^\p{L}\p{N} _-]+/gu, '')
    .trim()
    .replace(/\s+/g, '-')
    .slice(0, 60);
  return `${safe || 'conversation'}.md`;
}
