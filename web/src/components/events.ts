/**
 * Events that more than one component fires. Each carries typed data, bubbles
 * and crosses shadow roots, so the component that acts on it (usually the
 * app or the workspace) listens once. Events one component alone fires live
 * in that component's file.
 */
import type { AttachedResource, Card, Conversation, Unlocked } from '../api/types.js';

const options = { bubbles: true, composed: true } as const;

/** A person unlocked their space (setup, login, enrolment or recovery). */
export class SignedInEvent extends Event {
  static readonly type = 'skald-signed-in';
  constructor(readonly unlocked: Unlocked) {
    super(SignedInEvent.type, options);
  }
}

/**
 * The person decided an approval card. `replace`, with allow on a `remember` card, is
 * the similar memory the new one takes the place of ("Replace it").
 */
export class DecideEvent extends Event {
  static readonly type = 'skald-decide';
  constructor(
    readonly card: Card,
    readonly decision: 'allow' | 'deny',
    readonly always: boolean,
    readonly replace?: string,
  ) {
    super(DecideEvent.type, options);
  }
}

/** The person answered a question card. */
export class AnswerEvent extends Event {
  static readonly type = 'skald-answer';
  constructor(
    readonly card: Card,
    readonly answer: string,
  ) {
    super(AnswerEvent.type, options);
  }
}

/** A reply to a tool server's form card: accept with the filled form, decline or cancel. */
export class FormReplyEvent extends Event {
  static readonly type = 'skald-form-reply';
  constructor(
    readonly card: Card,
    readonly decision: 'accept' | 'decline' | 'cancel',
    readonly content: Record<string, unknown> | null,
  ) {
    super(FormReplyEvent.type, options);
  }
}

/** A tool server's prompt, filled in, for the composer. */
export class UsePromptEvent extends Event {
  static readonly type = 'skald-use-prompt';
  constructor(readonly text: string) {
    super(UsePromptEvent.type, options);
  }
}

/** The tool servers' resources ticked for the next message. */
export class AttachEvent extends Event {
  static readonly type = 'skald-attach';
  constructor(readonly resources: readonly AttachedResource[]) {
    super(AttachEvent.type, options);
  }
}

/** Open a conversation (from the list, the inbox, a notification). */
export class OpenSessionEvent extends Event {
  static readonly type = 'skald-open-session';
  constructor(readonly sessionId: string) {
    super(OpenSessionEvent.type, options);
  }
}

/** Start a new conversation; a `temporary` one reads and keeps no memory and is deleted when left. */
export class NewChatEvent extends Event {
  static readonly type = 'skald-new-chat-request';
  constructor(readonly temporary = false) {
    super(NewChatEvent.type, options);
  }
}

/** A conversation was created or changed in a way the list shows (title, state). */
export class SessionChangedEvent extends Event {
  static readonly type = 'skald-session-changed';
  constructor(readonly session: Conversation | null) {
    super(SessionChangedEvent.type, options);
  }
}

/** The person asked to lock (the workspace's Lock, or Lock now on the privacy page). */
export class LockEvent extends Event {
  static readonly type = 'skald-lock';
  constructor() {
    super(LockEvent.type, options);
  }
}

/**
 * The person's space has a new key (§6.2): every session of theirs ended, and `unlocked`
 * is the new one, with the new recovery code to show once before going on.
 */
export class KeyRotatedEvent extends Event {
  static readonly type = 'skald-key-rotated';
  constructor(readonly unlocked: Unlocked) {
    super(KeyRotatedEvent.type, options);
  }
}

/** The person deleted their own account: the session is gone with it. */
export class AccountDeletedEvent extends Event {
  static readonly type = 'skald-account-deleted';
  constructor() {
    super(AccountDeletedEvent.type, options);
  }
}

declare global {
  interface HTMLElementEventMap {
    [SignedInEvent.type]: SignedInEvent;
    [DecideEvent.type]: DecideEvent;
    [AnswerEvent.type]: AnswerEvent;
    [FormReplyEvent.type]: FormReplyEvent;
    [UsePromptEvent.type]: UsePromptEvent;
    [AttachEvent.type]: AttachEvent;
    [OpenSessionEvent.type]: OpenSessionEvent;
    [NewChatEvent.type]: NewChatEvent;
    [SessionChangedEvent.type]: SessionChangedEvent;
    [AccountDeletedEvent.type]: AccountDeletedEvent;
    [KeyRotatedEvent.type]: KeyRotatedEvent;
    [LockEvent.type]: LockEvent;
  }
}
