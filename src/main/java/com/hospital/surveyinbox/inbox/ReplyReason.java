package com.hospital.surveyinbox.inbox;

/** Why the legacy system gets a failure reply ({@code reasonCode} of CONTRACT §3). */
public enum ReplyReason {
    /** The row went DEAD; the reason is its last failure. */
    DEAD,
    /** A SEND completed with alimtalkYn=N: the questionnaire exists but nobody was notified. */
    NOTIFY_SKIPPED,
    /** A resend was refused because the questionnaire was already submitted. */
    ALREADY_SUBMITTED
}
