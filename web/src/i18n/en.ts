/**
 * Every string the UI shows, in English.
 *
 * Components read text from here and never hard-code it, so a translation is
 * one more file of the same shape. Placeholders are written `{name}` and
 * filled by the component, so a translation may move them.
 *
 * Not here: the machine-readable state codes (`ok`, `error`, `no-token`, …)
 * that tests and scripts read through `data-testid` hooks; they never change
 * with the language.
 */
export const en = {
  productName: 'Skald',
  tagline: 'Your private assistant',

  // connection
  checking: 'Checking the connection…',
  opening: 'Opening your space…',
  connected: 'Connected',
  versionLabel: 'Version',
  /** `{command}` is replaced by the `skald serve` command, set as code. */
  noToken:
    'Open Skald from the app or from the link {command} printed — this page needs its launch token.',
  noTokenCommand: 'skald serve',
  unreachable: 'Skald is not answering. Is it still running?',
  /** `{message}` is the server's own explanation. */
  serverError: 'Skald reported a problem: {message}',
  unexpected: 'Something unexpected happened. Please try again.',
  cancelled: 'Cancelled.',

  // common
  loading: 'Loading…',
  working: 'Working…',
  retry: 'Retry',
  back: 'Back',
  cancel: 'Cancel',
  continue: 'Continue',
  delete: 'Delete',
  dismiss: 'Dismiss',
  copy: 'Copy',
  copied: 'Copied',
  copyFailed: 'Copy failed',
  copiedCode: 'The code is on the clipboard.',
  print: 'Print',
  show: 'Show',
  hide: 'Hide',
  menu: 'Menu',
  fillEverything: 'Please fill in every field.',

  // passwords
  password: 'Password',
  newPassword: 'Choose a password',
  confirmPassword: 'Type it again',
  passwordsDiffer: 'The two passwords differ.',
  passwordRule: 'At least 12 characters. A phrase of three or four unrelated words is easy to remember and hard to guess.',
  /** `{n}` is how many characters are missing. */
  passwordShort: '{n} more characters to go.',
  passwordRepetitive: 'Use more different characters; repeating a few is easy to guess.',
  passwordHasName: 'Leave your name out of your password.',
  passwordGood: 'Long enough. Keep it somewhere only you can find.',
  passwordWhy:
    'Why length matters: whoever copies this computer’s files — the administrator included — could try guesses offline, without any limit. Only a long password holds out.',

  // setup
  setupTitle: 'Welcome to Skald',
  setupLead:
    'You are setting Skald up for the people who share this computer. First, your own account: you will be its administrator.',
  setupNameHint: 'The name the others will see in the login picker.',
  setupAdminNote:
    'As administrator you add people, connect models and set rules. You cannot read anyone else’s conversations, and they cannot read yours.',
  setupSubmit: 'Create my account',
  setupStepsLabel: 'Setup steps',
  setupStepAccount: 'Your account',
  setupStepCode: 'Recovery code',
  setupStepModel: 'Connect a model',
  setupModelTitle: 'Connect a model',
  setupModelLead:
    'Skald needs a language model to answer. A model server on this computer keeps every word here; a provider on the internet receives what you write to it.',

  // connecting a model
  connectLocalTitle: 'On this computer',
  connectDetecting: 'Looking for model servers on this computer…',
  connectNoneFound: 'No model server (Ollama, LM Studio, llama.cpp) is running on this computer right now.',
  /** `{n}` models */
  connectModelCount: '{n} models',
  connectThis: 'Connect',
  connectDone: 'Connected',
  connectRemoteTitle: 'A model provider',
  connectKind: 'Kind',
  kindOpenai: 'OpenAI-compatible (OpenAI, OpenRouter, LM Studio, llama.cpp, vLLM)',
  kindAnthropic: 'Anthropic',
  kindOllama: 'Ollama',
  connectName: 'Name',
  connectNameHint: 'Letters, digits, dots, dashes. Model names start with it.',
  connectUrl: 'Address (base URL)',
  connectKey: 'API key',
  connectKeyHint: 'Optional for servers on this computer. Stored encrypted; never shown again.',
  connectTest: 'Test and connect',
  connectTesting: 'Testing…',
  /** `{name}` provider, `{n}` how many models, `{models}` some of their names */
  connectOk: 'Connected to {name}: {n} models found ({models}).',
  /** `{reason}` is the provider's or Skald's explanation */
  connectFailed: 'Could not connect. {reason}',
  connectFinish: 'Start using Skald',
  connectSkip: 'Skip for now',

  // recovery code
  recoveryTitle: 'Your recovery code',
  recoveryNewTitle: 'Your new recovery code',
  /** `{name}` is the person's name */
  recoveryLead:
    'This code, {name}, opens your space if you forget your password. It is shown now, only to you, and never again.',
  recoveryCodeLabel: 'Recovery code',
  recoveryWarningTitle: 'Keep it safe.',
  recoveryWarning:
    'Without your password or this code, nobody — not even the administrator — can open your conversations again: they are lost for good. Print it or write it down and keep it away from this computer.',
  recoveryOldBackups: 'Your old code no longer works. Backups made before today still open with your old password.',
  recoveryKept: 'I have kept my recovery code somewhere safe.',

  // picker and login
  pickerTitle: 'Who is using Skald?',
  pickerLabel: 'People',
  pickerPending: 'Not set up yet',
  pickerHaveCode: 'I have an enrolment code',
  /** `{name}` is the person's name */
  loginTitle: 'Welcome back, {name}',
  unlock: 'Unlock',
  unlocking: 'Unlocking…',
  wrongPassword: 'That password is not right. Check Caps Lock and try again.',
  forgotPassword: 'Forgot your password?',
  notYou: 'Not you? Pick someone else',
  lockedNotice: 'Skald is locked. Pick yourself to continue.',
  yourName: 'Your name',

  // enrolment
  enrolTitle: 'Set up your account',
  enrolLead:
    'Enter the enrolment code your administrator gave you, then choose your own password. Only you will know it; the administrator cannot read your conversations.',
  enrolmentCode: 'Enrolment code',
  enrolmentCodeHint: 'Like ABCD-EFGH-…; it works once.',
  enrolSubmit: 'Create my space',

  // recovery
  recoverTitle: 'Forgot your password?',
  recoverLead: 'Your recovery code opens your space; then you choose a new password and get a new code.',
  recoverWarning:
    'Without the recovery code there is no way back in: nobody can reset a password here, and your conversations would be lost.',
  recoverSubmit: 'Reset my password',

  // workspace
  navLabel: 'Navigation',
  skipToMain: 'Skip to the conversation',
  lock: 'Lock',
  newChat: 'New chat',
  untitled: 'Untitled conversation',
  sessionsLabel: 'Conversations',
  searchLabel: 'Search conversations by title',
  searchPlaceholder: 'Search',
  noSessions: 'No conversations yet.',
  noMatches: 'No conversation has that in its title.',
  sessionWaiting: 'Waiting for you',
  sessionReplying: 'Replying…',
  renameLabel: 'New title',
  /** `{title}` of the conversation */
  renameNamed: 'Rename “{title}”',
  deleteNamed: 'Delete “{title}”',
  deleteTitle: 'Delete this conversation?',
  deleteBody: '“{title}” and everything in it will be gone for good.',
  sessionsFailed: 'Could not load your conversations',
  modelsFailed: 'Could not load the models',
  renameFailed: 'Could not rename',
  deleteFailed: 'Could not delete',

  // chat
  /** `{name}` is the person's name */
  emptyTitle: 'What can I help with, {name}?',
  emptyLead: 'Ask anything. Skald asks you before it does anything that matters.',
  noModelTitle: 'No model is connected yet',
  noModel: 'Skald has no model to answer with. Ask your administrator to connect one.',
  noModelAdmin: 'Skald has no model to answer with. Connect one in Settings → Models.',
  composerLabel: 'Message',
  composerPlaceholder: 'Write a message…',
  composerKeys: 'Enter sends; Shift and Enter starts a new line.',
  composerFineprint: 'Skald can be wrong. Check what matters.',
  send: 'Send',
  sendLabel: 'Send message',
  stop: 'Stop',
  stopLabel: 'Stop the reply',
  turnLabel: 'Exchange',
  youSaid: 'You said',
  assistantSaid: 'Skald replied',
  turnStopped: 'Stopped.',
  turnFailed: 'The reply failed.',
  parkedHint: 'Skald is waiting for your answer above before it goes on.',
  /** `{attempt}` is the attempt number */
  noteRetrying: 'The model did not answer; trying again (attempt {attempt})…',
  /** `{model}` it switched to */
  noteFallback: 'The model was unavailable; continuing with {model}.',
  noteCompacted: 'Older messages were summarised to fit the model.',
  announceSent: 'Message sent.',
  announceReplying: 'Skald is replying…',
  announceParked: 'Skald is waiting for your answer.',
  announceDone: 'Reply finished.',
  announceStopped: 'Reply stopped.',
  announceError: 'The reply failed.',
  copyCode: 'Copy code',
  /** `{alt}` is the image's description or address */
  markdownImage: 'Image not shown: {alt}',

  // models and privacy
  modelLabel: 'Model for this conversation',
  modelFixed: 'A conversation keeps the model it started with.',
  modelAutomatic: 'Automatic',
  modelGroupLocal: 'On this computer',
  modelGroupRemote: 'Sent to a provider',
  /** `{model}` name, `{provider}` that receives the words */
  modelRemoteOption: '{model} (sent to {provider})',
  privatePrivate: 'Private to you',
  privatePrivateTitle: 'What you write here stays on this computer.',
  /** `{provider}` that receives the words */
  privateRemote: 'Sent to {provider}',
  privateMaybeRemote: 'May be sent to {provider}',
  privateRemoteTitle: 'What you write here is sent to {provider} to be answered.',
  privateNone: 'No model',
  privateNoneTitle: 'No model is available to answer.',

  // tools
  toolRunning: 'Running…',
  toolWaiting: 'Waiting for you',
  toolOk: 'Done',
  toolError: 'Failed',
  toolDenied: 'Refused',
  toolCancelled: 'Cancelled',
  toolArguments: 'Arguments',
  toolResult: 'Result',

  // approval cards and questions
  approvalKind: 'Needs your approval',
  /** `{tool}` is what the assistant wants to do */
  approvalTitle: 'Skald wants to: {tool}',
  /** `{name}` whom the action is for */
  approvalFor: 'for {name}',
  approvalWhy: 'Skald’s reason: ',
  approvalArguments: 'Exactly this:',
  /** `{hash}` is the start of the arguments' fingerprint */
  approvalFingerprint: 'Fingerprint {hash}',
  approvalMayNotApprove: 'Your role cannot approve this; you can refuse it, or ask someone who can.',
  allow: 'Allow',
  deny: 'Deny',
  alwaysAllow: 'Always allow',
  /** `{tool}` name */
  alwaysAllowTitle: 'Allow now, and let Skald use {tool} without asking you again',
  questionKind: 'Skald asks',
  questionSuggestions: 'Suggested answers',
  questionAnswerLabel: 'Your answer',
  questionPlaceholder: 'Or type your answer…',
  questionSend: 'Answer',

  // inbox
  inboxTitle: 'Inbox',
  /** `{n}` cards */
  inboxCount: '{n} waiting',
  inboxEmptyTitle: 'Nothing is waiting on you',
  inboxEmpty: 'When Skald needs your approval or asks you something, it appears here.',
  /** `{title}` of the conversation */
  inboxIn: 'In “{title}”',
  inboxOpen: 'Open the conversation',
} as const;

/** The shape every translation must have. */
export type Strings = { readonly [K in keyof typeof en]: string };

/** The strings in use. One language for now. */
export const strings: Strings = en;

/** What the built-in tools do, in words; other tools show their name. */
const toolLabels: Readonly<Record<string, string>> = {
  current_time: 'Check the time',
  scratchpad: 'Use its scratchpad',
  notify: 'Send you a notification',
  note_write: 'Write a note',
  note_read: 'Read a note',
  note_list: 'List your notes',
  note_search: 'Search your notes',
  note_delete: 'Delete a note',
  web_fetch: 'Read a web page',
  clarify: 'Ask you a question',
  call_agent: 'Ask another agent',
  list_agents: 'List the agents',
  remember: 'Remember something',
  recall: 'Recall what it knows',
  forget: 'Forget something',
};

export function toolLabel(tool: string): string {
  return toolLabels[tool] ?? tool;
}
